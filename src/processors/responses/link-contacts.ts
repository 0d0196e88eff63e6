// Responses of identified users (enterprise) are linked to their contact, created if missing, and
// carry a snapshot of the contact's attributes as they were when the response was accepted.
// Contact ids are derived from (environment, userId), so creating one here and in the contact
// processor can never make two. A response sent before its contact was deleted went with the
// contact: it is void, and does not bring the contact back.
import type { EntityManager } from '../../store/orm.ts';
import type { ResponseCreated } from '../../events/responses.ts';
import type { ResponseState } from '../../responses/state.ts';
import { clockOf } from '../../events/clock.ts';
import {
  contactAttributes,
  createContacts,
  withoutDeletedContacts,
  type StoredAttributes,
} from '../../store/contacts.ts';

/** Returns the ids of responses whose contact was deleted after they were sent: they are void. */
export async function linkContacts(
  tx: EntityManager,
  created: readonly { state: ResponseState; command: ResponseCreated }[],
): Promise<Set<string>> {
  const withContact = created.filter((c) => c.command.contactId && c.command.userId);
  if (withContact.length === 0) return new Set();
  // The rows of the batch are locked before this; deleteContact takes the same two locks in the
  // same order.
  const linked = await withoutDeletedContacts(
    tx,
    withContact,
    (c) => c.command.contactId,
    (c) => c.command.occurredAt,
  );
  const kept = new Set(linked);
  const voided = new Set(withContact.filter((c) => !kept.has(c)).map((c) => c.state.id));
  if (linked.length === 0) return voided;
  // Read first: nearly every contact is stored already (its identify came first), and those need
  // no insert. The others are created, then read, but for those the edge knew (ContactKnown): their
  // identify creates them, and until it is applied they hold their user id alone.
  const ids = [...new Set(linked.map((c) => c.command.contactId!))];
  let stored = await contactAttributes(tx, ids);
  const missing = linked.filter((c) => !stored.has(c.command.contactId!) && !c.command.contactKnown);
  if (missing.length > 0) {
    await createContacts(
      tx,
      missing.map(({ command: c }) => ({
        contactId: c.contactId!,
        environmentId: c.environmentId,
        userId: c.userId!,
        occurredAt: c.occurredAt,
      })),
    );
    stored = await contactAttributes(tx, ids);
  }
  for (const { state, command } of linked)
    state.contactAttributes =
      snapshotAt(stored.get(state.contactId!) ?? userIdOnly(command), command) ?? null;
  return voided;
}

/** A contact not stored yet, as creating it would store it. */
function userIdOnly(command: ResponseCreated): StoredAttributes {
  return { attributes: { userId: command.userId! }, clocks: {} };
}

/**
 * The contact's attributes as they were when the edge accepted the response, as Formbricks keeps
 * them: what the edge knew of the contact then (`contactAttributes`: every identify it had been
 * told of, the ones not applied here yet included, whichever edge took them), over what the store
 * holds, but for what an identify set after the response (its clock is later).
 */
export function snapshotAt(
  stored: StoredAttributes | undefined,
  command: Pick<ResponseCreated, 'clock' | 'occurredAt' | 'contactAttributes'>,
): Record<string, string> | undefined {
  if (stored === undefined && command.contactAttributes === undefined) return undefined;
  const at = clockOf(command);
  const snapshot: Record<string, string> = {};
  for (const [key, value] of Object.entries(stored?.attributes ?? {}))
    if ((stored?.clocks[key] ?? 0) <= at) snapshot[key] = value;
  return Object.assign(snapshot, command.contactAttributes);
}
