// Summaries counted again after an edit: a survey edit that changes what its responses contribute
// (elements added, removed, reordered, moved between blocks or given another type; hidden fields)
// asks for a recount in its transaction (store/surveys.ts), and every processor process looks for
// such requests. One takes a request (the others skip it), takes the survey's summary lock
// exclusively — the processors' batches that count for the survey wait, and count after it by the
// new definition — counts the survey from its stored responses and displays, and drops the request.
// Until then the summary reads the older counts through the new definition. Like the other
// background work it never stops on an error (pipeline/polling.ts).
import type { Logger } from '../logger.ts';
import { lockSummaries } from '../store/locks.ts';
import { query, type Orm } from '../store/orm.ts';
import { recountSummaries } from '../store/summary-recount.ts';
import { startPolling, type Polling } from './polling.ts';

/** The pause after a failure. */
const RETRY_MS = 5_000;

export function startSummaryRecounts(deps: { orm: Orm; logger: Logger; idleMs?: number }): Polling {
  const log = deps.logger.child({ component: 'summary-recounts' });
  /** Counts one requested survey again; whether there was one. */
  const recountOne = () =>
    deps.orm.em.fork().transactional(async (tx) => {
      const [request] = await query<{ survey_id: string }>(
        tx,
        'select survey_id from summary_recounts order by requested_at limit 1 for update skip locked',
        [],
      );
      if (!request) return false;
      const surveyId = request.survey_id;
      const started = Date.now();
      await lockSummaries(tx, [surveyId], 'exclusive');
      await recountSummaries((sql, params = []) => query(tx, sql, params), [surveyId]);
      // An edit meanwhile waits for this row, and asks again once this commits.
      await query(tx, 'delete from summary_recounts where survey_id = ?', [surveyId]);
      log.info({ surveyId, ms: Date.now() - started }, 'survey summary counted again after an edit');
      return true;
    });
  return startPolling({
    round: recountOne,
    idleMs: deps.idleMs ?? 1_000,
    retryMs: RETRY_MS,
    log,
    failing: 'cannot count survey summaries again; retrying',
    recovered: 'survey summaries are counted again',
  });
}
