// Structured JSON-line logs on stdout, one object per event; LOG_LEVEL filters.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(bindings: Record<string, unknown>): Logger;
}

function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  return { name: error.name, message: error.message, stack: error.stack, cause: error.cause ? serializeError(error.cause) : undefined };
}

export function createLogger(level: LogLevel = 'info', bindings: Record<string, unknown> = {},
  write: (line: string) => void = (line) => process.stdout.write(line)): Logger {
  const min = LEVELS[level];
  const emit = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return;
    const entry: Record<string, unknown> = { time: new Date().toISOString(), level: lvl, msg, ...bindings };
    if (fields) for (const [k, v] of Object.entries(fields)) entry[k] = k === 'err' ? serializeError(v) : v;
    write(`${JSON.stringify(entry)}\n`);
  };
  return {
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
    child: (more) => createLogger(level, { ...bindings, ...more }, write),
  };
}

/** For tests and tools that want no output. */
export const silentLogger: Logger = createLogger('error', {}, () => {});
