// Integrations, links and deliveries as the store keeps them.
import type { EntityManager } from '@mikro-orm/postgresql';
import { derivedId, newId } from '../ids.ts';
import type { Provider } from '../config.ts';
import { Delivery, Integration, IntegrationLink, Survey, type DeliveryStatus } from './entities.ts';
import { pageOf, type PageRequest } from './pages.ts';

export function integrationRecord(row: Integration) {
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    environmentId: row.environment.id,
    provider: row.provider,
    status: row.status,
    account: row.account,
  };
}

export function linkRecord(row: IntegrationLink) {
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    integrationId: row.integration.id,
    surveyId: row.survey.id,
    targetId: row.targetId,
    targetName: row.targetName ?? null,
    mapping: row.mapping,
  };
}

export function deliveryRecord(row: Delivery) {
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    responseId: row.responseId,
    linkId: row.link?.id ?? null,
    integrationId: row.integrationId ?? null,
    webhookId: row.webhook?.id ?? null,
    event: row.event ?? null,
    status: row.status,
    attempts: row.attempts,
    nextAttemptAt: row.nextAttemptAt.toISOString(),
    lastError: row.lastError ?? null,
    externalId: row.externalId ?? null,
  };
}

/**
 * Connecting again replaces the token of the environment's integration of that provider (same id).
 * One upsert on the (environment_id, provider) key: two first connects at once both succeed, the
 * last one's token stays, and neither meets the unique constraint.
 */
export async function saveIntegration(
  em: EntityManager,
  input: {
    environmentId: string;
    provider: Provider;
    tokenCiphertext: string;
    account: Record<string, unknown>;
  },
): Promise<Integration> {
  const fork = em.fork();
  const [row] = await fork.execute<[Record<string, unknown>]>(
    `insert into integrations (id, environment_id, provider, status, token_ciphertext, account, created_at, updated_at)
     values (?, ?, ?, 'connected', ?, ?::jsonb, now(), now())
     on conflict (environment_id, provider) do update
       set status = 'connected', token_ciphertext = excluded.token_ciphertext,
           account = excluded.account, updated_at = excluded.updated_at
     returning *`,
    [newId('int'), input.environmentId, input.provider, input.tokenCiphertext, JSON.stringify(input.account)],
  );
  return fork.map(Integration, row);
}

export function listIntegrations(em: EntityManager, environmentIds: string[], page: PageRequest) {
  return pageOf(em, Integration, { environment: { $in: environmentIds } }, page, integrationRecord);
}

export async function createLink(
  em: EntityManager,
  input: {
    integrationId: string;
    surveyId: string;
    targetId: string;
    targetName?: string;
    mapping: IntegrationLink['mapping'];
  },
): Promise<IntegrationLink> {
  const fork = em.fork();
  const link = fork.create(IntegrationLink, {
    id: newId('lnk'),
    integration: fork.getReference(Integration, input.integrationId),
    survey: fork.getReference(Survey, input.surveyId),
    targetId: input.targetId,
    targetName: input.targetName ?? null,
    mapping: input.mapping,
  });
  await fork.flush();
  return link;
}

/** The deliveries of one integration's links, or of one webhook. */
export function listDeliveries(
  em: EntityManager,
  filter: ({ integrationId: string } | { webhookId: string }) & { status?: DeliveryStatus },
  page: PageRequest,
) {
  const where = {
    ...('integrationId' in filter ? { integrationId: filter.integrationId } : { webhook: filter.webhookId }),
    ...(filter.status ? { status: filter.status } : {}),
  };
  return pageOf(em, Delivery, where, page, deliveryRecord, { orderBy: { id: 'desc' } });
}

/** Puts matching deliveries back in the queue: `chorus deliveries replay`. Returns how many. */
export async function replayDeliveries(
  em: EntityManager,
  filter: { integrationId?: string; webhookId?: string; since?: Date; status: DeliveryStatus },
): Promise<number> {
  const conditions = ['status = ?'];
  const params: unknown[] = [filter.status];
  if (filter.integrationId) {
    conditions.push('integration_id = ?');
    params.push(filter.integrationId);
  }
  if (filter.webhookId) {
    conditions.push('webhook_id = ?');
    params.push(filter.webhookId);
  }
  if (filter.since) {
    conditions.push('created_at >= ?');
    params.push(filter.since);
  }
  const rows = await em.fork().execute<{ id: string }[]>(
    `update deliveries set status = 'pending', attempts = 0, next_attempt_at = now(), last_error = null, updated_at = now()
     where ${conditions.join(' and ')} returning id`,
    params,
  );
  return rows.length;
}

/**
 * OAuth connection attempts (table `oauth_attempts`). A connect records one with the hash of its
 * ticket; the browser redeems the ticket once, binding the attempt to the hash of a nonce kept in
 * its cookie; the callback consumes the attempt once. Each step is one conditional UPDATE, so of
 * two concurrent uses exactly one wins, on whichever edge.
 */
