// V8 settings for a request server; imported first by start.ts so they hold before anything runs.
// Allocation-site pretenuring: under the mixed embed load V8 judged per-request objects (Koa's
// header arrays, on-finished listeners) long-lived and allocated them straight in the old
// generation, where they died by the megabyte: 10-25 ms scavenges and a major GC every 3 s.
// Without it the same run spent 278 ms in scavenges instead of 754 ms (docs/benchmarks.md).
import v8 from 'node:v8';

v8.setFlagsFromString('--no-allocation-site-pretenuring');
