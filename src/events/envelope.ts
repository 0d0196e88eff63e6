// Fields every event carries (design: `{type, version, eventId, occurredAt, environmentId, …}`).
import Type from 'typebox';
import { newId } from '../ids.ts';
import { acceptClock } from './clock.ts';

export const Envelope = {
  version: Type.Literal(1),
  eventId: Type.String(),
  occurredAt: Type.String({ format: 'date-time' }),
  environmentId: Type.String(),
};

/**
 * Commands (not facts) also carry the edge's clock: when it accepted them, in microseconds since the
 * epoch, the order of one key's commands (events/clock.ts). Optional: older edges did not write it.
 */
export const CommandEnvelope = {
  ...Envelope,
  clock: Type.Optional(Type.Integer({ minimum: 0 })),
};

/** What names any event: its type and its stable id. */
export interface Named {
  type: string;
  eventId: string;
}

/**
 * The envelope of a command accepted now (at an edge, or by `chorus contacts import`): its event id
 * and time are new, or those of the write's ids (an idempotent write's, which a retry reuses), and
 * its clock orders it among its key's commands (clock.ts).
 */
export function commandEnvelope(environmentId: string, ids?: { eventId: string; occurredAt: string }) {
  const now = Date.now();
  return {
    version: 1 as const,
    eventId: ids?.eventId ?? newId('evt', now),
    occurredAt: ids?.occurredAt ?? new Date(now).toISOString(),
    clock: acceptClock(now),
    environmentId,
  };
}

/**
 * On a display or response naming a contact: the edge knew the contact when it accepted the write
 * (stored, or identified by an acknowledged identify that the contact processor creates it from).
 * Its processor then leaves the contact to the contact processor; a write naming a user the edge did
 * not know (v1's `userId`) creates the contact, as Formbricks does. Absent on older commands: those
 * create it when it is missing.
 */
export const ContactKnown = Type.Optional(Type.Literal(true));