export async function recordOAuthAttempt(
  em: EntityManager,
  input: { id: string; ticketHash: string; environmentId: string; provider: Provider; expiresAt: Date },
): Promise<void> {
  // Attempts are only useful for minutes; the pruner forgets expired ones (store/pruning.ts).
  const sql = `insert into oauth_attempts (id, ticket_hash, environment_id, provider, expires_at) values (?, ?, ?, ?, ?)`;
  await em
    .fork()
    .execute(sql, [input.id, input.ticketHash, input.environmentId, input.provider, input.expiresAt]);
}

/** Redeems a connect ticket (once, before it expires): the attempt, now bound to the nonce hash. */
export async function redeemOAuthTicket(
  em: EntityManager,
  input: { ticketHash: string; provider: Provider; nonceHash: string; expiresAt: Date },
): Promise<{ id: string; environmentId: string } | undefined> {
  const rows = await em.fork().execute<{ id: string; environment_id: string }[]>(
    `update oauth_attempts set nonce_hash = ?, authorized_at = now(), expires_at = ?
     where ticket_hash = ? and provider = ? and authorized_at is null and expires_at > now()
     returning id, environment_id`,
    [input.nonceHash, input.expiresAt, input.ticketHash, input.provider],
  );
  const row = rows[0];
  return row && { id: row.id, environmentId: row.environment_id };
}

/** Consumes an authorized attempt (once, before it expires): its environment, or undefined. */
export async function consumeOAuthAttempt(
  em: EntityManager,
  input: { id: string; provider: Provider; nonceHash: string },
): Promise<{ environmentId: string } | undefined> {
  const rows = await em.fork().execute<{ environment_id: string }[]>(
    `update oauth_attempts set consumed_at = now()
     where id = ? and provider = ? and nonce_hash = ? and authorized_at is not null
       and consumed_at is null and expires_at > now()
     returning environment_id`,
    [input.id, input.provider, input.nonceHash],
  );
  const row = rows[0];
  return row && { environmentId: row.environment_id };
}

export interface SurveyLink {
  id: string;
  surveyId: string;
  integrationId: string;
}

/** What a new delivery is made of besides its target: see NewDelivery. */
export interface NewDelivery {
  responseId: string;
  response: Record<string, unknown>;
  /** The trace to continue when it is sent, if there is one. */
  trace: Readonly<Record<string, string>>;
  /** When the command that caused it was made: the time in its id. */
  madeAt: Date;
  /**
   * Its place among what its command made (its fact's, created before updated before finished):
   * the order of its id after the time, so that a response's deliveries are taken in that order.
   */
  rank: number;
  /** Made again by a replay of the log after a restore (enqueue-deliveries.ts): it may have been sent. */
  replayed?: boolean;
}

/**
 * A delivery's id, derived from what it delivers (`parts`) and when its command was made: made
 * again, a delivery has the same id, which the providers and receivers know it by; and ids sort by
 * time (newest first in the lists), then by rank.
 */
export function deliveryId(made: Pick<NewDelivery, 'madeAt' | 'rank'>, ...parts: string[]): string {
  return derivedId('dlv', made.madeAt.getTime(), made.rank, ...parts);
}

/**
 * The columns of a new delivery's state: `pending`; or, made again by a replay and maybe sent
 * before, a send claimed when its command was made and interrupted, which the deliverer settles by
 * asking the provider (integrations/delivery/deliverer.ts) once the lease from then has passed.
 */
export const SEND_STATE = 'status, claimed_at, updated_at';
export const SEND_STATE_VALUES = '?, ?, coalesce(?::timestamptz, now())';
export function sendState(d: NewDelivery): [DeliveryStatus, Date | null, Date | null] {
  return d.replayed ? ['sending', d.madeAt, d.madeAt] : ['pending', null, null];
}

/** One delivery per response and link, ever: a redelivered announcement adds none. */
export async function insertDeliveries(
  tx: EntityManager,
  deliveries: readonly (NewDelivery & { link: SurveyLink })[],
): Promise<void> {
  if (deliveries.length === 0) return;
  await tx.execute(
    `insert into deliveries (id, response_id, link_id, integration_id, response, trace_context, ${SEND_STATE})
     values ${deliveries.map(() => `(?, ?, ?, ?, ?::jsonb, ?::jsonb, ${SEND_STATE_VALUES})`).join(', ')}
     on conflict (response_id, link_id) do nothing`,
    deliveries.flatMap((d) => [
      deliveryId(d, d.responseId, d.link.id),
      d.responseId,
      d.link.id,
      d.link.integrationId,
      JSON.stringify(d.response),
      Object.keys(d.trace).length > 0 ? JSON.stringify(d.trace) : null,
      ...sendState(d),
    ]),
  );
}
