// The contact processor: consumes the `contacts` topic (keyed by environment + user id, so each
// contact's changes arrive in order) and keeps `contacts` and the attribute keys they use.
import { ContactCommandCheck, contactKey, type ContactCommand } from '../../events/contacts.ts';
import type { Processor } from '../batch-handler.ts';
import { claimEvents } from '../claim-events.ts';
import { newId } from '../../ids.ts';
import { ATTRIBUTE_KEY_PATTERN } from '../../store/entities.ts';
import { deletedContacts, voidedByDeletion } from '../../store/contacts.ts';
import { lockContacts } from '../../store/contact-locks.ts';

export const contactProcessor: Processor<ContactCommand> = {
  schema: ContactCommandCheck,
  keyOf: (command) => contactKey(command.environmentId, command.userId),
  apply: (em, commands) =>
    em.fork().transactional(async (tx) => {
      const fresh = await claimEvents(
        tx,
        commands.map((c) => c.eventId),
      );
      const contactIds = [...new Set(commands.map((c) => c.contactId))];
      // Before the tombstones: a deletion cannot commit between reading them and the upsert.
      await lockContacts(tx, contactIds);
      const tombstones = await deletedContacts(tx, contactIds);
      // Fold each contact's identifies of this batch, in order: one upsert per contact.
      const folded = new Map<string, ContactCommand>();
      for (const command of commands) {
        if (!fresh.delete(command.eventId)) continue;
        // Sent before the contact was deleted: applying it would bring the contact back.
        if (voidedByDeletion(tombstones, command.contactId, command.occurredAt)) continue;
        const before = folded.get(command.contactId);
        folded.set(command.contactId, {
          ...command,
          attributes: { ...before?.attributes, ...command.attributes, userId: command.userId },
          occurredAt: command.occurredAt,
        });
      }
      const contacts = [...folded.values()];
      if (contacts.length === 0) return;
      await tx.execute(
        `insert into contacts (id, environment_id, user_id, attributes, created_at, updated_at)
         values ${contacts.map(() => '(?, ?, ?, ?::jsonb, ?, ?)').join(', ')}
         on conflict (id) do update
           set attributes = contacts.attributes || excluded.attributes, updated_at = excluded.updated_at`,
        contacts.flatMap((c) => [
          c.contactId,
          c.environmentId,
          c.userId,
          JSON.stringify(c.attributes),
          c.occurredAt,
          c.occurredAt,
        ]),
      );
      const keys = new Map<string, { environmentId: string; key: string }>();
      for (const c of contacts) {
        for (const key of Object.keys(c.attributes)) {
          if (ATTRIBUTE_KEY_PATTERN.test(key))
            keys.set(`${c.environmentId}\u0000${key}`, { environmentId: c.environmentId, key });
        }
      }
      if (keys.size > 0) {
        await tx.execute(
          `insert into contact_attribute_keys (id, environment_id, key, type) values ${[...keys.values()].map(() => "(?, ?, ?, 'text')").join(', ')}
           on conflict (environment_id, key) do nothing`,
          [...keys.values()].flatMap((k) => [newId('cak'), k.environmentId, k.key]),
        );
      }
    }),
};
