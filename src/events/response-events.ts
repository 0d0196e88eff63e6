// The contract of the public `response-events` topic, written by the response processor, keyed by
// response id: the merged state of a response after every change applied to it, in order. A create
// is `response.created`, each later update `response.updated`, and the change that finishes it is
// also announced as `response.finished` (a response created finished gets both `created` and
// `finished`), as Formbricks' webhooks see them. A deletion is `response.deleted`, with ids only, so
// that downstream stores can erase the answers and nothing of them is written again. Read by analysts (the deliveries of each change are
// recorded by the response processor itself, not from this topic).
import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { FactEnvelope, OrNull } from './facts.ts';

/**
 * A response as stored after the change. Personal data only where the survey captures it: the IP
 * address is in `meta` only for surveys that capture it, and the contact's attributes are on
 * `contact-events`, not here.
 */
export const ResponseSnapshot = Type.Object({
  id: Type.String(),
  environmentId: Type.String(),
  surveyId: Type.String(),
  finished: Type.Boolean(),
  /** Answers by question id (and hidden fields). */
  data: Type.Record(Type.String(), Type.Unknown()),
  /** Time to complete per question, in milliseconds; `_total` for the whole response. */
  ttc: Type.Record(Type.String(), Type.Number()),
  variables: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()])),
  meta: Type.Object({
    source: Type.Optional(Type.String()),
    url: Type.Optional(Type.String()),
    action: Type.Optional(Type.String()),
    userAgent: Type.Optional(
      Type.Object({
        browser: Type.Optional(Type.String()),
        os: Type.Optional(Type.String()),
        device: Type.Optional(Type.String()),
      }),
    ),
    country: Type.Optional(Type.String()),
    ipAddress: Type.Optional(Type.String()),
  }),
  language: OrNull(Type.String()),
  endingId: OrNull(Type.String()),
  displayId: OrNull(Type.String()),
  singleUseId: OrNull(Type.String()),
  contactId: OrNull(Type.String()),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});
export type ResponseSnapshot = Static<typeof ResponseSnapshot>;

const responseFact = <T extends string>(type: T) =>
  Type.Object({
    type: Type.Literal(type),
    ...FactEnvelope,
    responseId: Type.String(),
    surveyId: Type.String(),
    response: ResponseSnapshot,
  });

export const ResponseCreatedFact = responseFact('response.created');
export const ResponseUpdatedFact = responseFact('response.updated');
export const ResponseFinished = responseFact('response.finished');
export type ResponseFinished = Static<typeof ResponseFinished>;

/** A change of a response's state: what webhooks and integrations are sent. */
export type ResponseChangeFact = Static<
  typeof ResponseCreatedFact | typeof ResponseUpdatedFact | typeof ResponseFinished
>;

export const ResponseDeletedFact = Type.Object({
  type: Type.Literal('response.deleted'),
  ...FactEnvelope,
  responseId: Type.String(),
  surveyId: Type.String(),
});
export type ResponseDeletedFact = Static<typeof ResponseDeletedFact>;

export const ResponseFact = Type.Union([
  ResponseCreatedFact,
  ResponseUpdatedFact,
  ResponseFinished,
  ResponseDeletedFact,
]);
export type ResponseFact = Static<typeof ResponseFact>;
export const ResponseFactCheck = Compile(ResponseFact);

/** The snapshot last written, and its JSON: the facts of one change follow each other. */
let lastSnapshot: ResponseSnapshot | undefined;
let lastSnapshotJson = '';

/**
 * A fact's JSON, as `JSON.stringify` writes it, the response's snapshot written once for the facts
 * of one change that carry it (a response created finished is announced `created` and `finished`,
 * with the same snapshot). The snapshot must be the fact's last field, as the response processor
 * builds it; another order gives the same JSON with the fields in another order.
 */
export function responseFactJson(fact: ResponseFact): string {
  if (fact.type === 'response.deleted') return JSON.stringify(fact);
  if (fact.response !== lastSnapshot) {
    lastSnapshot = fact.response;
    lastSnapshotJson = JSON.stringify(fact.response);
  }
  const { response: _, ...envelope } = fact;
  return `${JSON.stringify(envelope).slice(0, -1)},"response":${lastSnapshotJson}}`;
}

/**
 * Deterministic ids: a redelivered batch announces the same changes with the same ids. A response
 * is created, finished and deleted once; each update is named by the command that made it.
 */
export const responseFactId = (type: ResponseFact['type'], responseId: string, commandEventId: string) =>
  type === 'response.updated'
    ? `${responseId}:updated:${commandEventId}`
    : `${responseId}:${type.slice('response.'.length)}`;
