// The integrations consumer of `response-events`: each `response.finished` of a linked survey becomes
// one delivery row per link (unique per response and link), durable before the offset is committed.
// Sending happens in the deliverer, which retries on its own schedule. A response whose contact was
// deleted after it finished went with the contact: an announcement of it still in flight makes no
// delivery (deleteContact removes the deliveries made before it).
import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { Envelope } from '../../events/envelope.ts';
import type { Processor } from '../../pipeline/batch-handler.ts';
import { withoutDeletedContacts } from '../../store/contacts.ts';
import { insertDeliveries, linksOfSurveys } from '../../store/integrations.ts';

/**
 * What this consumer reads of a response fact: every type (it keeps the finishes), and finishes
 * announced before facts had `appliedAt` too, so that an upgrade delivers what was in flight.
 */
const AnnouncedResponse = Type.Object({
  type: Type.String(),
  ...Envelope,
  responseId: Type.String(),
  surveyId: Type.String(),
  response: Type.Record(Type.String(), Type.Unknown()),
});
type AnnouncedResponse = Static<typeof AnnouncedResponse>;
const AnnouncedResponseCheck = Compile(AnnouncedResponse);

const surveysOf = (events: readonly AnnouncedResponse[]) => [...new Set(events.map((e) => e.surveyId))];

export const deliveryEnqueuer: Processor<AnnouncedResponse> = {
  schema: AnnouncedResponseCheck,
  keyOf: (event) => event.responseId,
  // Most surveys have no integration: their events are done with after this one read, and claim
  // nothing (a redelivery finds no link either).
  async relevant(tx, events) {
    const finishes = events.filter((e) => e.type === 'response.finished');
    if (finishes.length === 0) return [];
    const linked = new Set((await linksOfSurveys(tx, surveysOf(finishes))).map((l) => l.surveyId));
    return finishes.filter((e) => linked.has(e.surveyId));
  },
  // Under a name of its own: the response processor claims the event ids of its input.
  claimIdOf: (event) => `deliveries:${event.eventId}`,
  async apply(tx, events, effects) {
    const todo = await withoutDeletedContacts(tx, events, contactOf, (e) => e.occurredAt);
    const links = await linksOfSurveys(tx, surveysOf(todo));
    await insertDeliveries(
      tx,
      todo.flatMap((event) =>
        links
          .filter((l) => l.surveyId === event.surveyId)
          .map((link) => ({
            responseId: event.responseId,
            link,
            response: event.response,
            trace: effects.traceOf(event),
          })),
      ),
    );
  },
};

/** The contact the finished response is linked to, if any (the response as the processor stored it). */
function contactOf(event: AnnouncedResponse): string | undefined {
  const { contactId } = event.response;
  return typeof contactId === 'string' ? contactId : undefined;
}
