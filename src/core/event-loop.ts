/**
 * Lets the event loop take a turn: I/O callbacks, queued requests and signal handlers (Ctrl-C)
 * run here. The engine's kernels run inline and their results resolve as microtasks, so a loop of
 * model steps would otherwise hold the loop for a whole training step (a SIGINT waited ~90 s on hmm).
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
