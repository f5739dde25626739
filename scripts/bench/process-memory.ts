// Memory and CPU time of a process and its descendants from /proc (Linux): RSS and PSS from
// smaps_rollup, user + system time from stat, each process put in a group (the API itself;
// Chromium's browser, GPU, renderer and other processes).
import { readdirSync, readFileSync } from 'node:fs';

export const GROUPS = ['api', 'browser', 'gpu', 'renderer', 'other'] as const;
export type Group = (typeof GROUPS)[number];
export interface ProcessMemory { pid: number; group: Group; rssKb: number; pssKb: number }
export interface ProcessCpu { pid: number; group: Group; seconds: number }
/** A thread's CPU seconds, named as the kernel names it (`MainThread`, `V8Worker`, `Chrome_IOThread`…). */
export interface ThreadCpu extends ProcessCpu { tid: number; thread: string }

/** The command name (field 2) and the fields from the state on (field 3 is [0]) of a stat file, or null when it is gone. */
function readStat(file: string): { name: string; fields: string[] } | null {
  try {
    // The command name may hold spaces and parentheses: the fields are after the last ')'.
    const stat = readFileSync(file, 'utf8');
    return { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), fields: stat.slice(stat.lastIndexOf(')') + 2).split(' ') };
  } catch {
    return null;
  }
}

/** Fields of /proc/<pid>/stat from the state on (field 3 is [0]), or null when the process is gone. */
function statFields(pid: number | 'self'): string[] | null {
  return readStat(`/proc/${pid}/stat`)?.fields ?? null;
}

function parentOf(pid: number): number | null {
  const fields = statFields(pid);
  return fields ? Number(fields[1]) : null;
}

/** Linux reports CPU time in USER_HZ ticks, 100 a second on every architecture it ships for. */
const TICKS_PER_SECOND = 100;

/** User + system CPU seconds (fields 14 and 15) of a stat file's fields. */
const userAndSystem = (fields: string[]) => (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;

/** User + system CPU seconds of a process, all its threads; null when gone. */
export function cpuSeconds(pid: number | 'self'): number | null {
  const fields = statFields(pid);
  return fields ? userAndSystem(fields) : null;
}

/** CPU seconds of the children this process has waited for (fields 16 and 17): wrk, once it exits. */
export function reapedChildrenCpuSeconds(): number {
  const fields = statFields('self')!;
  return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND;
}

/** `root` and every process below it. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const parent = parentOf(pid);
    if (parent !== null) children.set(parent, [...(children.get(parent) ?? []), pid]);
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]) ?? []));
  return tree;
}

/**
 * Chromium's process type is its --type= switch; the browser process has none. Chromium rewrites
 * its command line with spaces between the arguments, so both separators count.
 */
export function groupOf(pid: number, root: number, cmdline: string): Group {
  if (pid === root) return 'api';
  const type = /(?:^|[\0 ])--type=([a-z-]+)/.exec(cmdline)?.[1];
  if (type === 'gpu-process') return 'gpu';
  if (type === 'renderer') return 'renderer';
  const program = cmdline.split(/[\0 ]/)[0];
  if (type === undefined && /chrom/i.test(program) && !/crashpad/i.test(program)) return 'browser';
  return 'other';
}

function smapsRollup(pid: number): { rssKb: number; pssKb: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
    return { rssKb: field('Rss'), pssKb: field('Pss') };
  } catch {
    return null;
  }
}

/** `read` of every process in the tree under `root` with its pid and group; those that exit meanwhile are left out. */
function eachInTree<T extends object>(root: number, read: (pid: number) => T | null): Array<T & { pid: number; group: Group }> {
  const out: Array<T & { pid: number; group: Group }> = [];
  for (const pid of processTree(root)) {
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    const value = read(pid);
    if (value) out.push({ pid, group: groupOf(pid, root, cmdline), ...value });
  }
  return out;
}

/** One sample of every process in the tree under `root`. */
export function sampleTree(root: number): ProcessMemory[] {
  return eachInTree(root, smapsRollup);
}

/** CPU seconds so far of every process in the tree under `root`, by pid. */
export function cpuOfTree(root: number): ProcessCpu[] {
  return eachInTree(root, (pid) => {
    const seconds = cpuSeconds(pid);
    return seconds === null ? null : { seconds };
  });
}

/** CPU seconds so far of every thread of every process in the tree under `root`. */
export function threadCpuOfTree(root: number): ThreadCpu[] {
  return eachInTree(root, (pid) => {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      return null;
    }
    return {
      threads: tids.flatMap((tid) => {
        const stat = readStat(`/proc/${pid}/task/${tid}/stat`);
        return stat ? [{ tid: Number(tid), thread: stat.name, seconds: userAndSystem(stat.fields) }] : [];
      }),
    };
  }).flatMap(({ pid, group, threads }) => threads.map((t) => ({ pid, group, ...t })));
}

/**
 * CPU seconds of each `group:thread` name between two readings of threadCpuOfTree: threads of one
 * name summed, one new meanwhile counted from zero, one ended not at all.
 */
export function threadSecondsBetween(before: ThreadCpu[], after: ThreadCpu[]): Map<string, number> {
  const start = new Map(before.map((t) => [`${t.pid}/${t.tid}`, t.seconds]));
  const out = new Map<string, number>();
  for (const t of after) {
    const key = `${t.group}:${t.thread}`;
    out.set(key, (out.get(key) ?? 0) + t.seconds - (start.get(`${t.pid}/${t.tid}`) ?? 0));
  }
  return out;
}

/** CPU seconds of several process trees (roots that are gone read as nothing). */
export function cpuOfTrees(roots: number[]): ProcessCpu[] {
  return roots.flatMap((root) => cpuOfTree(root));
}

/** CPU seconds used between two readings, in all, per pid: a process new meanwhile counts from zero, one ended not at all. */
export function cpuSecondsBetween(before: ProcessCpu[], after: ProcessCpu[]): number {
  const start = new Map(before.map((p) => [p.pid, p.seconds]));
  return after.reduce((sum, p) => sum + p.seconds - (start.get(p.pid) ?? 0), 0);
}

/**
 * Cores each group used between two readings of cpuOfTree: per pid, so a process that started
 * meanwhile counts from zero and one that ended counts not at all.
 */
export function coresBetween(before: ProcessCpu[], after: ProcessCpu[], seconds: number): Record<Group, number> {
  const start = new Map(before.map((p) => [p.pid, p.seconds]));
  const out = Object.fromEntries(GROUPS.map((g) => [g, 0])) as Record<Group, number>;
  for (const p of after) out[p.group] += (p.seconds - (start.get(p.pid) ?? 0)) / seconds;
  return out;
}
