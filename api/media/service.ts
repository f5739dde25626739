// Composition of the media service: settings, the library (sample when MEDIA_DIR is missing),
// its scanner and watcher (indexing in the background), private access, the call counter and
// the Koa app.
import { randomBytes } from 'node:crypto';
import type { Logger } from '../../shared/log.ts';
import { createHttpApp } from '../http/app.ts';
import { localizedErrorEnvelope } from '../http/envelope.ts';
import type { Service, SharedDeps } from '../service.ts';
import { PrivateAccess } from './access.ts';
import type { MediaSettings } from './config.ts';
import { createCallCounter, type CallCounter } from './counter.ts';
import { Library } from './library.ts';
import { hashedPasswordVerifier, plainPasswordVerifier, type PasswordVerifier } from './password.ts';
import { MEDIA_ROUTES } from './routes.ts';
import { tableRouter } from '../http/route-table.ts';
import { ensureMediaDir } from './sample-library.ts';
import { LibraryScanner } from './scanner.ts';
import { StickyPicks } from './sticky.ts';
import { VariantMaker } from './variants.ts';
import { TokenSigner } from './token.ts';
import { LibraryWatcher } from './watcher.ts';
import { gaugeFrom } from '../metrics.ts';
import type { ReadinessCheck } from '../readiness.ts';
import { VERSION } from '../version.ts';

/** Clients whose random pick is remembered at once (about 100 bytes each). */
const MAX_STICKY_CLIENTS = 50_000;

/** Degraded while part of the library cannot be read: it is served without it (critical: no, every instance reads the same disk). */
function libraryCheck(library: Library): ReadinessCheck {
  return {
    name: 'media_library',
    critical: false,
    run() {
      const { files, categories } = library.unreadableCounts();
      if (!files && !categories) return { status: 'ok', detail: `${library.size} files` };
      return { status: 'degraded', detail: `cannot read ${files} files and ${categories} categories (see the log)` };
    },
  };
}

function passwordVerifier(settings: MediaSettings, log: Logger): PasswordVerifier | null {
  if (settings.passwordHash) {
    if (settings.password) log.warn('both MEDIA_PASSWORD and MEDIA_PASSWORD_HASH are set; the hash is used');
    return hashedPasswordVerifier(settings.passwordHash);
  }
  return settings.password ? plainPasswordVerifier(settings.password) : null;
}

export async function createMediaService(deps: SharedDeps): Promise<Service> {
  const { log } = deps;
  const settings = deps.config.media;
  await ensureMediaDir(settings.dir, log);

  const verifier = passwordVerifier(settings, log);
  const library = new Library();
  const scanner = new LibraryScanner(settings.dir, library, log);
  const watcher = new LibraryWatcher(scanner, log, { rescanSeconds: settings.rescanSeconds });
  // The port opens while the library is indexed: categories answer as soon as each is read whole.
  const started = performance.now();
  library.indexing = true;
  void watcher.start().then(() => {
    library.indexing = false;
    log.info('media library indexed', { dir: settings.dir, categories: library.categories().length, files: library.size, unreadable: library.unreadableCounts(), ms: Math.round(performance.now() - started) });
    if (!verifier && library.categories().some((c) => c.meta.private)) {
      log.warn('private media categories exist but MEDIA_PASSWORD is not set: they cannot be opened');
    }
  });

  if (!settings.secret) log.warn('SESSION_SECRET is not set: media tokens are signed with a random key and end at restart');
  const secret = settings.secret ? Buffer.from(settings.secret, 'utf8') : randomBytes(32);
  const signer = new TokenSigner(secret, verifier?.fingerprint ?? 'no-password');
  const access = new PrivateAccess({ verifier, signer, limiter: deps.limiter, tokenTtlSeconds: settings.tokenTtlSeconds, failuresPerHour: settings.passwordFailuresPerHour });
  const counter: CallCounter = await createCallCounter(deps.redis, settings.dataDir, log);
  gaugeFrom('skinfarm_media_unreadable_files', 'Media files the service cannot read (left out of picks and counts)', () => library.unreadableCounts().files);
  gaugeFrom('skinfarm_media_unreadable_categories', 'Media categories whose directory or category.json the service cannot read', () => library.unreadableCounts().categories);
  gaugeFrom('skinfarm_media_unsaved_calls', 'Media calls counted but not stored yet (Redis or DATA_DIR failing)', () => counter.unsaved());
  deps.readiness.add(libraryCheck(library));

  const { app, routes } = createHttpApp({ service: 'media', log, config: deps.config, formatError: localizedErrorEnvelope, readiness: deps.readiness, limiter: deps.limiter });
  const sticky = new StickyPicks(settings.stickySeconds, MAX_STICKY_CLIENTS);
  const variants = new VariantMaker(settings, deps.limiter);
  routes.mount(tableRouter(MEDIA_ROUTES, { library, scanner, access, counter, settings, sticky, variants, version: VERSION, site: deps.config }, deps));

  return {
    app,
    async close() {
      await watcher.close();
      await counter.close();
    },
  };
}
