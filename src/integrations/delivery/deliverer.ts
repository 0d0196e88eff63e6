// Sends pending deliveries, BATCH at a time: round after round while rounds are full, then on a timer.
//
// Exactly one message or page per response and link: a delivery is claimed by switching it to
// `sending` in its own committed statement (SKIP LOCKED, so several workers share the queue) before
// the provider is called. A provider failure with a definite answer (5xx, 429, unreachable) puts it
// back to `pending` with a jittered exponential backoff stored in the row (so it survives restarts);
// a permanent failure (4xx, revoked token) marks it `failed`, writes a dead letter and, for a dead
// token, marks the integration as needing a reconnect.
//
// A worker that died mid-call leaves `sending` behind, and the provider may or may not have the
// message. After a lease (longer than any provider call) another worker asks the provider: every
// Slack message carries its delivery id as message metadata, and every Notion page a marker block
// with it, looked for among what was created since the send was claimed (`claimed_at`, which only
// the claim sets: a recovery renews the lease in `updated_at`, so one that dies or fails leaves the
// next one the original window). Found: `delivered`. Not there: `pending`, sent again. When the
// provider cannot tell (no history scope, provider down): `failed`, replayable, because sending
// blindly could post a second message.
//
// A webhook delivery (webhook/) goes the same way, but a receiver cannot be asked about an
// interrupted send: it is sent again, with the same `webhook-id`, which receivers deduplicate on.
//
// A database restored from a backup holds the deliveries pending at the backup's moment, which may
// have been sent since: each round first checks whether the store was restored (store/incarnation.ts)
// and, if so, settles those as interrupted sends. What the processors deliver again as they replay
// the log is recorded the same way (processors/responses/enqueue-deliveries.ts).
//
// An integration marked `needs_reconnect` is paused: its due deliveries are not claimed and stay
// `pending` until it is connected again (saveIntegration sets it back to `connected`), then they go
// out with the next round. The delivery that met the dead token stays `failed`: replay it.
import type { EntityManager, Orm } from '../../store/orm.ts';
import { Delivery, IntegrationLink, Survey, Webhook } from '../../store/entities.ts';
import type { Logger } from '../../logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import type { Outputs } from '../../kafka/outputs.ts';
import { failActiveSpan, inSpan } from '../../observability/tracing.ts';
import { questionsOf } from '../../surveys/definition.ts';
import { ProviderError, type ProviderFailure } from '../failure.ts';
import { isTransient } from '../../transient.ts';
import { decryptToken, openSecret } from '../secrets.ts';
import type { Destination, Destinations } from '../destination.ts';
import type { WebhookDestination } from '../webhook/destination.ts';
import { settleRestore } from '../../store/incarnation.ts';

const BATCH = 20;
/** Margin for clocks and Notion's minute-rounded created_time when looking for an interrupted send. */
const LOOKBACK_MS = 2 * 60_000;
const BASE_DELAY_MS = 1_000;
const MAX_DELAY_MS = 15 * 60_000;

export interface DelivererDeps {
  orm: Orm;
  /** Reads provider tokens; without it only webhooks are sent (Slack and Notion deliveries wait). */
  encryptionKey: Buffer | undefined;
  destinations: Destinations;
  webhooks: WebhookDestination;
  deadLetters: Outputs['deadLetters'];
  pollMs: number;
  maxAttempts: number;
  leaseSeconds: number;
  metrics?: Metrics;
  logger: Logger;
}

export interface RunningDeliverer {
  /** One round: what is due is sent (tests call it to avoid waiting for the timer). */
  runOnce(): Promise<number>;
  stop(): Promise<void>;
}

