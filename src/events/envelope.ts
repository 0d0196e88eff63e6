// Fields every event carries (design: `{type, version, eventId, occurredAt, environmentId, …}`).
import Type from 'typebox';

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
