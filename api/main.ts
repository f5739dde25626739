// Entry point of `npm start`: configuration from the environment, then the services.
import './v8-flags.ts';
import { createLogger } from '../shared/log.ts';
import { ConfigError, loadConfig } from './config.ts';
import { startServices } from './server.ts';

const bootLog = createLogger();
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
const log = createLogger(config.logLevel);
if (!config.sessionSecret) log.warn('SESSION_SECRET is not set: sessions are signed with a random key and end at restart');

let running: Awaited<ReturnType<typeof startServices>>;
try {
  running = await startServices(config, log);
} catch (error) {
  // e.g. a port in use or a render farm that cannot start: one log line, then the exit code.
  log.error('start-up failed', { err: error });
  process.exit(1);
}
log.info('ready', { ports: running.ports });

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    await running.close();
    process.exit(0);
  });
}
