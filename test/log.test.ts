// The logger writes what clients send (paths, names, details): no control character reaches the
// output as it is, in either format, so a logged escape sequence is never run by the operator's
// terminal and a logged line break never forges a line.
import test from 'ava';
import { createLogger, type LogFormat } from '../shared/log.ts';

/** C0 (line breaks, ESC, BEL), DEL, C1 (CSI U+009B, NEL U+0085) and the Unicode line separators. */
const HOSTILE = 'a\u001b[2J\u001b]0;owned\u0007\r\nINFO  forged line\u007f\u009b31m\u0085\u2028\u2029z';
const RAW_CONTROL = /[\p{Cc}\u2028\u2029]/u;

function logged(format: LogFormat): string[] {
  const lines: string[] = [];
  const log = createLogger('debug', { service: `skins${HOSTILE}` }, (line) => lines.push(line), format);
  log.child({ req: HOSTILE }).warn(`message ${HOSTILE}`, {
    path: `/v1/player/${HOSTILE}`,
    [`key${HOSTILE}`]: 1,
    detail: { zh: HOSTILE, en: [HOSTILE] },
    err: new Error(HOSTILE),
  });
  return lines;
}

for (const format of ['pretty', 'json'] as const) {
  test(`${format}: one line per event, no raw control character in it`, (t) => {
    const lines = logged(format);
    t.is(lines.length, 1);
    const [line] = lines;
    t.true(line.endsWith('\n'));
    t.false(RAW_CONTROL.test(line.slice(0, -1)), JSON.stringify(line));
    // Shown, not dropped: the operator still sees what was sent.
    t.true(line.includes('\\u001b[2J'));
    t.true(line.includes('\\u009b31m'));
  });
}

test('json: the escaped line still parses to the values logged', (t) => {
  const entry = JSON.parse(logged('json')[0]);
  t.like(entry, { level: 'warn', msg: `message ${HOSTILE}`, service: `skins${HOSTILE}`, req: HOSTILE, path: `/v1/player/${HOSTILE}`, [`key${HOSTILE}`]: 1, detail: { zh: HOSTILE, en: [HOSTILE] } });
  t.is(entry.err.message, HOSTILE);
});

test('pretty: plain values stay bare, anything with a control character or a backslash is quoted', (t) => {
  const lines: string[] = [];
  createLogger('info', { service: 'skins' }, (line) => lines.push(line), 'pretty').info('listening', { port: 8080, host: '127.0.0.1', path: 'a\u001bb', dir: 'C:\\u001b' });
  t.regex(lines[0], /^\d\d:\d\d:\d\d INFO  skins: listening port=8080 host=127\.0\.0\.1 path="a\\u001bb" dir="C:\\\\u001b"\n$/);
});
