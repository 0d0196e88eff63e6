// The integrations consumer of `response-events`: each finished response of a linked survey becomes
// one delivery row per link (unique per response and link), durable before the offset is committed.
// Sending happens in the deliverer, which retries on its own schedule. A response whose contact was
// deleted after it finished went with the contact: an announcement of it still in flight makes no
// delivery (deleteContact removes the deliveries made before it).
import { ResponseFinishedCheck, type ResponseFinished } from '../../events/response-events.ts';
import { newId } from '../../ids.ts';
import type { Processor } from '../../processors/batch-handler.ts';
import { claimEvents } from '../../processors/claim-events.ts';
import { lockContacts } from '../../store/contact-locks.ts';
import { deletedContacts, voidedByDeletion } from '../../store/contacts.ts';

export const deliveryEnqueuer: Processor<ResponseFinished> = {
  schema: ResponseFinishedCheck,
  keyOf: (event) => event.responseId,
  apply: (em, events, effects) =>
    em.fork().transactional(async (tx) => {
      // Most surveys have no integration: their events are done with after this one read, and
      // claim nothing (a redelivery finds no link either).
      const surveyIds = [...new Set(events.map((e) => e.surveyId))];
      const links = await tx.execute<{ id: string; survey_id: string; integration_id: string }[]>(
        `select l.id, l.survey_id, l.integration_id from integration_links l
         where l.survey_id in (${surveyIds.map(() => '?').join(', ')})`,
        surveyIds,
      );
      const linked = events.filter((e) => links.some((l) => l.survey_id === e.surveyId));
      if (linked.length === 0) return;
      // Claimed under a name of their own: the response processor uses the event ids of its input.
      const fresh = await claimEvents(
        tx,
        linked.map((e) => `deliveries:${e.eventId}`),
      );
      const claimed = linked.filter((e) => fresh.has(`deliveries:${e.eventId}`));
      if (claimed.length === 0) return;
      const contactIds = claimed.map(contactOf);
      // Before the tombstones: a deletion cannot commit between reading them and the insert.
      await lockContacts(tx, contactIds);
      const tombstones = await deletedContacts(
        tx,
        contactIds.filter((id) => id !== undefined),
      );
      const todo = claimed.filter((e) => !voidedByDeletion(tombstones, contactOf(e), e.occurredAt));
      const rows = todo.flatMap((event) =>
        links.filter((l) => l.survey_id === event.surveyId).map((link) => ({ event, link })),
      );
      if (rows.length === 0) return;
      await tx.execute(
        `insert into deliveries (id, response_id, link_id, integration_id, response, trace_context)
         values ${rows.map(() => '(?, ?, ?, ?, ?::jsonb, ?::jsonb)').join(', ')}
         on conflict (response_id, link_id) do nothing`,
        rows.flatMap(({ event, link }) => [
          newId('dlv'),
          event.responseId,
          link.id,
          link.integration_id,
          JSON.stringify(event.response),
          traceContextOf(effects.traceOf(event)),
        ]),
      );
    }),
};

/** The contact the finished response is linked to, if any (the response as the processor stored it). */
function contactOf(event: ResponseFinished): string | undefined {
  const { contactId } = event.response;
  return typeof contactId === 'string' ? contactId : undefined;
}

/** Stored only when there is a trace to continue. */
function traceContextOf(trace: Readonly<Record<string, string>>): string | null {
  return Object.keys(trace).length > 0 ? JSON.stringify(trace) : null;
}
