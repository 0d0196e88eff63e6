// Summaries counted again after an edit: a survey edit that changes what its responses contribute
// (elements added, removed, reordered, moved between blocks or given another type; hidden fields)
// asks for a recount in its transaction (store/surveys.ts), and every processor process looks for
// such requests. The processors' batches go on meanwhile; a recount stops none of them for longer
// than a batch takes:
//   1. claim the request (the other processes skip a claimed one, until its claim is an hour old);
//   2. take the survey's summary lock exclusively and let it go at once: every batch that read the
//      definition before the edit has then committed, and every later one counts by the new one;
//   3. in one snapshot, read the kept sums and count the survey from scratch (store/summary-recount.ts);
//   4. add the difference between the two to the sums. Batches committed after the snapshot added
//      their changes by the new definition on top of the kept sums, so the sums become the count
//      from scratch plus those changes: what a count from scratch would give now. An edit since
//      the claim cleared it: the difference is not added (the next recount does the whole job).
// Until then the summary reads the older counts through the new definition. Like the other
// background work it never stops on an error (pipeline/polling.ts).
import type { Logger } from '../logger.ts';
import type { Orm } from '../store/orm.ts';
import { recountRequested } from '../store/summary-counts.ts';
import { startPolling, type Polling } from './polling.ts';

/** The pause after a failure. */
const RETRY_MS = 5_000;

export function startSummaryRecounts(deps: { orm: Orm; logger: Logger; idleMs?: number }): Polling {
  const log = deps.logger.child({ component: 'summary-recounts' });
  return startPolling({
    round: async () => {
      const started = Date.now();
      const outcome = await recountRequested(deps.orm.em);
      if (!outcome) return false;
      log.info(
        { ...outcome, ms: Date.now() - started },
        outcome.kept
          ? 'survey summary counted again after an edit'
          : 'survey edited again while it was counted; counting it again',
      );
      return true;
    },
    idleMs: deps.idleMs ?? 1_000,
    retryMs: RETRY_MS,
    log,
    failing: 'cannot count survey summaries again; retrying',
    recovered: 'survey summaries are counted again',
  });
}
