// Processes as /proc shows them: a process tree (a browser and its zygotes, GPU, network and
// renderer processes) and the TCP ports a process listens on.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface Proc { pid: number; ppid: number; start: string; state: string; cmd: string }

export function readProc(pid: number): Proc | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    return { pid, ppid: Number(fields[1]), start: fields[19], state: fields[0], cmd };
  } catch {
    return null;
  }
}

export function processes(): Proc[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).flatMap((name) => readProc(Number(name)) ?? []);
}

/** Every process under `root` (by parent links), not `root` itself. */
export function descendants(root: number, all = processes()): Proc[] {
  const found: Proc[] = [];
  const parents = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) {
      if (parents.has(p.ppid) && !parents.has(p.pid)) {
        parents.add(p.pid);
        found.push(p);
        grew = true;
      }
    }
  }
  return found;
}

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
