// Step 2 of the response pipeline: in the batch's transaction (whose event ids the pipeline has
// claimed), the fresh commands are applied: lock and load the rows (but those created in the
// batch) → park the updates of responses not created yet → fold → single-use check → link
// contacts → persist, delete the deleted → link displays → count quotas → count summaries →
// record rejections → enqueue the deliveries of every change → announce every change and deletion
// on response-events (before the commit).
import { groupBy } from '../../group-by.ts';
import { markSavepoint, rollBackToSavepoint, type EntityManager } from '../../store/orm.ts';
import {
  insertResponses,
  lockResponses,
  removeResponses,
  saveResponses,
  storedAmong,
} from '../../store/response-rows.ts';
import { recordRefused, refusedAmong } from '../../store/refused-responses.ts';
import { countResponseChanges } from '../../store/summary-counts.ts';
import { findBatchSurveys } from '../../store/surveys.ts';
import type {
  ResponseChange,
  ResponseCommand,
  ResponseCreated,
  ResponseDeleted,
} from '../../events/responses.ts';
import { countQuotas } from './count-quotas.ts';
import { enqueueDeliveries } from './enqueue-deliveries.ts';
import { linkContacts } from './link-contacts.ts';
import { linkDisplays } from './link-displays.ts';
import type { RejectionReason, ResponseState } from '../../responses/state.ts';
import { foldResponse } from '../../responses/merge.ts';
import { singleUseConflicts } from './single-use.ts';
import type { Effects, Rejected } from '../../pipeline/batch-handler.ts';
import {
  responseFactId,
  type ResponseChangeFact,
  type ResponseDeletedFact,
  type ResponseFact,
  type ResponseSnapshot,
} from '../../events/response-events.ts';

/**
 * Applies `commands` in the transaction of `tx`. The deliveries of each applied change are recorded
 * in it; rejections and the facts of each applied change are written inside it, before the commit
 * (see Effects).
 *
 * A response whose commands in the batch begin with its create (and do not delete it) is taken to
 * be new, and is not read: the edge mints a create's id, so it is stored already only when a create
 * came twice under two event ids, which refuses the second. Most of a batch is such creates, and
 * reading them cost PostgreSQL a third of its statements' CPU under the response bench. The
 * assumption is checked where it matters: those rows are inserted, never updated, and if one was
 * there (or, refused, turns out to be), what the batch did is rolled back to a savepoint and done
 * again reading every response. No effect leaves the transaction before that check.
 */
export async function applyCommands(
  tx: EntityManager,
  commands: readonly ResponseCommand[],
  effects: Effects<ResponseCommand, ResponseFact>,
): Promise<void> {
  const assumedNew = beginWithTheirCreate(commands);
  if (assumedNew.size === 0) return applyAssuming(tx, commands, effects, assumedNew);
  await markSavepoint(tx);
  try {
    await applyAssuming(tx, commands, effects, assumedNew);
  } catch (error) {
    if (!(error instanceof StoredAlready)) throw error;
    await rollBackToSavepoint(tx);
    await applyAssuming(tx, commands, effects, new Set());
  }
}

/** A response taken to be new was stored already: the batch is applied again, reading it. */
class StoredAlready extends Error {}

/** The responses whose commands begin with their create and hold no deletion. */
function beginWithTheirCreate(commands: readonly ResponseCommand[]): Set<string> {
  const ids = new Set<string>();
  const seen = new Set<string>();
  for (const { responseId, type } of commands) {
    if (!seen.has(responseId)) {
      seen.add(responseId);
      if (type === 'response.created') ids.add(responseId);
    } else if (type === 'response.deleted') ids.delete(responseId);
  }
  return ids;
}

