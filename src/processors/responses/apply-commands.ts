// Step 2 of the response pipeline: in the batch's transaction (whose event ids the pipeline has
// claimed), the fresh commands are applied: lock and load rows → fold → single-use check → link
// contacts → persist → link displays → count quotas → record rejections (before the commit).
import type { EntityManager } from '../../store/orm.ts';
import { lockResponses, saveResponses } from '../../store/response-rows.ts';
import type { ResponseCommand, ResponseCreated } from '../../events/responses.ts';
import { countQuotas } from './count-quotas.ts';
import { linkContacts } from './link-contacts.ts';
import { linkDisplays } from './link-displays.ts';
import type { RejectionReason, ResponseState } from '../../responses/state.ts';
import { foldResponse } from '../../responses/merge.ts';
import { singleUseConflicts } from './single-use.ts';
import type { Effects, Rejected } from '../../pipeline/batch-handler.ts';
import { finishedEventId, type ResponseFinished } from '../../events/response-events.ts';

/**
 * Applies `commands` in the transaction of `tx`. Rejections and `response.finished` events are
 * written inside it, before the commit (see Effects).
 */
export async function applyCommands(
  tx: EntityManager,
  commands: readonly ResponseCommand[],
  effects: Effects<ResponseCommand, ResponseFinished>,
): Promise<void> {
  const byResponse = new Map<string, ResponseCommand[]>();
  for (const command of commands) {
    const list = byResponse.get(command.responseId) ?? [];
    list.push(command);
    byResponse.set(command.responseId, list);
  }

  const existing = await lockResponses(tx, [...byResponse.keys()]);
  const rejections: Rejected<ResponseCommand, RejectionReason>[] = [];
  const changed: ResponseState[] = [];
  const created: { state: ResponseState; command: ResponseCreated }[] = [];
  for (const [id, list] of byResponse) {
    const { state, rejected } = foldResponse(existing.get(id), list);
    rejections.push(...rejected);
    if (!state) continue;
    changed.push(state);
    const create = list.find((c): c is ResponseCreated => c.type === 'response.created');
    if (!existing.has(id) && create) created.push({ state, command: create });
  }

  // A response refused here is not stored: its create and any update that followed it are rejected.
  const refused = new Set<string>();
  const refuse = (ids: Set<string>, reason: RejectionReason) => {
    for (const id of ids) {
      refused.add(id);
      for (const command of byResponse.get(id)!) rejections.push({ command, reason });
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
  const accepted = changed.filter((s) => !refused.has(s.id));
  const acceptedCreates = created.filter((c) => !refused.has(c.state.id));

  await saveResponses(tx, accepted);
  await linkDisplays(
    tx,
    acceptedCreates.map((c) => c.state),
  );
  await countQuotas(tx, accepted);
  if (rejections.length > 0) await effects.reject(rejections);
  const finished = accepted.filter((s) => s.finished && !existing.get(s.id)?.finished);
  if (finished.length > 0) await effects.publish(finished.map(finishedEvent));
}

/** The announcement of a finished response, for the response-events topic. */
function finishedEvent(state: ResponseState): ResponseFinished {
  return {
    type: 'response.finished',
    version: 1,
    eventId: finishedEventId(state.id),
    occurredAt: state.updatedAt,
    environmentId: state.environmentId,
    responseId: state.id,
    surveyId: state.surveyId,
    response: { ...state },
  };
}
