// Work that takes a core for tenths of a second (image encodes), shared fairly between clients:
// at most `slots` jobs run at once and at most one of each client, and a freed slot goes to the
// next client in turn (round-robin), not to the oldest job. A client with a hundred jobs queued
// waits behind its own jobs; another client's one job waits for at most one job of each client
// ahead of it. In `shared/` so the render farm can queue the same way.

export class FairQueue {
  private readonly slots: number;
  private readonly maxWaiting: number;
  private readonly full: () => Error;
  /** Clients with a job running. */
  private readonly busy = new Set<string>();
  /** Each client's waiting jobs, clients in turn order (Map order): a client served goes to the back. */
  private readonly turns = new Map<string, Array<() => void>>();
  private waitingJobs = 0;

  /** `full` makes the error a job gets when `maxWaiting` jobs are waiting already. */
  constructor(slots: number, maxWaiting: number, full: () => Error) {
    this.slots = slots;
    this.maxWaiting = maxWaiting;
    this.full = full;
  }

  get running(): number {
    return this.busy.size;
  }

  get waiting(): number {
    return this.waitingJobs;
  }

  /**
   * Runs `job` for `client` when its turn comes (at once, in this call, when it may start);
   * rejects with `full()` when `maxWaiting` jobs are waiting.
   */
  run<T>(client: string, job: () => Promise<T>): Promise<T> {
    let turn: Promise<void> | undefined;
    try {
      turn = this.enter(client);
    } catch (error) {
      return Promise.reject(error);
    }
    return turn ? turn.then(() => this.runNow(client, job)) : this.runNow(client, job);
  }

  private async runNow<T>(client: string, job: () => Promise<T>): Promise<T> {
    try {
      return await job();
    } finally {
      this.busy.delete(client);
      // Just served: its next job waits behind every other client's.
      const jobs = this.turns.get(client);
      if (jobs) {
        this.turns.delete(client);
        this.turns.set(client, jobs);
      }
      this.dispatch();
    }
  }

  private enter(client: string): Promise<void> | undefined {
    // A free slot with jobs waiting means every waiting client has one running: a new one may start.
    if (this.busy.size < this.slots && !this.busy.has(client)) {
      this.busy.add(client);
      return undefined;
    }
    if (this.waitingJobs >= this.maxWaiting) throw this.full();
    this.waitingJobs += 1;
    return new Promise((resolve) => {
      const jobs = this.turns.get(client);
      if (jobs) jobs.push(resolve);
      else this.turns.set(client, [resolve]);
    });
  }

  /** Starts waiting jobs while slots are free: the first client in turn with none running. */
  private dispatch(): void {
    while (this.busy.size < this.slots) {
      let next: string | undefined;
      for (const client of this.turns.keys()) {
        if (!this.busy.has(client)) {
          next = client;
          break;
        }
      }
      if (next === undefined) return;
      const jobs = this.turns.get(next)!;
      const start = jobs.shift()!;
      if (jobs.length === 0) this.turns.delete(next);
      this.waitingJobs -= 1;
      this.busy.add(next);
      start();
    }
  }
}
