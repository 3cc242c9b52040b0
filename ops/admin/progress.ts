/**
 * Progress of a long admin command on stderr: a bar with count, rate and ETA on a terminal
 * (cli-progress), plain lines otherwise (a log, a CI step), at most one every two seconds.
 */
import { Presets, SingleBar } from 'cli-progress';

export interface Progress {
  update(done: number, total: number): void;
  stop(): void;
}

export function createProgress(
  label: string,
  options: { tty: boolean; write: (line: string) => void },
): Progress {
  if (options.tty) {
    const bar = new SingleBar(
      {
        format: `${label} [{bar}] {value}/{total} records | {rate}/s | ETA {eta_formatted}`,
        stream: process.stderr,
        hideCursor: true,
        etaBuffer: 50,
      },
      Presets.shades_classic,
    );
    let started = false;
    const startedAt = Date.now();
    return {
      update(done, total) {
        if (!started) {
          bar.start(total, done, { rate: 0 });
          started = true;
        }
        const seconds = (Date.now() - startedAt) / 1000;
        bar.update(done, { rate: seconds > 0 ? Math.round(done / seconds) : 0 });
      },
      stop: () => {
        if (started) bar.stop();
      },
    };
  }
  const startedAt = Date.now();
  let lastAt = 0;
  let last = { done: 0, total: 0 };
  const line = ({ done, total }: typeof last) => {
    const seconds = (Date.now() - startedAt) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    const eta = rate > 0 ? Math.ceil((total - done) / rate) : undefined;
    options.write(
      `${label}: ${done}/${total} records, ${Math.round(rate)}/s${eta === undefined ? '' : `, ETA ${eta} s`}`,
    );
  };
  return {
    update(done, total) {
      last = { done, total };
      if (Date.now() - lastAt >= 2000) {
        lastAt = Date.now();
        line(last);
      }
    },
    stop: () => {
      if (last.total > 0) line(last);
    },
  };
}
