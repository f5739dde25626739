// Player lookup across sources with caching (fresh, stale when the upstream fails or is slow,
// negative), one upstream call per key at a time, and the `source=auto` rule: official first,
// external when official says the player does not exist, or when official fails and external
// knows the player; a Floodgate UUID or a name with the Bedrock prefix goes to bedrock alone.
// A texture id asks no source at all: its profile is made here (texture-id.ts).
import { ApiError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import type { Cache, CacheNamespace } from '../cache.ts';
import { ReadThrough } from '../read-through.ts';
import type { CacheState, NameHit, RawProfile, SourceId, SourceParam } from './types.ts';
import { NameBatcher } from './name-batcher.ts';
import type { BedrockSource } from './upstream/bedrock.ts';
import { EXTERNAL_BULK_LIMIT, type ExternalSource } from './upstream/external.ts';
import { OFFICIAL_BULK_LIMIT, type OfficialSource } from './upstream/official.ts';
import { TextureProfiles } from './texture-id.ts';
import { parseSubjectQuery, validName } from './validate.ts';

export type Source = OfficialSource | ExternalSource | BedrockSource;

/** A cached answer: the value, or null for "this source has no such player". */
type Cached<T> = T | null;

export interface Resolved<T> { value: T; source: SourceId; cache: CacheState }

export class Sources {
  readonly official: OfficialSource;
  readonly external: ExternalSource;
  readonly bedrock: BedrockSource;
  private readonly enabled: Record<SourceId, boolean>;

  constructor(official: OfficialSource, external: ExternalSource, bedrock: BedrockSource, enabled: Record<SourceId, boolean>) {
    this.official = official;
    this.external = external;
    this.bedrock = bedrock;
    this.enabled = enabled;
  }

  get(id: SourceId): Source {
    return this[id];
  }

  isEnabled(id: SourceId): boolean {
    return this.enabled[id];
  }

  /** Sources to ask, in order, for a `source` parameter. */
  order(param: SourceParam): Source[] {
    const ids: SourceId[] = param === 'auto' ? ['official', 'external', 'bedrock'] : [param];
    const usable = ids.filter((id) => this.enabled[id]);
    if (usable.length === 0) throw new ApiError('bad_source', { detail: { zh: `${param} 已停用`, en: `${param} is switched off` } });
    return usable.map((id) => this.get(id));
  }

  /** Whether `source` is asked about a name: under auto, a name with the Bedrock prefix is Bedrock's alone. */
  asksName(source: Source, name: string, param: SourceParam): boolean {
    const valid = source.id === 'bedrock' ? source.acceptsName(name) : validName(name, source.id);
    if (param !== 'auto') return valid;
    return valid && this.bedrock.claimsName(name) === (source.id === 'bedrock');
  }

  /** Whether `source` is asked about a UUID: under auto, a Floodgate UUID is Bedrock's alone. */
  asksUuid(source: Source, uuid: string, param: SourceParam): boolean {
    return param !== 'auto' || this.bedrock.claimsUuid(uuid) === (source.id === 'bedrock');
  }

  /** The sources to ask about a name or UUID, in order. */
  forName(name: string, param: SourceParam): Source[] {
    return this.order(param).filter((s) => this.asksName(s, name, param));
  }

  forUuid(uuid: string, param: SourceParam): Source[] {
    return this.order(param).filter((s) => this.asksUuid(s, uuid, param));
  }
}

export interface LookupOptions {
  /** Window in which single name lookups are merged into one bulk call (0 = off). */
  nameBatchMs: number;
  /** How long a failed upstream answer is remembered, so a failing upstream is not hammered. */
  errorTtlMs: number;
  /** How long a lookup with a stale entry waits for the upstream; then the entry answers and the call goes on. */
  staleWaitMs: number;
  /**
   * Asked (and may throw 429) before a lookup starts an upstream call of its own: charges the
   * request's client one uncached lookup (upstream/budget.ts). A cached or joined lookup costs nothing.
   */
  admit?: (family: string) => Promise<void>;
  /** OFFICIAL_TEXTURE_URL: where a texture asked for by its id is downloaded from (`{url}/{id}`). */
  officialTextureUrl: string;
}

export class PlayerLookup {
  readonly sources: Sources;
  private readonly batchers: Record<SourceId, Pick<NameBatcher, 'lookup'>>;
  private readonly names: ReadThrough<Cached<NameHit>>;
  private readonly profiles: ReadThrough<Cached<RawProfile>>;
  private readonly log: Logger;
  private readonly charge: ((family: string) => Promise<void>) | undefined;
  private readonly textureIds: TextureProfiles;

  constructor(sources: Sources, cache: Cache, log: Logger, options: LookupOptions) {
    this.sources = sources;
    this.charge = options.admit;
    this.textureIds = new TextureProfiles(options.officialTextureUrl);
    this.batchers = {
      official: new NameBatcher(sources.official, options.nameBatchMs, OFFICIAL_BULK_LIMIT),
      external: new NameBatcher(sources.external, options.nameBatchMs, EXTERNAL_BULK_LIMIT),
      // The Global API has no bulk lookup: one call per gamertag.
      bedrock: { lookup: (name) => sources.bedrock.nameToId(name) },
    };
    const readOptions = { errorTtlMs: options.errorTtlMs, staleWaitMs: options.staleWaitMs, negativeTtlSeconds: cache.ttl.negative, log };
    this.names = new ReadThrough(cache.namespace('uuid'), readOptions);
    this.profiles = new ReadThrough(cache.namespace('profile'), readOptions);
    this.log = log;
  }

  /** ReadThrough's admit for a lookup in one upstream endpoint family (charged to the client). */
  private admit(source: SourceId, lookups: 'names' | 'profiles'): { admit?: () => Promise<void> } {
    const charge = this.charge;
    return charge ? { admit: () => charge(`${source}.${lookups}`) } : {};
  }

  /** Name to UUID record; throws not_found when no asked source knows the name. */
  async resolveName(name: string, param: SourceParam): Promise<Resolved<NameHit>> {
    const sources = this.sources.forName(name, param);
    if (sources.length === 0) throw new ApiError('invalid_name', { detail: name.slice(0, 64) });
    return this.firstFound(sources, (source) =>
      this.names.get(`${source.id}:${name.toLowerCase()}`, () => this.batchers[source.id].lookup(name), this.admit(source.id, 'names')));
  }

  /**
   * One name in one source for a batch: the same cache, error memo, stale answer and coalescing
   * as a single lookup, with the names of one batch merged into bulk calls.
   */
  async nameIn(source: SourceId, name: string): Promise<Cached<NameHit>> {
    const answer = await this.names.get(`${source}:${name.toLowerCase()}`, () => this.batchers[source].lookup(name, true), this.admit(source, 'names'));
    return answer.value;
  }

  /** Session profile by UUID, from the first source that knows it. */
  async profile(uuid: string, param: SourceParam): Promise<Resolved<RawProfile>> {
    return this.firstFound(this.sources.forUuid(uuid, param), (source) =>
      this.profiles.get(`${source.id}:${uuid}`, () => source.profile(uuid), this.admit(source.id, 'profiles')));
  }

  /**
   * The profile of a name, UUID or texture id as typed by a client, with the source that answered.
   * A texture id is no player: it asks no source (whatever `source` says) and costs no budget.
   * The JSON lookups take players only (their `{name}` is route-params.ts playerPath).
   */
  async find(input: string | undefined, param: SourceParam): Promise<Resolved<RawProfile>> {
    const query = parseSubjectQuery(input);
    if (query.kind === 'texture') return { value: this.textureIds.profile(query.id), source: 'official', cache: 'HIT' };
    if (query.kind === 'uuid') return this.profile(query.uuid, param);
    const hit = await this.resolveName(query.name, param);
    const profile = await this.profile(hit.value.id, hit.value.source);
    return { ...profile, cache: hit.cache === 'MISS' || profile.cache === 'MISS' ? 'MISS' : profile.cache };
  }

  /**
   * find() answered from fresh in-process entries alone (no upstream, no await), or undefined
   * when it would need more; the caller then asks find(). Each namespace read is pushed to
   * `read`, for the caller to count as hits once it answers.
   */
  peek(input: string, param: SourceParam, read: CacheNamespace<unknown>[]): RawProfile | undefined {
    try {
      const query = parseSubjectQuery(input);
      if (query.kind === 'texture') return this.textureIds.profile(query.id);
      if (query.kind === 'uuid') return this.peekFirst(this.sources.forUuid(query.uuid, param), this.profiles, query.uuid, read);
      const named = this.sources.forName(query.name, param);
      const hit = this.peekFirst(named, this.names, query.name.toLowerCase(), read);
      return hit && this.peekFirst(this.sources.order(hit.source), this.profiles, hit.id, read);
    } catch {
      return undefined;
    }
  }

  /** firstFound() over fresh entries: undefined when one is missing or none knows the key. */
  private peekFirst<T>(sources: Source[], through: ReadThrough<Cached<T>>, key: string, read: CacheNamespace<unknown>[]): T | undefined {
    for (const source of sources) {
      const value = through.ns.peek(`${source.id}:${key}`);
      if (value === undefined) return undefined;
      read.push(through.ns as CacheNamespace<unknown>);
      if (value !== null) return value;
    }
    return undefined;
  }

  private async firstFound<T>(sources: Source[], ask: (source: Source) => Promise<{ value: Cached<T>; cache: CacheState }>): Promise<Resolved<T>> {
    let failure: unknown = null;
    for (const source of sources) {
      try {
        const answer = await ask(source);
        if (answer.value !== null) return { value: answer.value, source: source.id, cache: answer.cache };
      } catch (error) {
        // Remember the first failure; a later source may still know the player.
        failure ??= error;
        this.log.debug('source failed, trying next', { source: source.id, err: (error as Error).message });
      }
    }
    if (failure) throw failure;
    throw new ApiError('not_found');
  }
}
