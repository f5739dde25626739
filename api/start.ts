// The service as `npm start` runs it (after api/main.ts): configuration from the environment, then the services.
import { currentAllocator } from '../shared/allocator.ts';
import './v8-flags.ts';
import { createLogger } from '../shared/log.ts';
import { banner } from './banner.ts';
import { bootLogFormat, ConfigError, loadConfig } from './config.ts';
import { RedisUnreachable } from './redis.ts';
import { PortUnavailable, startServices, type RunningServices } from './server.ts';

// Before the configuration is read, LOG_FORMAT is taken when it names a format.
const bootLog = createLogger('info', {}, undefined, bootLogFormat());
let config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    bootLog.error(error.message, { problems: error.problems });
    process.exit(78);
  }
  throw error;
}
const log = createLogger(config.logLevel, {}, undefined, config.logFormat);
if (!config.sessionSecret) log.warn('SESSION_SECRET is not set: sessions are signed with a random key and end at restart');

/** A stop that takes longer than this (grace for requests, then closing) is cut short. */
const STOP_DEADLINE_MS = 30_000;

// Signals are handled from the first moment: one during start-up stops it, and the start closes
// what it had started. Browsers cannot outlive this process anyway (renderer/browser.ts), but a
// clean stop also removes their profiles and drains requests.
const stop = new AbortController();
let running: RunningServices | null = null;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, async () => {
    if (stop.signal.aborted) return;
    stop.abort(new Error(`stopped by ${signal}`));
    log.info('shutting down', { signal, starting: running === null });
    setTimeout(() => {
      log.error('stop took too long; exiting');
      process.exit(1);
    }, STOP_DEADLINE_MS).unref();
    if (!running) return;
    await running.close();
    process.exit(0);
  });
}

try {
  running = await startServices(config, log, stop.signal);
} catch (error) {
  if (stop.signal.aborted) {
    log.info('stopped during start-up');
    process.exit(0);
  }
  // One log line, then the exit code. A port in use or an absent Redis is told by its message,
  // which names the setting to change: a stack would only bury it. Anything else (a render farm
  // that cannot start, a bug) keeps its stack for whoever looks into it.
  const explained = error instanceof PortUnavailable || error instanceof RedisUnreachable;
  log.error('start-up failed', explained ? { reason: error.message } : { err: error });
  process.exit(1);
}
log.info('ready', { ports: running.ports, allocator: currentAllocator() });
if (config.logFormat === 'pretty') process.stdout.write(`${banner(config, running.ports)}\n`);
