// Processes as /proc shows them (the renderer's own reading: a process tree, a browser and its
// zygotes, GPU, network and renderer processes) and the TCP ports a process listens on.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export { descendants, processes, readProc, stillRunning, type Proc } from '../../renderer/processes.ts';

/** The inodes of the sockets process `pid` has open. */
function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        if (inode) inodes.add(inode);
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    // the process ended
  }
  return inodes;
}

/**
 * The TCP sockets (IPv4 and IPv6) that process `pid` holds in the LISTEN state (0A), as the local
 * address /proc/<pid>/net/tcp* writes it (hex ip:port), read in the process's own network namespace.
 */
export function tcpListeners(pid: number): string[] {
  const inodes = socketInodes(pid);
  return ['tcp', 'tcp6'].flatMap((table) => {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      return [];
    }
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
    return text.split('\n').slice(1).map((line) => line.trim().split(/\s+/))
      .filter((fields) => fields[3] === '0A' && inodes.has(fields[9])).map((fields) => fields[1]);
  });
}
