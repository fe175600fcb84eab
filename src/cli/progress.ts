/** Progress on stderr: a bar with rate and ETA on a terminal, a periodic live line otherwise. */
import cliProgress from 'cli-progress';

export interface Progress {
  update(done: number, extra?: string): void;
  stop(): void;
}

export function startProgress(label: string, total: number): Progress {
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream: process.stderr,
        format: `${label} [{bar}] {percentage}% | {value}/{total} | {rate}/s | ETA {eta_formatted} {extra}`,
        hideCursor: true,
        etaBuffer: 50,
        fps: 5,
      },
      cliProgress.Presets.shades_classic,
    );
    const start = Date.now();
    bar.start(total, 0, { rate: '0', extra: '' });
    return {
      update(done, extra = '') {
        const rate = done / Math.max(1e-3, (Date.now() - start) / 1000);
        bar.update(done, { rate: rate.toFixed(0), extra });
      },
      stop() {
        bar.stop();
      },
    };
  }
  // Not a terminal (CI, a pipe): a plain line every few seconds.
  const start = Date.now();
  let last = start;
  const write = (done: number, extra: string) => {
    const secs = (Date.now() - start) / 1000;
    const rate = done / Math.max(1e-3, secs);
    const eta = rate > 0 ? (total - done) / rate : Infinity;
    process.stderr.write(
      `${label} ${done}/${total} (${((100 * done) / total).toFixed(1)}%) ${rate.toFixed(0)}/s ETA ${Number.isFinite(eta) ? `${eta.toFixed(0)}s` : '?'} ${extra}\n`,
    );
  };
  let lastDone = 0;
  let lastExtra = '';
  return {
    update(done, extra = '') {
      lastDone = done;
      lastExtra = extra;
      const now = Date.now();
      if (now - last >= 2000) {
        last = now;
        write(done, extra);
      }
    },
    stop() {
      write(lastDone, lastExtra);
    },
  };
}