async function applyAssuming(
  tx: EntityManager,
  commands: readonly ResponseCommand[],
  effects: Effects<ResponseCommand, ResponseFact>,
  assumedNew: ReadonlySet<string>,
): Promise<void> {
  const byResponse = groupBy(commands, (command) => command.responseId);

  const existing = await lockResponses(
    tx,
    [...byResponse.keys()].filter((id) => !assumedNew.has(id)),
  );
  const rejections: Rejected<ResponseCommand, RejectionReason>[] = [];
  // An update whose create has not been applied yet came early: its create is still on its way in
  // another partition (for a moment after partitions were added) or in a batch being applied. It
  // waits, and is applied once the response is stored; the merge by clock gives it the place its
  // edge gave it (responses/merge.ts). Unless its create was refused, or the response was deleted:
  // then it never will be. A deletion of a response that is not stored has nothing left to do (the
  // edge writes one only for a stored response: it went before, or with its contact).
  const early = [...byResponse.keys()].filter(
    (id) => !existing.has(id) && !byResponse.get(id)!.some((c) => c.type === 'response.created'),
  );
  const refusedBefore = await refusedAmong(tx, early);
  const waiting: ResponseCommand[] = [];
  for (const id of early) {
    for (const command of byResponse.get(id)!) {
      if (command.type === 'response.deleted') continue;
      if (refusedBefore.has(id)) rejections.push({ command, reason: 'response_not_found' });
      else waiting.push(command);
    }
    byResponse.delete(id);
  }
  if (waiting.length > 0) await effects.park(tx, waiting);

  // A deletion ends a response: what follows it in the batch finds no response.
  const changesOf = new Map<string, ResponseChange[]>();
  const deletions = new Map<string, ResponseDeleted>();
  for (const [id, list] of byResponse) {
    const at = list.findIndex((c) => c.type === 'response.deleted');
    if (at < 0) {
      changesOf.set(id, list as ResponseChange[]);
      continue;
    }
    changesOf.set(id, list.slice(0, at) as ResponseChange[]);
    deletions.set(id, list[at] as ResponseDeleted);
    for (const command of list.slice(at + 1))
      if (command.type !== 'response.deleted') rejections.push({ command, reason: 'response_not_found' });
  }

  const changed: ResponseState[] = [];
  const steps: { command: ResponseChange; state: ResponseState; before: ResponseState | undefined }[] = [];
  const created: { state: ResponseState; command: ResponseCreated }[] = [];
  for (const [id, list] of changesOf) {
    const { state, applied, rejected } = foldResponse(existing.get(id), list);
    rejections.push(...rejected);
    if (!state) continue;
    applied.forEach((step, i) =>
      steps.push({
        command: step.command,
        state: step.state,
        before: i === 0 ? existing.get(id) : applied[i - 1]!.state,
      }),
    );
    changed.push(state);
    const create = list.find((c): c is ResponseCreated => c.type === 'response.created');
    if (!existing.has(id) && create) created.push({ state, command: create });
  }

  // A response refused here is not stored: its create and any update that followed it are rejected.
  const refused = new Set<string>();
  const refuse = (ids: Set<string>, reason: RejectionReason) => {
    for (const id of ids) {
      refused.add(id);
      for (const command of changesOf.get(id)!) rejections.push({ command, reason });
    }
  };
  refuse(
    await singleUseConflicts(
      tx,
      created.map((c) => c.state),
    ),
    'single_use_id_taken',
  );
  refuse(
    await linkContacts(
      tx,
      created.filter((c) => !refused.has(c.state.id)),
    ),
    'contact_deleted',
  );
  const kept = changed.filter((s) => !refused.has(s.id));
  const accepted = kept.filter((s) => !deletions.has(s.id));
  const removed = kept.filter((s) => deletions.has(s.id));
  // Later updates of a refused or deleted response are rejected at once rather than parked.
  await recordRefused(tx, [...refused, ...removed.map((s) => s.id)]);
  const acceptedCreates = created.filter((c) => !refused.has(c.state.id) && !deletions.has(c.state.id));

  const refusedNew = [...refused].filter((id) => assumedNew.has(id));
  if (refusedNew.length > 0 && (await storedAmong(tx, refusedNew)).size > 0) throw new StoredAlready();
  const inserts = accepted.filter((s) => assumedNew.has(s.id));
  if ((await insertResponses(tx, inserts)) < inserts.length) throw new StoredAlready();
  await saveResponses(
    tx,
    accepted.filter((s) => !assumedNew.has(s.id)),
  );
  await removeResponses(tx, removed);
  await linkDisplays(
    tx,
    acceptedCreates.map((c) => c.state),
  );
  const surveys = await findBatchSurveys(tx, [...new Set(kept.map((s) => s.surveyId))]);
  await countQuotas(tx, accepted, surveys);
  await countResponseChanges(
    tx,
    [
      ...accepted.map((after) => ({ before: existing.get(after.id), after })),
      ...removed.map((state) => ({ before: existing.get(state.id), after: undefined })),
    ],
    surveys,
  );
  if (rejections.length > 0) await effects.reject(rejections);
  const appliedAt = new Date().toISOString();
  const announced = steps
    .filter((step) => !refused.has(step.state.id))
    .flatMap((step) =>
      factsOf(step, appliedAt).map((fact) => ({
        fact,
        trace: effects.traceOf(step.command),
        replayed: effects.replayed(step.command),
      })),
    );
  // A deleted response is delivered nowhere: its deliveries went with it.
  await enqueueDeliveries(
    tx,
    announced.filter((a) => !deletions.has(a.fact.responseId)),
  );
  const deletedFacts = removed.map((state) => deletedFact(state, deletions.get(state.id)!, appliedAt));
  const facts: ResponseFact[] = [...announced.map((a) => a.fact), ...deletedFacts];
  if (facts.length > 0) await effects.publish(facts);
}

