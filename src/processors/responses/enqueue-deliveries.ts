// Step of the response pipeline: every change the batch announces on response-events becomes, in
// the same transaction, the deliveries it makes. A `response.finished` makes one row per link of
// its survey (Slack, Notion); every fact (created, updated, finished) one row per webhook it fires.
// The rows commit with the change or not at all, so a delivery exists exactly when its change does:
// a batch that fails leaves none and is redone whole; a response refused in the batch (single-use
// id taken, contact deleted) announces nothing and so is delivered nowhere; deleting a contact
// later takes its deliveries with it (store/contacts.ts, deleteContact, which waits for this
// transaction through the response rows and the contact's lock). The unique keys stay
// ((response, link) and (webhook, fact)): a row is recorded once whatever else inserts it. The
// deliverer (integrations/delivery) sends the rows.
import type { ResponseChangeFact } from '../../events/response-events.ts';
import type { TraceHeaders } from '../../observability/tracing.ts';
import { deliveryTargets, fires, triggerOf, type DeliveryTargets } from '../../store/delivery-targets.ts';
import { insertDeliveries } from '../../store/integrations.ts';
import type { EntityManager } from '../../store/orm.ts';
import { insertWebhookDeliveries } from '../../store/webhooks.ts';

/** A fact the batch announces, with the trace of the command that caused it (sends continue it). */
export interface AnnouncedFact {
  fact: ResponseChangeFact;
  trace: TraceHeaders;
}

type LinkDelivery = Parameters<typeof insertDeliveries>[1][number];
type WebhookDelivery = Parameters<typeof insertWebhookDeliveries>[1][number];

/** Records the deliveries of `announced` in the transaction of `tx`. */
export async function enqueueDeliveries(
  tx: EntityManager,
  announced: readonly AnnouncedFact[],
): Promise<void> {
  const facts = announced.map((a) => a.fact);
  const targets = await deliveryTargets(tx, {
    // Only a finish goes to links: a batch without one does not look for them.
    linkedSurveys: unique(facts.filter(isFinish).map((f) => f.surveyId)),
    environments: unique(facts.map((f) => f.environmentId)),
  });
  if (targets.links.length === 0 && targets.webhooks.length === 0) return;
  const { links, webhooks } = deliveriesOf(announced, targets);
  await insertDeliveries(tx, links);
  await insertWebhookDeliveries(tx, webhooks);
}

/** The delivery rows of `announced` to `targets`, in the order of the facts. Pure. */
export function deliveriesOf(
  announced: readonly AnnouncedFact[],
  targets: DeliveryTargets,
): { links: LinkDelivery[]; webhooks: WebhookDelivery[] } {
  const links: LinkDelivery[] = [];
  const webhooks: WebhookDelivery[] = [];
  for (const { fact, trace } of announced) {
    const { responseId, surveyId, environmentId, response } = fact;
    if (isFinish(fact))
      for (const link of targets.links)
        if (link.surveyId === surveyId) links.push({ responseId, link, response, trace });
    const trigger = triggerOf(fact.type);
    for (const webhook of targets.webhooks)
      if (fires(webhook, { environmentId, surveyId, trigger }))
        webhooks.push({
          webhookId: webhook.id,
          event: trigger,
          eventId: fact.eventId,
          responseId,
          response,
          trace,
        });
  }
  return { links, webhooks };
}

const isFinish = (fact: ResponseChangeFact) => fact.type === 'response.finished';
const unique = (values: readonly string[]) => [...new Set(values)];
