// The display processor: consumes the `displays` topic and keeps the `displays` table.
import { DisplayCreatedCheck, type DisplayCreated } from '../../events/displays.ts';
import type { Processor } from '../../pipeline/batch-handler.ts';
import { ensureContacts, withoutDeletedContacts } from '../../store/contacts.ts';
import { insertDisplays } from '../../store/displays.ts';

export const displayProcessor: Processor<DisplayCreated> = {
  schema: DisplayCreatedCheck,
  keyOf: (event) => event.displayId,
  async apply(tx, events) {
    // A display of a contact deleted after it was shown went with the contact.
    const todo = await withoutDeletedContacts(
      tx,
      events,
      (e) => e.contactId,
      (e) => e.occurredAt,
    );
    await ensureContacts(
      tx,
      todo.flatMap((e) =>
        e.contactId && e.userId ? [{ ...e, contactId: e.contactId, userId: e.userId }] : [],
      ),
    );
    await insertDisplays(tx, todo);
  },
};
