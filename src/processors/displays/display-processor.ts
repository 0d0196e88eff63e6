// The display processor: consumes the `displays` topic and keeps the `displays` table. A display
// whose response was stored first (the two travel on different topics) is linked on arrival.
import { DisplayCreatedCheck, type DisplayCreated } from '../../events/displays.ts';
import type { Processor } from '../batch-handler.ts';
import { claimEvents } from '../claim-events.ts';
import { deletedContacts, ensureContacts, voidedByDeletion } from '../../store/contacts.ts';
import { lockContacts } from '../../store/contact-locks.ts';

export const displayProcessor: Processor<DisplayCreated> = {
  schema: DisplayCreatedCheck,
  keyOf: (event) => event.displayId,
  apply: (em, events) =>
    em.fork().transactional(async (tx) => {
      const fresh = await claimEvents(
        tx,
        events.map((e) => e.eventId),
      );
      const contactIds = events.flatMap((e) => (e.contactId ? [e.contactId] : []));
      // Before the tombstones: a deletion cannot commit between reading them and the insert.
      await lockContacts(tx, contactIds);
      const tombstones = await deletedContacts(tx, contactIds);
      // A display of a contact deleted after it was shown went with the contact.
      const todo = events.filter(
        (e) => fresh.delete(e.eventId) && !voidedByDeletion(tombstones, e.contactId, e.occurredAt),
      );
      if (todo.length === 0) return;
      await ensureContacts(
        tx,
        todo.flatMap((e) =>
          e.contactId && e.userId ? [{ ...e, contactId: e.contactId, userId: e.userId }] : [],
        ),
      );
      await tx.execute(
        `insert into displays (id, environment_id, survey_id, contact_id, response_id, created_at, updated_at)
         select d.id, d.environment_id, d.survey_id, d.contact_id,
                (select r.id from responses r where r.display_id = d.id and r.survey_id = d.survey_id order by r.id limit 1),
                d.created_at::timestamptz, d.created_at::timestamptz
         from (values ${todo.map(() => '(?, ?, ?, ?, ?)').join(', ')}) as d (id, environment_id, survey_id, contact_id, created_at)
         on conflict do nothing`,
        todo.flatMap((e) => [e.displayId, e.environmentId, e.surveyId, e.contactId ?? null, e.occurredAt]),
      );
    }),
};
