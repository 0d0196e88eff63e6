// The integrations consumer of `response-events`: each `response.finished` of a linked survey becomes
// one delivery row per link (unique per response and link), and each response fact (created,
// updated, finished) one delivery row per webhook it fires (unique per fact and webhook), durable
// before the offset is committed. Sending happens in the deliverer, which retries on its own
// schedule. A response whose contact was deleted after the change went with the contact: an
// announcement of it still in flight makes no delivery (deleteContact removes the deliveries made
// before it).
import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { Envelope } from '../../events/envelope.ts';
import type { Processor } from '../../pipeline/batch-handler.ts';
import type { EntityManager } from '../../store/orm.ts';
import { withoutDeletedContacts } from '../../store/contacts.ts';
import { insertDeliveries } from '../../store/integrations.ts';
import { insertWebhookDeliveries } from '../../store/webhooks.ts';
import { deliveryTargets, fires, triggerOf, type DeliveryTargets } from '../../store/delivery-targets.ts';
import type { ResponseFact } from '../../events/response-events.ts';

/**
 * What this consumer reads of a response fact: every type, and finishes announced before facts had
 * `appliedAt` too, so that an upgrade delivers what was in flight.
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

type Targets = DeliveryTargets;

const unique = (values: string[]) => [...new Set(values)];
const isFinish = (event: AnnouncedResponse) => event.type === 'response.finished';

function targetsOf(tx: EntityManager, events: AnnouncedResponse[]): Promise<Targets> {
  return deliveryTargets(tx, {
    linkedSurveys: unique(events.filter(isFinish).map((e) => e.surveyId)),
    environments: unique(events.map((e) => e.environmentId)),
  });
}

const FACT_TYPES: readonly string[] = ['response.created', 'response.updated', 'response.finished'];
const isResponseFact = (type: string): type is ResponseFact['type'] => FACT_TYPES.includes(type);

const linksFor = (event: AnnouncedResponse, targets: Targets) =>
  isFinish(event) ? targets.links.filter((l) => l.surveyId === event.surveyId) : [];

function webhooksFor(event: AnnouncedResponse, targets: Targets) {
  if (!isResponseFact(event.type)) return [];
  const trigger = triggerOf(event.type);
  const fact = { environmentId: event.environmentId, surveyId: event.surveyId, trigger };
  return targets.webhooks.filter((w) => fires(w, fact)).map((w) => ({ webhookId: w.id, trigger }));
}

export const deliveryEnqueuer: Processor<AnnouncedResponse> = {
  schema: AnnouncedResponseCheck,
  keyOf: (event) => event.responseId,
  // Most surveys have no integration and most environments no webhook: their events are done with
  // after these reads, and claim nothing (a redelivery finds no target either).
  async relevant(tx, events) {
    const targets = await targetsOf(tx, events);
    return events.filter((e) => linksFor(e, targets).length > 0 || webhooksFor(e, targets).length > 0);
  },
  // Under a name of its own: the response processor claims the event ids of its input.
  claimIdOf: (event) => `deliveries:${event.eventId}`,
  async apply(tx, events, effects) {
    const todo = await withoutDeletedContacts(tx, events, contactOf, (e) => e.occurredAt);
    const targets = await targetsOf(tx, todo);
    await insertDeliveries(
      tx,
      todo.flatMap((event) =>
        linksFor(event, targets).map((link) => ({
          responseId: event.responseId,
          link,
          response: event.response,
          trace: effects.traceOf(event),
        })),
      ),
    );
    await insertWebhookDeliveries(
      tx,
      todo.flatMap((event) =>
        webhooksFor(event, targets).map(({ webhookId, trigger }) => ({
          webhookId,
          event: trigger,
          eventId: event.eventId,
          responseId: event.responseId,
          response: event.response,
          trace: effects.traceOf(event),
        })),
      ),
    );
  },
};

/** The contact the response is linked to, if any (the response as the processor stored it). */
function contactOf(event: AnnouncedResponse): string | undefined {
  const { contactId } = event.response;
  return typeof contactId === 'string' ? contactId : undefined;
}
