// Structured logs on stdout, one event per line; LOG_LEVEL filters. JSON lines for machines (the
// default when stdout is not a terminal: tests and tools parse them), or `pretty` for a person at
// a terminal: time, level, where, message and the fields as key=value.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFormat = 'json' | 'pretty';
const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(bindings: Record<string, unknown>): Logger;
}

/** Pretty on a terminal, JSON lines anywhere else. */
export function defaultLogFormat(): LogFormat {
  return process.stdout.isTTY ? 'pretty' : 'json';
}

function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  return { name: error.name, message: error.message, stack: error.stack, cause: error.cause ? serializeError(error.cause) : undefined };
}

/**
 * Control characters (C0, DEL, C1) and the Unicode line separators: a terminal acts on them (an
 * escape sequence in a logged path would be run by the operator's terminal) and a line reader
 * splits at them (a forged log line). Logged text is the client's, so none is written as it is.
 */
const CONTROL = /[\p{Cc}\u2028\u2029]/gu;
/** Plain text: the characters a string may hold and still be written bare (no quotes, no escapes). */
const BARE = /^[^\s"=\\\p{Cc}\u2028\u2029]+$/u;

/** Every control character as its \uXXXX escape: inside a JSON string the same value, anywhere else plain text. */
const inert = (text: string) => text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** A field for a person: strings bare unless they need quotes, errors by their message. */
function prettyValue(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(`${value.name}: ${value.message}`);
  if (typeof value === 'string') return BARE.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

function prettyLine(time: Date, level: LogLevel, msg: string, bindings: Record<string, unknown>, fields: Record<string, unknown> = {}): string {
  const where = Object.values(bindings).join('/');
  const rest = Object.entries(fields).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${prettyValue(v)}`);
  // The message, the bindings and the keys too.
  return inert([time.toTimeString().slice(0, 8), level.toUpperCase().padEnd(5), where ? `${where}:` : '', msg, ...rest].filter(Boolean).join(' '));
}

export function createLogger(level: LogLevel = 'info', bindings: Record<string, unknown> = {},
  write: (line: string) => void = (line) => process.stdout.write(line), format: LogFormat = 'json'): Logger {
  const min = LEVELS[level];
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return;
    const time = new Date();
    if (format === 'pretty') {
      write(`${prettyLine(time, lvl, msg, bindings, fields)}\n`);
      return;
    }
    const entry: Record<string, unknown> = { time: time.toISOString(), level: lvl, msg, ...bindings };
    if (fields) for (const [k, v] of Object.entries(fields)) entry[k] = k === 'err' ? serializeError(v) : v;
    // JSON.stringify escapes C0 only; C1, DEL and U+2028/2029 can only be in its strings.
    write(`${inert(JSON.stringify(entry))}\n`);
  };
  return {
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
    child: (more) => createLogger(level, { ...bindings, ...more }, write, format),
  };
}

/** For tests and tools that want no output. */
export const silentLogger: Logger = createLogger('error', {}, () => {});
