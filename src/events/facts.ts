// What every event of a public topic carries (docs/events.md): the envelope of the internal
// commands plus the time the fact was applied. `occurredAt` is when it happened (the client's
// request, a management write); `appliedAt` is when Chorus applied it to the store. `eventId` is
// stable: a redelivered or re-published fact has the same id, which is how readers deduplicate.
import Type from 'typebox';

export const FactEnvelope = {
  version: Type.Literal(1),
  eventId: Type.String(),
  occurredAt: Type.String({ format: 'date-time' }),
  appliedAt: Type.String({ format: 'date-time' }),
  environmentId: Type.String(),
};

/** `string | null`, as the facts carry absent optional ids. */
export const OrNull = <T extends Type.TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
