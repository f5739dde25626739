// Summarises V8 CPU profiles (.cpuprofile, as `node --cpu-prof` writes them): self time by
// function and by package or file, heaviest first, one table per profile.
//
//   node scripts/bench/profile-summary.ts <dir or file...> [--top 25] [--last <seconds>]
// --last keeps the samples of a profile's final seconds only: a load test's measured runs, not
// the warming before them.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

/** Where a frame's code lives: a package name, a file of ours, or V8's own (GC, idle, program). */
export function placeOf(url: string): string {
  if (!url) return '(v8)';
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inModules) return inModules[1];
  if (url.startsWith('node:')) return url;
  const ours = /\/((?:api|renderer|shared|scripts)\/.*)$/.exec(url);
  return ours ? ours[1] : path.basename(url);
}

/** Self milliseconds per function and per place, from the samples and their time deltas. */
export function summarise(profile: Profile, lastSeconds = Infinity): { totalMs: number; functions: Map<string, number>; places: Map<string, number> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const functions = new Map<string, number>();
  const places = new Map<string, number>();
  let totalMs = 0;
  // Sample times: the start plus the deltas so far (microseconds).
  let at = profile.startTime;
  const from = profile.endTime - lastSeconds * 1e6;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (at < from) return;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') return;
    totalMs += ms;
    const place = placeOf(frame.url);
    const name = `${frame.functionName || '(anonymous)'} ${place}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + ms);
    places.set(place, (places.get(place) ?? 0) + ms);
  });
  return { totalMs, functions, places };
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' }, last: { type: 'string' } } });
  const top = Number(values.top);
  const files = positionals.flatMap((p) => (statSync(p).isDirectory()
    ? readdirSync(p).filter((f) => f.endsWith('.cpuprofile')).map((f) => path.join(p, f))
    : [p]));
  if (files.length === 0) throw new Error('usage: profile-summary.ts <dir or .cpuprofile file...> [--top 25]');
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
    const last = values.last === undefined ? Infinity : Number(values.last);
    const { totalMs, functions, places } = summarise(profile, last);
    const wallMs = Math.min(profile.endTime - profile.startTime, last * 1e6) / 1000;
    console.log(`\n## ${path.basename(file)}: ${Math.round(totalMs)} ms busy of ${Math.round(wallMs)} ms\n`);
    const table = (title: string, m: Map<string, number>) => {
      console.log(`| ${title} | self ms | % of busy |\n|---|---|---|`);
      for (const [k, ms] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`| ${k} | ${Math.round(ms)} | ${((ms / totalMs) * 100).toFixed(1)} |`);
      console.log('');
    };
    table('place', places);
    table('function', functions);
  }
}
