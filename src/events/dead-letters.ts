// The contract of the `dead-letter` topic, keyed by the original key: what could not or must not be
// applied, with the reason, for operators and the replay tool.
import Type, { type Static } from 'typebox';

/**
 * A command a consumer refused, and why: the merge of a response reports it (responses/merge.ts), a
 * processor hands it to the pipeline (pipeline/batch-handler.ts, Effects.reject), which records it
 * here as a `dead-letter` with that reason. `R` narrows the reasons where they are a closed set.
 */
export interface Rejected<C, R extends string = string> {
  command: C;
  reason: R;
}

/** A consumed message that a consumer refused (malformed, rejected, or one PostgreSQL cannot take). */
export const MessageDeadLettered = Type.Object({
  type: Type.Literal('dead-letter'),
  version: Type.Literal(1),
  reason: Type.String(),
  detail: Type.Optional(Type.Unknown()),
  occurredAt: Type.String({ format: 'date-time' }),
  source: Type.Object({ topic: Type.String(), partition: Type.Number(), offset: Type.String() }),
  key: Type.String(),
  /**
   * The original message's value, as it was written; null when it was empty, or too large to carry
   * here (then `valueBytes` says its size: read it at `source`, while the topic retains it).
   */
  value: Type.Union([Type.String(), Type.Null()]),
  valueBytes: Type.Optional(Type.Number()),
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
  /** A delivery to a link of an integration (Slack, Notion) … */
  linkId: Type.Optional(Type.String()),
  integrationId: Type.Optional(Type.String()),
  /** … or to a webhook. */
  webhookId: Type.Optional(Type.String()),
});
export type DeliveryFailed = Static<typeof DeliveryFailed>;

/**
 * An event a consumer caused (e.g. the `response.finished` of a response that grew past the event
 * log's limit) that is too large to be written. What caused it was applied; only the event is missing.
 */
export const EventTooLarge = Type.Object({
  type: Type.Literal('event.too_large'),
  version: Type.Literal(1),
  occurredAt: Type.String({ format: 'date-time' }),
  topic: Type.String(),
  key: Type.String(),
  eventType: Type.String(),
  eventId: Type.String(),
  bytes: Type.Number(),
});
export type EventTooLarge = Static<typeof EventTooLarge>;

export type DeadLetterRecord = MessageDeadLettered | DeliveryFailed | EventTooLarge;
