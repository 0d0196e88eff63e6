// Step of the response pipeline: every change the batch announces on response-events becomes, in
// the same transaction, the deliveries it makes. A `response.finished` makes one row per link of
// its survey (Slack, Notion); every fact (created, updated, finished) one row per webhook it fires.
// The rows commit with the change or not at all, so a delivery exists exactly when its change does:
// a batch that fails leaves none and is redone whole; a response refused in the batch (single-use
// id taken, contact deleted) announces nothing and so is delivered nowhere; deleting a contact
// later takes its deliveries with it (store/contacts.ts, deleteContact, which waits for this
// transaction through the response rows and the contact's lock). The unique keys stay
// ((response, link) and (webhook, fact)): a row is recorded once whatever else inserts it, and its id
// is derived from them: made again, it has the same id. The deliverer (integrations/delivery) sends
// the rows. A fact announced again by a replay of the log after a restore of the database may have
// been delivered before the backup was restored: its rows are recorded as sends interrupted when the
// command was made, so that the deliverer asks Slack and Notion whether they have them before it
// sends (webhooks go again with the same `webhook-id`, which receivers deduplicate on).
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
  /** Its command was applied once already, before a restore of the database. */
  replayed: boolean;
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
  for (const { fact, trace, replayed } of announced) {
    const { responseId, surveyId, environmentId, response } = fact;
    const made = { madeAt: new Date(fact.occurredAt), rank: RANK_OF_FACT[fact.type], replayed };
    if (isFinish(fact))
      for (const link of targets.links)
        if (link.surveyId === surveyId) links.push({ responseId, link, response, trace, ...made });
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
          ...made,
        });
  }
  return { links, webhooks };
}

const isFinish = (fact: ResponseChangeFact) => fact.type === 'response.finished';
/** A command that creates and finishes a response: its created webhook is taken before the others. */
const RANK_OF_FACT: Readonly<Record<ResponseChangeFact['type'], number>> = {
  'response.created': 0,
  'response.updated': 1,
  'response.finished': 2,
};
const unique = (values: readonly string[]) => [...new Set(values)];
