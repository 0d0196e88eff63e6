// The contact processor: consumes the `contacts` topic (keyed by environment + user id, so each
// contact's changes arrive in order, and merge by the edge's clock when for a moment after
// partitions were added they do not) and keeps `contacts` and the attribute keys they use.
import { ContactCommandCheck, contactKey, type ContactCommand } from '../../events/contacts.ts';
import { clockOf } from '../../events/clock.ts';
import type { Processor } from '../../pipeline/batch-handler.ts';
import { mergeAttributes } from '../../contacts/merge.ts';
import { ATTRIBUTE_KEY_PATTERN } from '../../contacts/identify-input.ts';
import { ensureAttributeKeys, type NewAttributeKey } from '../../store/attribute-keys.ts';
import { upsertContacts, withoutDeletedContacts } from '../../store/contacts.ts';
import { lockSegments, refreshContactMembership } from '../../store/segment-members.ts';

/** A contact's identifies of one batch, folded: its attributes and the clock of what set each one. */
type ContactChange = ContactCommand & { attributeClocks: Record<string, number> };

export const contactProcessor: Processor<ContactCommand> = {
  schema: ContactCommandCheck,
  keyOf: (command) => contactKey(command.environmentId, command.userId),
  async apply(tx, commands) {
    // First of all (store/segment-members.ts): a segment write waits for this batch, or it for it.
    await lockSegments(
      tx,
      commands.map((c) => c.environmentId),
      'shared',
    );
    // Sent before the contact was deleted: applying it would bring the contact back.
    const live = await withoutDeletedContacts(
      tx,
      commands,
      (c) => c.contactId,
      (c) => c.occurredAt,
    );
    // Fold each contact's identifies of this batch by their edge clock: one upsert per contact, with
    // the clock of what set each attribute, so that the store keeps the later of its value and ours.
    const folded = new Map<string, ContactChange>();
    for (const command of [...live].sort((a, b) => clockOf(a) - clockOf(b))) {
      const before = folded.get(command.contactId);
      const clock = clockOf(command);
      const attributes = mergeAttributes(before?.attributes, command.attributes, command.userId);
      const attributeClocks = Object.assign({}, before?.attributeClocks);
      // A key's type is set once, by whichever identify creates it: the earliest one here.
      const attributeTypes = Object.assign({}, command.attributeTypes, before?.attributeTypes);
      for (const key of [...Object.keys(command.attributes), 'userId']) attributeClocks[key] = clock;
      folded.set(
        command.contactId,
        Object.assign({}, command, {
          occurredAt:
            before && before.occurredAt > command.occurredAt ? before.occurredAt : command.occurredAt,
          attributes,
          attributeClocks,
          attributeTypes,
        }),
      );
    }
    const contacts = [...folded.values()];
    await upsertContacts(tx, contacts);
    const keys = new Map<string, NewAttributeKey>();
    for (const c of contacts) {
      for (const key of Object.keys(c.attributes)) {
        const id = `${c.environmentId}\u0000${key}`;
        if (ATTRIBUTE_KEY_PATTERN.test(key) && !keys.has(id))
          keys.set(id, { environmentId: c.environmentId, key, type: c.attributeTypes?.[key] ?? 'text' });
      }
    }
    await ensureAttributeKeys(tx, [...keys.values()]);
    // The stored segment membership of the contacts, for the attributes just written.
    await refreshContactMembership(
      tx,
      contacts.map((c) => c.contactId),
    );
  },
};