export function startDeliverer(deps: DelivererDeps): RunningDeliverer {
  const log = deps.logger.child({ component: 'deliverer' });
  let stopped = false;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const runOnce = async (): Promise<number> => {
    const uncertain = await settleRestore(deps.orm.em.fork());
    if (uncertain !== undefined)
      log.warn(
        { deliveries: uncertain },
        `the database was restored from a backup: ${uncertain} deliveries pending at its moment are asked about at their providers before they are sent`,
      );
    const interrupted = await claimInterrupted(deps.orm.em, deps.leaseSeconds);
    await Promise.all(interrupted.map((row) => recover(deps, row.id, row.claimedAt, log)));
    const claimed = await claimDue(deps.orm.em, deps.encryptionKey !== undefined);
    await Promise.all(claimed.map((id) => deliver(deps, id, log)));
    return claimed.length;
  };
  const tick = () => {
    if (stopped) return;
    running = runOnce()
      .catch((err: unknown) => {
        log.warn({ err }, 'delivery round failed; trying again');
        return 0;
      })
      .then((claimed) => {
        running = undefined;
        // A full round leaves more due: the next one goes at once, so the queue drains at the
        // speed of the receivers, not at BATCH per poll.
        if (!stopped) timer = setTimeout(tick, claimed === BATCH ? 0 : deps.pollMs);
      });
  };
  timer = setTimeout(tick, 0);

  return {
    runOnce,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/**
 * Due `pending` deliveries, switched to `sending`, with the time of the claim (the send starts after
 * it). Those of an integration that needs a reconnect are left alone: with a dead token every
 * attempt would fail and dead-letter, so they wait, still due. So do all integrations' deliveries
 * while no token can be read (`withTokens` false: no ENCRYPTION_KEY); webhooks' go on.
 */
async function claimDue(em: EntityManager, withTokens: boolean): Promise<string[]> {
  const rows = await em.fork().execute<{ id: string }[]>(
    `update deliveries set status = 'sending', attempts = attempts + 1, claimed_at = now(), updated_at = now()
     where id in (select d.id from deliveries d
                  where d.status = 'pending' and d.next_attempt_at <= now()
                    and (d.webhook_id is not null or ?)
                    and not exists (select 1 from integrations i
                                    where i.id = d.integration_id and i.status = 'needs_reconnect')
                  order by d.next_attempt_at, d.id limit ${BATCH} for update of d skip locked)
     returning id`,
    [withTokens],
  );
  // Started in the order of their ids: a response's created webhook before its finished one.
  return rows.map((r) => r.id).sort();
}

/**
 * Deliveries whose worker died mid-send (in `sending` past the lease), with the time their send was
 * claimed. Taking them renews the lease (`updated_at`), so two workers never look into the same
 * one; the claim time stays, so a recovery that is itself interrupted (it dies, or our store fails)
 * leaves the next one the window that holds the send.
 */
async function claimInterrupted(em: EntityManager, leaseSeconds: number) {
  // A row without a claim time (none should be) is searched from its creation: wider, never too late.
  const rows = await em.fork().execute<{ id: string; claimed_at: Date }[]>(
    `update deliveries d set updated_at = now()
     from (select id from deliveries
           where status = 'sending' and updated_at < now() - make_interval(secs => ?)
           limit ${BATCH} for update skip locked) old
     where d.id = old.id
     returning d.id, coalesce(d.claimed_at, d.created_at) as claimed_at`,
    [leaseSeconds],
  );
  return rows.map((r) => ({ id: r.id, claimedAt: new Date(r.claimed_at) }));
}

/** Settles an interrupted send by asking the provider whether it arrived. */
async function recover(deps: DelivererDeps, id: string, claimedAt: Date, log: Logger): Promise<void> {
  const em = deps.orm.em.fork();
  const delivery = await load(em, id);
  if (!delivery) return;
  try {
    // A webhook receiver cannot be asked: sent again, and deduplicated by its `webhook-id`.
    const externalId = delivery.webhook
      ? undefined
      : await findSent(deps, em, delivery, linkOf(delivery), new Date(claimedAt.getTime() - LOOKBACK_MS));
    if (externalId) {
      em.assign(delivery, { status: 'delivered', externalId, lastError: null, updatedAt: new Date() });
      deps.metrics?.deliveries.inc({ provider: providerOf(delivery), outcome: 'delivered' });
    } else {
      em.assign(delivery, {
        status: 'pending',
        nextAttemptAt: new Date(),
        lastError: delivery.webhook
          ? 'interrupted while sending; sent again with the same webhook-id'
          : 'interrupted while sending; the provider has no such message, so it is sent again',
        updatedAt: new Date(),
      });
    }
    await em.flush();
    log.info({ deliveryId: id, found: externalId !== undefined }, 'interrupted delivery settled');
  } catch (error) {
    if (!(error instanceof ProviderError) && isTransient(error)) {
      // Our store, not the provider, failed (PostgreSQL unreachable): the row stays `sending` with
      // the lease just renewed, and is asked about again after the next lease, from the same
      // claim time.
      log.warn({ err: error, deliveryId: id }, 'could not settle an interrupted delivery; trying later');
      return;
    }
    const { reason } = failureOf(error);
    await recordFailure(
      deps,
      em,
      delivery,
      {
        kind: 'permanent',
        reason: `interrupted while sending, and the provider could not tell whether it arrived (${reason}): not sent again automatically; replay it to resend`,
      },
      log,
    );
  }
}

async function deliver(deps: DelivererDeps, id: string, log: Logger): Promise<void> {
  const em = deps.orm.em.fork();
  const delivery = await load(em, id);
  if (!delivery) return; // its link, integration or webhook was deleted meanwhile
  const provider = providerOf(delivery);
  // Continues the trace of the response it sends (the HTTP request that finished it).
  await inSpan(
    'deliver',
    {
      parent: delivery.traceContext,
      attributes: { 'chorus.delivery.id': id, 'chorus.integration.provider': provider },
    },
    async () => {
      let externalId: string;
      try {
        const send = await prepare(deps, em, delivery);
        externalId = await send();
      } catch (error) {
        const failure = failureOf(error);
        failActiveSpan(`delivery failed (${failure.kind})`);
        await recordFailure(deps, em, delivery, failure, log);
        return;
      }
      // Outside the try: the provider has it now, so a failure to record that must not be taken for
      // a failed send (it would be sent again). The row stays `sending`; after the lease, recover()
      // finds the message or page and marks it delivered.
      em.assign(delivery, { status: 'delivered', externalId, lastError: null, updatedAt: new Date() });
      await em.flush();
      deps.metrics?.deliveries.inc({ provider, outcome: 'delivered' });
      log.info({ deliveryId: id, provider }, 'delivered');
    },
  );
}

/**
 * What an error thrown while preparing or sending a delivery means for it. Providers' errors carry
 * their own classification. Of the others, a transient one (PostgreSQL unreachable while loading the
 * survey, a serialization conflict) is retried like a provider outage; anything else is a bug or
 * bad data (a token that does not decrypt), which no retry fixes.
 */
export function failureOf(error: unknown): ProviderFailure {
  if (error instanceof ProviderError) return error.failure;
  const message = error instanceof Error ? error.message : String(error);
  if (isTransient(error)) return { kind: 'retry', reason: `transient: ${message}` };
  return { kind: 'permanent', reason: `unexpected: ${message}` };
}

/** A delivery with its link and integration, or its webhook. */
function load(em: EntityManager, id: string) {
  return em.findOne(Delivery, { id }, { populate: ['link', 'link.integration', 'webhook'] });
}

/** The metrics' and traces' name of where a delivery goes: `slack`, `notion` or `webhook`. */
function providerOf(delivery: Delivery): string {
  return delivery.webhook ? 'webhook' : linkOf(delivery).integration.provider;
}

/** The link of a delivery that is not a webhook's (each row names exactly one of them). */
function linkOf(delivery: Delivery): IntegrationLink {
  if (!delivery.link) throw new Error(`delivery ${delivery.id} has neither a link nor a webhook`);
  return delivery.link;
}

function destinationOf(deps: DelivererDeps, link: IntegrationLink): Destination {
  const { provider } = link.integration;
  const destination = deps.destinations[provider];
  if (!destination)
    throw new ProviderError({ kind: 'retry', reason: `${provider} is not configured on this worker` });
  return destination;
}

/**
 * What one delivery sends, ready to go: a message or a page built from the survey and the stored
 * response, or a webhook's signed POST.
 */
async function prepare(
  deps: DelivererDeps,
  em: EntityManager,
  delivery: Delivery,
): Promise<() => Promise<string>> {
  if (delivery.webhook) return prepareWebhook(deps, delivery, delivery.webhook);
  const link = linkOf(delivery);
  const destination = destinationOf(deps, link);
  const survey = await em.findOneOrFail(Survey, { id: link.survey.id });
  const send = destination.prepare({
    surveyName: survey.name,
    questions: questionsOf({ blocks: survey.blocks }),
    mapping: link.mapping,
    data: (delivery.response.data ?? {}) as Record<string, unknown>,
  });
  const token = tokenOf(deps, link);
  return () => send(token, link.targetId, delivery.id);
}

/** The link's provider token (its deliveries are claimed only while ENCRYPTION_KEY is set). */
function tokenOf(deps: DelivererDeps, link: IntegrationLink): string {
  if (!deps.encryptionKey) throw new Error('provider tokens cannot be read: ENCRYPTION_KEY is not set');
  return decryptToken(deps.encryptionKey, link.integration.tokenCiphertext);
}

function prepareWebhook(deps: DelivererDeps, delivery: Delivery, webhook: Webhook) {
  const { event } = delivery;
  if (!event) throw new Error(`webhook delivery ${delivery.id} has no event`);
  const send = {
    deliveryId: delivery.id,
    webhookId: webhook.id,
    url: webhook.url,
    secret: openSecret(deps.encryptionKey, webhook.secretCiphertext),
    event,
    response: delivery.response,
  };
  return () => inSpan('webhook POST', { kind: 'client' }, () => deps.webhooks.send(send));
}

/** The id of what an interrupted send created, if the provider has it. */
async function findSent(
  deps: DelivererDeps,
  em: EntityManager,
  delivery: Delivery,
  link: IntegrationLink,
  since: Date,
): Promise<string | undefined> {
  const token = tokenOf(deps, link);
  // Only deliveries settled since the claim can have recorded something created since then.
  const taken = async () => {
    const recorded = await em.find(
      Delivery,
      { link, externalId: { $ne: null }, id: { $ne: delivery.id }, updatedAt: { $gte: since } },
      { fields: ['externalId'] },
    );
    return new Set(recorded.map((d) => d.externalId!));
  };
  return destinationOf(deps, link).findSent(token, link.targetId, delivery.id, since, taken);
}

async function recordFailure(
  deps: DelivererDeps,
  em: EntityManager,
  delivery: Delivery,
  failure: ProviderFailure,
  log: Logger,
): Promise<void> {
  const integration = delivery.link?.integration;
  const exhausted = delivery.attempts >= deps.maxAttempts;
  const outcome =
    failure.kind === 'retry' && !exhausted
      ? 'retry'
      : failure.kind === 'reconnect'
        ? 'needs_reconnect'
        : 'failed';
  deps.metrics?.deliveries.inc({ provider: providerOf(delivery), outcome });
  if (failure.kind === 'retry' && !exhausted) {
    const ceiling = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (delivery.attempts - 1));
    const delay = Math.max(failure.retryAfterMs ?? 0, ceiling / 2 + Math.random() * (ceiling / 2));
    em.assign(delivery, {
      status: 'pending',
      nextAttemptAt: new Date(Date.now() + delay),
      lastError: failure.reason,
      updatedAt: new Date(),
    });
    await em.flush();
    log.warn(
      {
        deliveryId: delivery.id,
        attempt: delivery.attempts,
        retryInMs: Math.round(delay),
        reason: failure.reason,
      },
      'delivery will be retried',
    );
    return;
  }
  const reason =
    exhausted && failure.kind === 'retry'
      ? `gave up after ${delivery.attempts} attempts: ${failure.reason}`
      : failure.reason;
  em.assign(delivery, { status: 'failed', lastError: reason, updatedAt: new Date() });
  if (failure.kind === 'reconnect' && integration)
    em.assign(integration, { status: 'needs_reconnect', updatedAt: new Date() });
  await em.flush();
  log.warn({ deliveryId: delivery.id, reason }, 'delivery failed');
  deps.metrics?.kafka.deadLettered.inc({ reason: 'delivery_failed' });
  await deps.deadLetters.publish({
    type: 'delivery.failed',
    version: 1,
    occurredAt: new Date().toISOString(),
    reason,
    deliveryId: delivery.id,
    responseId: delivery.responseId,
    ...(delivery.webhook
      ? { webhookId: delivery.webhook.id }
      : { linkId: linkOf(delivery).id, integrationId: integration?.id }),
  });
}
