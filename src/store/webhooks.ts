// Webhooks as the store keeps them, and their deliveries (which of them a response fact fires is in
// delivery-targets.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import { newId } from '../ids.ts';
import { deliveryId, SEND_STATE, SEND_STATE_VALUES, sendState, type NewDelivery } from './integrations.ts';
import { Environment, Webhook, type WebhookTrigger } from './entities.ts';
import { pageOf, timedPage, type PageRequest, type TimedQuery } from './pages.ts';

/** A webhook as the management API shows it: never its secret (that is shown once, at creation). */
export function webhookRecord(row: Webhook) {
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    environmentId: row.environment.id,
    name: row.name ?? null,
    url: row.url,
    source: row.source,
    triggers: row.triggers,
    surveyIds: row.surveyIds,
  };
}

export async function createWebhook(
  em: EntityManager,
  input: {
    environmentId: string;
    name: string | null;
    url: string;
    source: Webhook['source'];
    triggers: WebhookTrigger[];
    surveyIds: string[];
    secretCiphertext: string;
  },
): Promise<Webhook> {
  const fork = em.fork();
  const { environmentId, ...fields } = input;
  const row = fork.create(Webhook, {
    id: newId('whk'),
    environment: fork.getReference(Environment, environmentId),
    ...fields,
  });
  await fork.flush();
  return row;
}

export function listWebhooks(em: EntityManager, environmentIds: string[], page: PageRequest) {
  return pageOf(em, Webhook, { environment: { $in: environmentIds } }, page, webhookRecord);
}

/** A page of webhooks by Formbricks' v2 list query; with `surveyIds`, those naming any of them. */
export function queryWebhooks<R>(
  em: EntityManager,
  q: TimedQuery,
  surveyIds: readonly string[],
  toRecord: (row: Webhook) => R,
) {
  return timedPage(
    em,
    Webhook,
    q,
    surveyIds.length > 0 ? { surveyIds: { $hasSomeKeys: surveyIds } } : {},
    toRecord,
  );
}

/** Changes what a webhook is; its secret stays. */
export async function changeWebhook(
  em: EntityManager,
  row: Webhook,
  change: Partial<Pick<Webhook, 'name' | 'url' | 'source' | 'triggers' | 'surveyIds'>>,
): Promise<void> {
  em.assign(row, { ...change, updatedAt: new Date() });
  await em.flush();
}

/** The ids of the surveys among `surveyIds` that are in the environment. */
export async function surveysOfEnvironment(
  em: EntityManager,
  environmentId: string,
  surveyIds: readonly string[],
): Promise<Set<string>> {
  if (surveyIds.length === 0) return new Set();
  const rows = await em
    .fork()
    .execute<{ id: string }[]>(
      `select id from surveys where environment_id = ? and id in (${surveyIds.map(() => '?').join(', ')})`,
      [environmentId, ...surveyIds],
    );
  return new Set(rows.map((r) => r.id));
}

/** One delivery per response fact and webhook, ever: a redelivered fact adds none. */
export async function insertWebhookDeliveries(
  tx: EntityManager,
  deliveries: readonly (NewDelivery & { webhookId: string; event: WebhookTrigger; eventId: string })[],
): Promise<void> {
  if (deliveries.length === 0) return;
  await tx.execute(
    `insert into deliveries (id, response_id, webhook_id, event, event_id, response, trace_context, ${SEND_STATE})
     values ${deliveries.map(() => `(?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ${SEND_STATE_VALUES})`).join(', ')}
     on conflict (webhook_id, event_id) do nothing`,
    deliveries.flatMap((d) => [
      deliveryId(d, d.webhookId, d.eventId),
      d.responseId,
      d.webhookId,
      d.event,
      d.eventId,
      JSON.stringify(d.response),
      Object.keys(d.trace).length > 0 ? JSON.stringify(d.trace) : null,
      ...sendState(d),
    ]),
  );
}
