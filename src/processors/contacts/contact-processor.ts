// The contact processor: consumes the `contacts` topic (keyed by environment + user id, so each
// contact's changes arrive in order) and keeps `contacts` and the attribute keys they use.
import { ContactCommandCheck, contactKey, type ContactCommand } from '../../events/contacts.ts';
import type { Processor } from '../../pipeline/batch-handler.ts';
import { mergeAttributes } from '../../contacts/merge.ts';
import { ATTRIBUTE_KEY_PATTERN } from '../../store/entities.ts';
import { ensureAttributeKeys } from '../../store/attribute-keys.ts';
import { upsertContacts, withoutDeletedContacts } from '../../store/contacts.ts';

export const contactProcessor: Processor<ContactCommand> = {
  schema: ContactCommandCheck,
  keyOf: (command) => contactKey(command.environmentId, command.userId),
  async apply(tx, commands) {
    // Sent before the contact was deleted: applying it would bring the contact back.
    const live = await withoutDeletedContacts(
      tx,
      commands,
      (c) => c.contactId,
      (c) => c.occurredAt,
    );
    // Fold each contact's identifies of this batch, in order: one upsert per contact.
    const folded = new Map<string, ContactCommand>();
    for (const command of live) {
      const before = folded.get(command.contactId);
      folded.set(command.contactId, {
        ...command,
        attributes: mergeAttributes(before?.attributes, command.attributes, command.userId),
      });
    }
    const contacts = [...folded.values()];
    await upsertContacts(tx, contacts);
    const keys = new Map<string, { environmentId: string; key: string }>();
    for (const c of contacts) {
      for (const key of Object.keys(c.attributes)) {
        if (ATTRIBUTE_KEY_PATTERN.test(key))
          keys.set(`${c.environmentId}\u0000${key}`, { environmentId: c.environmentId, key });
      }
    }
    await ensureAttributeKeys(tx, [...keys.values()]);
  },
};
