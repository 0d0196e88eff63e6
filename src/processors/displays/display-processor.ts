// The display processor: consumes the `displays` topic, keeps the `displays` table and announces
// each display it stored on display-events.
import { DisplayCreatedCheck, type DisplayCreated } from '../../events/displays.ts';
import { displayFactId, type DisplayCreatedFact } from '../../events/display-events.ts';
import type { Processor } from '../../pipeline/batch-handler.ts';
import { ensureContacts, withoutDeletedContacts } from '../../store/contacts.ts';
import { insertDisplays } from '../../store/displays.ts';
import { countDisplays } from '../../store/summary-counts.ts';

export const displayProcessor: Processor<DisplayCreated, DisplayCreatedFact> = {
  schema: DisplayCreatedCheck,
  keyOf: (event) => event.displayId,
  async apply(tx, events, effects) {
    // A display of a contact deleted after it was shown went with the contact.
    const todo = await withoutDeletedContacts(
      tx,
      events,
      (e) => e.contactId,
      (e) => e.occurredAt,
    );
    // A contact the edge knew is stored, or created by its identify on the contacts topic: creating
    // it here too would write it twice, and announce it twice.
    await ensureContacts(
      tx,
      todo.flatMap((e) =>
        e.contactId && e.userId && !e.contactKnown
          ? [{ ...e, contactId: e.contactId, userId: e.userId }]
          : [],
      ),
    );
    await countDisplays(tx, await insertDisplays(tx, todo));
    const appliedAt = new Date().toISOString();
    if (todo.length > 0) await effects.publish(todo.map((display) => factOf(display, appliedAt)));
  },
};

function factOf(display: DisplayCreated, appliedAt: string): DisplayCreatedFact {
  return {
    type: 'display.created',
    version: 1,
    eventId: displayFactId(display.displayId),
    occurredAt: display.occurredAt,
    appliedAt,
    environmentId: display.environmentId,
    displayId: display.displayId,
    surveyId: display.surveyId,
    contactId: display.contactId ?? null,
  };
}
