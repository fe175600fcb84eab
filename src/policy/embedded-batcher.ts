/**
 * Gathers the requests that many concurrent callers (episodes) submit in the same event-loop turn,
 * up to a row budget, and runs them as one batch; a bounded number of batches run at once, the
 * rest wait in order. One decode over 32 rows costs far less than 32 decodes over one.
 */

export type BatcherOptions<Req> = {
  /** Rows a batch may hold (a request with n samples counts n); a bigger request runs alone. */
  maxRows: number;
  /** Batches in flight at once (a new batch can start while a long one is still decoding). */
  maxConcurrent: number;
  rowsOf: (request: Req) => number;
};

type Pending<Req, Res> = { request: Req; resolve: (value: Res) => void; reject: (error: unknown) => void };

export class RequestBatcher<Req, Res> {
  private queue: Pending<Req, Res>[] = [];
  private scheduled = false;
  private running = 0;
  private idleWaiters: (() => void)[] = [];
  /** Batch sizes run so far (requests per batch), for tests and metrics. */
  readonly batchSizes: number[] = [];

  constructor(
    private readonly runBatch: (requests: Req[]) => Promise<Res[]>,
    private readonly options: BatcherOptions<Req>,
  ) {
    if (!(options.maxRows >= 1)) throw new Error(`RequestBatcher: maxRows must be >= 1, got ${options.maxRows}`);
    if (!(options.maxConcurrent >= 1)) throw new Error(`RequestBatcher: maxConcurrent must be >= 1, got ${options.maxConcurrent}`);
  }

  submit(request: Req): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.schedule();
    });
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Resolves once nothing is queued or running. */
  idle(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // After the current turn's callbacks and microtasks: everything submitted alongside joins.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.running < this.options.maxConcurrent && this.queue.length > 0) {
      let rows = 0;
      let count = 0;
      while (count < this.queue.length) {
        const r = this.options.rowsOf(this.queue[count].request);
        if (count > 0 && rows + r > this.options.maxRows) break;
        rows += r;
        count++;
      }
      const batch = this.queue.splice(0, count);
      this.batchSizes.push(batch.length);
      this.running++;
      this.runBatch(batch.map((p) => p.request)).then(
        (results) => batch.forEach((p, i) => p.resolve(results[i])),
        (error: unknown) => batch.forEach((p) => p.reject(error)),
      ).finally(() => {
        this.running--;
        if (this.queue.length > 0) this.schedule();
        else if (this.running === 0) for (const wake of this.idleWaiters.splice(0)) wake();
      });
    }
  }
}