/**
 * The facts of one applied command: `response.created` or `response.updated`, and
 * `response.finished` too when it finished the response.
 */
function factsOf(
  step: { command: ResponseChange; state: ResponseState; before: ResponseState | undefined },
  appliedAt: string,
): ResponseChangeFact[] {
  const { command, state, before } = step;
  const types: ResponseChangeFact['type'][] = [
    command.type === 'response.created' ? 'response.created' : 'response.updated',
  ];
  if (state.finished && !before?.finished) types.push('response.finished');
  const response = snapshotOf(state);
  return types.map((type) => ({
    type,
    version: 1,
    eventId: responseFactId(type, state.id, command.eventId),
    occurredAt: command.occurredAt,
    appliedAt,
    environmentId: state.environmentId,
    responseId: state.id,
    surveyId: state.surveyId,
    response,
  }));
}

/** A deletion, with ids only: nothing of the answers is written again. */
function deletedFact(state: ResponseState, command: ResponseDeleted, appliedAt: string): ResponseDeletedFact {
  return {
    type: 'response.deleted',
    version: 1,
    eventId: responseFactId('response.deleted', state.id, command.eventId),
    occurredAt: command.occurredAt,
    appliedAt,
    environmentId: state.environmentId,
    responseId: state.id,
    surveyId: state.surveyId,
  };
}

/**
 * The response as the public stream shows it: the contact's attributes stay on contact-events, and
 * the merge's clocks are its own. Named field by field: a field added to the state is not published
 * until it is added here (and to the schema), and a literal is built faster than a copy without two
 * fields (0.6 µs per response, with its two facts' JSON).
 */
function snapshotOf(s: ResponseState): ResponseSnapshot {
  return {
    id: s.id,
    environmentId: s.environmentId,
    surveyId: s.surveyId,
    finished: s.finished,
    data: s.data,
    ttc: s.ttc,
    variables: s.variables,
    meta: s.meta,
    language: s.language,
    endingId: s.endingId,
    displayId: s.displayId,
    singleUseId: s.singleUseId,
    contactId: s.contactId,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}
