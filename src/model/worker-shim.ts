/**
 * A browser-style `Worker` on top of node:worker_threads, just enough for jax-js's Wasm worker
 * pool: it is built from a `blob:` URL, talks through `onmessage` / `postMessage`, and is sent the
 * shared WebAssembly.Memory and compiled modules (both cloneable between Node threads).
 * Installed by initEngine only; never at import time.
 */
import { resolveObjectURL } from 'node:buffer';
import { Worker as NodeWorker } from 'node:worker_threads';

// Runs inside the thread: gives the browser worker globals the pool's script expects, then runs it.
const BOOTSTRAP = `
const { parentPort, workerData } = require('node:worker_threads');
globalThis.self = globalThis;
globalThis.postMessage = (message) => parentPort.postMessage(message);
parentPort.on('message', (data) => { if (typeof self.onmessage === 'function') self.onmessage({ data }); });
(0, eval)(workerData.source);
`;

type MessageHandler = ((event: { data: unknown }) => void) | null;
type ErrorHandler = ((event: { message: string }) => void) | null;

export class NodeWorkerShim {
  /** How many workers were started, so initEngine can check the pool really came up. */
  static started = 0;
  onmessage: MessageHandler = null;
  onerror: ErrorHandler = null;
  #thread: NodeWorker | null = null;
  #queued: unknown[] = [];
  #terminated = false;
  #awaiting = 0;

  constructor(url: string | URL) {
    const blob = resolveObjectURL(String(url));
    if (!blob) throw new Error(`worker shim: cannot resolve script URL ${String(url)}`);
    NodeWorkerShim.started++;
    // The pool waits for a 'ready' reply before dispatching, so messages can queue until the thread exists.
    blob.text().then(
      (source) => {
        if (this.#terminated) return;
        const thread = new NodeWorker(BOOTSTRAP, { eval: true, workerData: { source } });
        thread.on('message', (data: unknown) => {
          this.#settle();
          this.onmessage?.({ data });
        });
        thread.on('error', (err: Error) => this.onerror?.({ message: err.message }));
        this.#thread = thread;
        this.#syncRef();
        for (const message of this.#queued) thread.postMessage(message);
        this.#queued = [];
      },
      (err: unknown) => this.onerror?.({ message: `worker shim: cannot read script: ${String(err)}` }),
    );
  }

  postMessage(message: unknown): void {
    this.#awaiting++;
    this.#syncRef();
    if (this.#thread) this.#thread.postMessage(message);
    else this.#queued.push(message);
  }

  // The pool's script answers every message exactly once. The thread keeps the process alive only
  // while an answer is owed, so an idle pool never blocks exit and a busy one is never cut short.
  #settle(): void {
    this.#awaiting = Math.max(0, this.#awaiting - 1);
    this.#syncRef();
  }

  #syncRef(): void {
    if (!this.#thread) return;
    if (this.#awaiting > 0) this.#thread.ref();
    else this.#thread.unref();
  }

  terminate(): void {
    this.#terminated = true;
    void this.#thread?.terminate();
  }
}
