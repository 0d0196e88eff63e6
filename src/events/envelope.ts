// Fields every event carries (design: `{type, version, eventId, occurredAt, environmentId, …}`).
import Type from 'typebox';

export const Envelope = {
  version: Type.Literal(1),
  eventId: Type.String(),
  occurredAt: Type.String({ format: 'date-time' }),
  environmentId: Type.String(),
};

/** What names any event: its type and its stable id. */
export interface Named {
  type: string;
  eventId: string;
}
