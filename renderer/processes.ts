// Processes as /proc shows them: a browser's tree (its zygotes, GPU, network and renderer
// processes), and whether a process seen once still runs. The farm checks its pages' GPU process
// with these; tests find the processes to kill with them.
import { existsSync, readdirSync, readFileSync } from 'node:fs';

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

/** The same process (pid and start time) still running; a zombie has ended. */
export function stillRunning(p: Proc): boolean {
  const now = readProc(p.pid);
  return now !== null && now.start === p.start && now.state !== 'Z' && now.state !== 'X';
}

/** Without /proc (not Linux) no process can be seen: this one stands for a GPU process that never changes. */
const UNSEEN: Proc = { pid: 0, ppid: 0, start: '', state: 'R', cmd: '' };
const PROC = existsSync('/proc/self/stat');

/**
 * The GPU process of the browser `browserPid` (every WebGL context of its pages lives there), or
 * null while it has none (between one ending and the browser starting the next).
 */
export function gpuProcess(browserPid: number): Proc | null {
  if (!PROC) return UNSEEN;
  return descendants(browserPid).find((p) => p.cmd.includes('--type=gpu-process')) ?? null;
}

/** Whether the GPU process seen before still runs (always, where processes cannot be seen). */
export function gpuStillRunning(gpu: Proc): boolean {
  return gpu === UNSEEN || stillRunning(gpu);
}
