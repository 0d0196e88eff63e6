// The contract of the `dead-letter` topic, keyed by the original key: what could not or must not be
// applied, with the reason, for operators and the replay tool.
import Type, { type Static } from 'typebox';

/** A consumed message that a consumer refused (malformed, rejected, or one PostgreSQL cannot take). */
export const MessageDeadLettered = Type.Object({
  type: Type.Literal('dead-letter'),
  version: Type.Literal(1),
  reason: Type.String(),
  detail: Type.Optional(Type.Unknown()),
  occurredAt: Type.String({ format: 'date-time' }),
  source: Type.Object({ topic: Type.String(), partition: Type.Number(), offset: Type.String() }),
  key: Type.String(),
  /** The original message's value, as it was written. */
  value: Type.Union([Type.String(), Type.Null()]),
});
export type MessageDeadLettered = Static<typeof MessageDeadLettered>;

/** A delivery to a provider that failed for good (replayable with `chorus deliveries replay`). */
export const DeliveryFailed = Type.Object({
  type: Type.Literal('delivery.failed'),
  version: Type.Literal(1),
  occurredAt: Type.String({ format: 'date-time' }),
  reason: Type.String(),
  deliveryId: Type.String(),
  responseId: Type.String(),
  linkId: Type.String(),
  integrationId: Type.String(),
});
export type DeliveryFailed = Static<typeof DeliveryFailed>;

export type DeadLetterRecord = MessageDeadLettered | DeliveryFailed;
