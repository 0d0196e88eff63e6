// The contract of the `responses` topic: commands accepted by the edge, applied by the response
// processor. Keyed by response id, so all commands of one response are applied in order: a create,
// updates that merge into it (responses/merge.ts), and a deletion (management API) that ends it.
import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { CommandEnvelope, ContactKnown } from './envelope.ts';

const Answers = Type.Record(Type.String(), Type.Unknown());
const Ttc = Type.Record(Type.String(), Type.Number());
const Variables = Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]));

const ResponseEnvelope = { ...CommandEnvelope, responseId: Type.String() };

export const ResponseCreated = Type.Object({
  type: Type.Literal('response.created'),
  ...ResponseEnvelope,
  surveyId: Type.String(),
  finished: Type.Boolean(),
  data: Answers,
  ttc: Ttc,
  variables: Variables,
  meta: Type.Record(Type.String(), Type.Unknown()),
  language: Type.Optional(Type.String()),
  endingId: Type.Optional(Type.String()),
  displayId: Type.Optional(Type.String()),
  singleUseId: Type.Optional(Type.String()),
  /** Enterprise: the identified user, and the contact id derived from it. */
  userId: Type.Optional(Type.String()),
  contactId: Type.Optional(Type.String()),
  /** The edge knew the contact (ContactKnown): the processor does not create it. */
  contactKnown: ContactKnown,
  /**
   * The contact's attributes as the edge knew them when it accepted the response: every identify
   * acknowledged before, at any edge, whether or not the contact processor applied it yet.
   */
  contactAttributes: Type.Optional(Type.Record(Type.String(), Type.String())),
  /**
   * Management creates only (imports, as Formbricks' management API takes them): when the response
   * was created and last updated, where `occurredAt` would say now. The merge orders by `clock` all
   * the same.
   */
  createdAt: Type.Optional(Type.String({ format: 'date-time' })),
  updatedAt: Type.Optional(Type.String({ format: 'date-time' })),
});
export type ResponseCreated = Static<typeof ResponseCreated>;

export const ResponseUpdated = Type.Object({
  type: Type.Literal('response.updated'),
  ...ResponseEnvelope,
  finished: Type.Optional(Type.Boolean()),
  data: Type.Optional(Answers),
  ttc: Type.Optional(Ttc),
  variables: Type.Optional(Variables),
  language: Type.Optional(Type.String()),
  endingId: Type.Optional(Type.String()),
  /**
   * Management updates only: applied to a finished response too, as Formbricks' management API
   * applies them (the widget's updates of a finished response are refused).
   */
  amendsFinished: Type.Optional(Type.Literal(true)),
});
export type ResponseUpdated = Static<typeof ResponseUpdated>;

/** A change that merges into the response's state (responses/merge.ts). */
export type ResponseChange = ResponseCreated | ResponseUpdated;

/** Deleted through the management API: the edge writes it only for a stored response. */
export const ResponseDeleted = Type.Object({
  type: Type.Literal('response.deleted'),
  ...ResponseEnvelope,
});
export type ResponseDeleted = Static<typeof ResponseDeleted>;

export const ResponseCommand = Type.Union([ResponseCreated, ResponseUpdated, ResponseDeleted]);
export type ResponseCommand = Static<typeof ResponseCommand>;
export const ResponseCommandCheck = Compile(ResponseCommand);
