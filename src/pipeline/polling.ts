// The loop of the processors' background work that reads PostgreSQL rather than Kafka (the fact
// relay, parked commands): a round, then a pause unless the round was full; an error is said once,
// retried after a longer pause, and its end is said too. It never stops on its own.
import type { Logger } from '../logger.ts';

export interface Polling {
  stop(): Promise<void>;
}

export function startPolling(options: {
  /** One round; resolves with whether it was full (then the next round starts at once). */
  round: () => Promise<boolean>;
  idleMs: number;
  retryMs: number;
  log: Logger;
  /** What is said when rounds start failing, and when they succeed again. */
  failing: string;
  recovered: string;
}): Polling {
  let stopped = false;
  let cancelPause: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      cancelPause = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const running = (async () => {
    let failing = false;
    while (!stopped) {
      let full = false;
      try {
        full = await options.round();
        if (failing) options.log.info(options.recovered);
        failing = false;
      } catch (err) {
        if (!failing) options.log.warn({ err }, options.failing);
        failing = true;
      }
      if (!stopped && !full) await pause(failing ? options.retryMs : options.idleMs);
    }
  })();

  return {
    async stop() {
      stopped = true;
      cancelPause?.();
      await running;
    },
  };
}
