// The render farm's own errors, with stable kinds; the API maps them to HTTP in one place
// (api/http/errors.ts). Messages come in English and Chinese, as the API's error bodies do.

export type RenderErrorKind =
  /** The queue is full: try again shortly. */
  | 'queue_full'
  /** The farm is closing or closed. */
  | 'closed'
  /** The job was not answered within its time. */
  | 'timeout'
  /** The page or browser failed on the job twice. */
  | 'crashed'
  /** The page could not draw the job. */
  | 'failed'
  /** The skin or cape file is not one. */
  | 'invalid_texture'
  /** No browser runs (none could be started): refused at once, not after a timeout. */
  | 'unavailable'
  /**
   * A farm over a broker (renderer/queue/) has no render node to take the job: none reports or
   * consumes the queue, or the broker cannot be reached (jobs waiting on a lost connection too).
   * Refused at once, not after a timeout.
   */
  | 'unreachable';

export interface RenderErrorOptions { zh?: string; retryAfterSeconds?: number; cause?: unknown }

export class RenderError extends Error {
  readonly kind: RenderErrorKind;
  /** The message in Chinese (the English one is `message`). */
  readonly zh: string;
  readonly retryAfterSeconds: number | undefined;

  constructor(kind: RenderErrorKind, message: string, options: RenderErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'RenderError';
    this.kind = kind;
    this.zh = options.zh ?? message;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** A RenderFarmConfig option out of its range; the message names the option, as piscina's do. */
export class RenderFarmConfigError extends Error {
  constructor(option: string, expected: string, got: unknown) {
    super(`RenderFarmConfig.${option} must be ${expected} (got ${JSON.stringify(got)})`);
    this.name = 'RenderFarmConfigError';
  }
}
