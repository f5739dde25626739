// The local index as a source: SEARCH_DATA indexed at start, rebuilt when its files change (the
// old index answers until the new one is ready), every query type answered, every type produced.
import { watch, type FSWatcher } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { CountryCode } from 'libphonenumber-js';
import type { Logger } from '../../../shared/log.ts';
import { problemLogger } from '../index/file-tally.ts';
import { LocalIndex, type IndexStats } from '../index/local-index.ts';
import { SIDECAR_SUFFIX, type DataSource } from '../index/source-facts.ts';
import { SEARCH_TYPES, type TypedValue } from '../types.ts';
import type { SearchSource, SourceAnswer, SourceRequest } from './source.ts';

const REBUILD_DELAY_MS = 300;

/** The last build attempt: when, and why it failed (the previous index then still answers). */
export interface RebuildReport { at: string; ok: boolean; error: string | null }

export class LocalIndexSource implements SearchSource {
  readonly id = 'local_index';
  readonly description = 'Records from the operator\'s own data files (SEARCH_DATA), indexed by every typed value they hold';
  readonly answers = SEARCH_TYPES;
  readonly produces = SEARCH_TYPES;
  readonly patterns = true;
  private readonly dataPath: string | null;
  private readonly region: CountryCode;
  private readonly log: Logger;
  private index: LocalIndex | null = null;
  private lastRebuild: RebuildReport | null = null;
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private rebuilding: Promise<void> | null = null;
  private changedDuringRebuild = false;

  constructor(dataPath: string | null, region: CountryCode, log: Logger) {
    this.dataPath = dataPath ? path.resolve(dataPath) : null;
    this.region = region;
    this.log = log;
  }

  /**
   * Builds the first index and starts watching. A SEARCH_DATA that does not exist fails the
   * start; bad rows and files inside it are skipped and reported.
   */
  async open(): Promise<void> {
    if (!this.dataPath) return;
    this.index = await this.build();
    this.lastRebuild = { at: this.index.stats.built_at, ok: true, error: null };
    this.logBuilt('search index built');
    this.watch((await fs.stat(this.dataPath)).isDirectory());
  }

  /** The index statistics with each data file's counts and the last build attempt. */
  get stats(): (IndexStats & { last_rebuild: RebuildReport | null }) | null {
    return this.index ? { ...this.index.stats, last_rebuild: this.lastRebuild } : null;
  }

  private build(): Promise<LocalIndex> {
    return LocalIndex.build(this.dataPath!, { region: this.region, onProblem: problemLogger(this.log) });
  }

  private logBuilt(msg: string): void {
    const { data_files, problems: _problems, ...totals } = this.index!.stats;
    this.log.info(msg, { ...totals, region: this.region });
    for (const file of data_files) {
      if (file.rows_skipped || file.values_rejected || file.last_error) this.log.warn('search data file has problems', { ...file });
    }
  }

  unavailable(): string | null {
    if (!this.dataPath) return 'SEARCH_DATA is not set';
    return this.index ? null : 'the index is not built';
  }

  /** A rebuild numbers rows afresh: its time names the data. */
  dataVersion(): string | null {
    return this.index?.stats.built_at ?? null;
  }

  async search(query: TypedValue, request: SourceRequest): Promise<SourceAnswer> {
    const { hits, total, totalCapped } = this.index!.find(query, request.limit, request.offset);
    return {
      records: hits.map((h) => ({ source: this.id, kind: 'record', ref: h.ref, fields: h.record, entities: h.entities, origin: h.origin })),
      total,
      ...(totalCapped ? { totalCapped } : {}),
    };
  }

  /** The data sources of the index built now (GET /v1/search/sources); empty before the first build. */
  async dataSources(): Promise<DataSource[]> {
    return this.index?.dataSources() ?? [];
  }

  close(): void {
    this.watcher?.close();
    if (this.timer) clearTimeout(this.timer);
  }

  private watch(isFolder: boolean): void {
    const target = this.dataPath!;
    // A single file is watched through its folder: editors and atomic writers replace the file,
    // which ends a watch on the file itself.
    const folder = isFolder ? target : path.dirname(target);
    const name = path.basename(target);
    this.watcher = watch(folder, { recursive: isFolder, persistent: false }, (_event, file) => {
      if (isFolder || file === null || file === name || file === `${name}${SIDECAR_SUFFIX}`) this.scheduleRebuild();
    });
    this.watcher.on('error', (err) => this.log.warn('search data watch failed; changes are not picked up', { err: err.message }));
  }

  private scheduleRebuild(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.rebuilding) {
        this.changedDuringRebuild = true;
        return;
      }
      this.rebuilding = this.rebuild().finally(() => {
        this.rebuilding = null;
        if (this.changedDuringRebuild) {
          this.changedDuringRebuild = false;
          this.scheduleRebuild();
        }
      });
    }, REBUILD_DELAY_MS);
    this.timer.unref();
  }

  private async rebuild(): Promise<void> {
    try {
      this.index = await this.build();
      this.lastRebuild = { at: this.index.stats.built_at, ok: true, error: null };
      this.logBuilt('search index rebuilt');
    } catch (err) {
      this.lastRebuild = { at: new Date().toISOString(), ok: false, error: (err as Error).message };
      this.log.warn('search index rebuild failed; the previous index stays', { err: (err as Error).message });
    }
  }
}
