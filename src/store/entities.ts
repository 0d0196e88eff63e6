// Entities of the store, defined without decorators. Their tables are created by the checked-in
// migrations in ./migrations; a test compares the two so they cannot drift apart.
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { PROVIDERS } from '../config.ts';
import { SURVEY_STATUSES } from '../events/survey-events.ts';
import type { ResponseClocks } from '../responses/state.ts';
import type { Filters } from '../segments/filters.ts';

export const PLANS = ['free', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];
export const PERMISSIONS = ['read', 'write', 'manage'] as const;
export type Permission = (typeof PERMISSIONS)[number];
export { SURVEY_STATUSES, type SurveyStatus } from '../events/survey-events.ts';

const timestamps = {
  createdAt: p.datetime().defaultRaw('now()'),
  updatedAt: p.datetime().defaultRaw('now()'),
};

export const Organization = defineEntity({
  name: 'Organization',
  tableName: 'organizations',
  properties: {
    id: p.string().primary(),
    name: p.string(),
    plan: p.enum([...PLANS]),
    ...timestamps,
  },
});
export type Organization = InferEntity<typeof Organization>;

export const Environment = defineEntity({
  name: 'Environment',
  tableName: 'environments',
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    name: p.string(),
    /** The widget settings (placement, overlay, …) the management API stored; null: the defaults. */
    widgetSettings: p.json<Record<string, unknown>>().nullable(),
    ...timestamps,
  },
});
export type Environment = InferEntity<typeof Environment>;

/** An API key of an organization; only the SHA-256 of the key is stored. */
export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: p.string().primary(),
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    label: p.string(),
    keyHash: p.string().unique(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
});
export type ApiKey = InferEntity<typeof ApiKey>;

/** What one API key may do in one environment (GET needs read, POST/PUT write, DELETE manage). */
export const ApiKeyEnvironment = defineEntity({
  name: 'ApiKeyEnvironment',
  tableName: 'api_key_environments',
  properties: {
    apiKey: () => p.manyToOne(ApiKey).primary().deleteRule('cascade'),
    environment: () => p.manyToOne(Environment).primary().deleteRule('cascade'),
    permission: p.enum([...PERMISSIONS]),
  },
});
export type ApiKeyEnvironment = InferEntity<typeof ApiKeyEnvironment>;

/**
 * A segment of contacts (docs/segments.md): a filter tree. A private one holds one app survey's own
 * targeting (its title is the survey id, and it goes with the survey); a public one is named,
 * reusable and shared by the surveys that point at it.
 */
export const Segment = defineEntity({
  name: 'Segment',
  tableName: 'segments',
  uniques: [{ properties: ['environment', 'title'] }],
  properties: {
    id: p.string().primary(),
    environment: () => p.manyToOne(Environment).deleteRule('cascade'),
    title: p.string(),
    description: p.text().nullable(),
    isPrivate: p.boolean().default(true),
    filters: p.json<Filters>(),
    ...timestamps,
  },
});
export type Segment = InferEntity<typeof Segment>;

export const Survey = defineEntity({
  name: 'Survey',
  tableName: 'surveys',
  // Lists page through one tenant's surveys in id (creation) order.
  indexes: [{ properties: ['environment', 'id'] }],
  properties: {
    id: p.string().primary(),
    environment: () => p.manyToOne(Environment).deleteRule('cascade'),
    name: p.string(),
    type: p.string().default('link'),
    status: p.enum([...SURVEY_STATUSES]).default('draft'),
    blocks: p.json<unknown[]>(),
    endings: p.json<unknown[]>(),
    quotas: p.json<unknown[]>(),
    isCaptureIpEnabled: p.boolean().default(false),
    /** The fields only the widget reads (welcome card, triggers, display options …), kept as sent. */
    widget: p.json<Record<string, unknown>>().nullable(),
    /** Its targeting: app surveys have one (their private segment, or a public one); others none. */
    segment: () => p.manyToOne(Segment).nullable().deleteRule('set null').index(),
    ...timestamps,
  },
});
export type Survey = InferEntity<typeof Survey>;

export const ACTION_CLASS_TYPES = ['code', 'noCode'] as const;
export type ActionClassType = (typeof ACTION_CLASS_TYPES)[number];

/** What the widget listens for (a page view, a click, a `track(key)` call), per environment. */
export const ActionClass = defineEntity({
  name: 'ActionClass',
  tableName: 'action_classes',
  uniques: [{ properties: ['environment', 'name'] }, { properties: ['environment', 'key'] }],
  properties: {
    id: p.string().primary(),
    environment: () => p.manyToOne(Environment).deleteRule('cascade'),
    name: p.string(),
    description: p.text().nullable(),
    type: p.enum([...ACTION_CLASS_TYPES]),
    key: p.string().nullable(),
    noCodeConfig: p.json<Record<string, unknown>>().nullable(),
    ...timestamps,
  },
});
export type ActionClass = InferEntity<typeof ActionClass>;

/** An index of `responses` on a column, of the rows where it is set, named as MikroORM names its own. */
function partialIndex(column: string, { unique = false, by = [] as string[] } = {}) {
  const columns = [...by, column];
  const name = `responses_${columns.join('_')}_${unique ? 'unique' : 'index'}`;
  const list = columns.map((c) => `"${c}"`).join(', ');
  return {
    name,
    expression: `create ${unique ? 'unique ' : ''}index "${name}" on "responses" (${list}) where "${column}" is not null`,
  };
}

/**
 * A survey response as folded from its events by the response processor (the only writer).
 * `surveyId` is a plain column, not a foreign key: responses outlive a deleted survey.
 */
export const Response = defineEntity({
  name: 'Response',
  tableName: 'responses',
  indexes: [
    { properties: ['environmentId', 'id'] },
    { properties: ['surveyId', 'id'] },
    // Only the responses that have one: most have no contact, display or single-use id, and no query
    // looks for a NULL (three index entries fewer per stored response).
    partialIndex('contact_id'),
    partialIndex('display_id'),
    // A single-use link answers once per survey.
    partialIndex('single_use_id', { unique: true, by: ['survey_id'] }),
  ],
  properties: {
    id: p.string().primary(),
    environmentId: p.string(),
    surveyId: p.string(),
    finished: p.boolean(),
    data: p.json<Record<string, unknown>>(),
    ttc: p.json<Record<string, number>>(),
    variables: p.json<Record<string, string | number>>(),
    meta: p.json<Record<string, unknown>>(),
    language: p.string().nullable(),
    endingId: p.string().nullable(),
    displayId: p.string().nullable(),
    singleUseId: p.string().nullable(),
    contactId: p.string().nullable(),
    contactAttributes: p.json<Record<string, string>>().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    /** The processor's merge bookkeeping (responses/state.ts), never read by management reads. */
    clocks: p.json<ResponseClocks>().lazy().hidden().defaultRaw(`'{}'`),
  },
});
export type Response = InferEntity<typeof Response>;

/** A "survey was displayed" record, linked to the response that followed it, if any. */
export const Display = defineEntity({
  name: 'Display',
  tableName: 'displays',
  indexes: [{ properties: ['surveyId', 'id'] }, { properties: ['contactId'] }],
  properties: {
    id: p.string().primary(),
    environmentId: p.string().index(),
    surveyId: p.string(),
    contactId: p.string().nullable(),
    responseId: p.string().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type Display = InferEntity<typeof Display>;

/** An identified user of one environment; its id is derived from (environment, userId). */
export const Contact = defineEntity({
  name: 'Contact',
  tableName: 'contacts',
  uniques: [{ properties: ['environment', 'userId'] }],
  indexes: [
    { properties: ['environment', 'id'] },
    // Formbricks' v2 bulk upload finds contacts by email (edge/management/v2/contacts.ts).
    {
      name: 'contacts_email_index',
      expression: `create index "contacts_email_index" on "contacts" ("environment_id", ("attributes" ->> 'email'))`,
    },
  ],
  properties: {
    id: p.string().primary(),
    environment: () => p.manyToOne(Environment).deleteRule('cascade'),
    userId: p.string(),
    attributes: p.json<Record<string, string>>(),
    /** Per attribute, the edge clock of the identify that set it (contacts/merge.ts); never read out. */
    attributeClocks: p.json<Record<string, number>>().lazy().hidden().defaultRaw(`'{}'`),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});
export type Contact = InferEntity<typeof Contact>;

export const ATTRIBUTE_TYPES = ['text', 'number', 'date'] as const;
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];

export const ContactAttributeKey = defineEntity({
  name: 'ContactAttributeKey',
  tableName: 'contact_attribute_keys',
  uniques: [{ properties: ['environment', 'key'] }],
  properties: {
    id: p.string().primary(),
    environment: () => p.manyToOne(Environment).deleteRule('cascade'),
    key: p.string(),
    type: p.enum([...ATTRIBUTE_TYPES]).default('text'),
    name: p.string().nullable(),
    description: p.text().nullable(),
    ...timestamps,
  },
});
export type ContactAttributeKey = InferEntity<typeof ContactAttributeKey>;

/**
 * Stored membership (store/segment-members.ts): a contact is in a segment whose result depends only
 * on attributes. `contact_id` has no foreign key: the rows are written beside contacts being deleted
 * (a deletion removes them itself), and a row left for a deleted contact is never read.
 */
export const SegmentMember = defineEntity({
  name: 'SegmentMember',
  tableName: 'segment_members',
  indexes: [{ properties: ['contactId'] }],
  properties: {
    segment: () => p.manyToOne(Segment).primary().deleteRule('cascade'),
    contactId: p.string().primary(),
  },
});
export type SegmentMember = InferEntity<typeof SegmentMember>;

/** Which attributes a contact's stored membership was computed from (segments/membership.ts). */
export const SegmentEvaluation = defineEntity({
  name: 'SegmentEvaluation',
  tableName: 'segment_evaluations',
  properties: {
    contactId: p.string().primary(),
    environment: () => p.manyToOne(Environment).deleteRule('cascade').index(),
    attributesDigest: p.string(),
    evaluatedAt: p.datetime().defaultRaw('now()'),
  },
});
export type SegmentEvaluation = InferEntity<typeof SegmentEvaluation>;

/**
 * One row per response counted in a quota: counting is exact and idempotent. A quota is named by
 * its survey and its id (quota ids are chosen by clients, unique only within a survey), so the key
 * starts with the survey: counts and locks are per survey, never across tenants.
 */
export const QuotaMember = defineEntity({
  name: 'QuotaMember',
  tableName: 'quota_members',
  properties: {
    surveyId: p.string().primary(),
    quotaId: p.string().primary(),
    responseId: p.string().primary(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
});
export type QuotaMember = InferEntity<typeof QuotaMember>;

/**
 * A deleted contact. Events still in flight for it (created before the deletion) must not bring it
 * back: the processors compare their time with `deletedAt`.
 */
export const ContactTombstone = defineEntity({
  name: 'ContactTombstone',
  tableName: 'contact_tombstones',
  properties: {
    contactId: p.string().primary(),
    environmentId: p.string(),
    deletedAt: p.datetime().index(),
  },
});
export type ContactTombstone = InferEntity<typeof ContactTombstone>;

/**
 * The latest journaled change of a row of a table the store journals (events/store-changes.ts),
 * by the clock of its change; of a deleted row, its tombstone. A change of the journal that is not
 * later is not applied (Migration20261206030000_store_changes).
 */
export const StoreVersion = defineEntity({
  name: 'StoreVersion',
  tableName: 'store_versions',
  properties: {
    tableName: p.string().primary(),
    id: p.string().primary(),
    changedAt: p.datetime().index(),
    deleted: p.boolean().default(false),
  },
});
export type StoreVersion = InferEntity<typeof StoreVersion>;

/** A connected Slack workspace or Notion workspace of one environment; the token is encrypted. */
export const Integration = defineEntity({
  name: 'Integration',
  tableName: 'integrations',
  uniques: [{ properties: ['environment', 'provider'] }],
  properties: {
    id: p.string().primary(),
    environment: () => p.manyToOne(Environment).deleteRule('cascade'),
    provider: p.enum([...PROVIDERS]),
    status: p.enum(['connected', 'needs_reconnect']).default('connected'),
    tokenCiphertext: p.text(),
    /** What the provider told us about the workspace (team id and name, bot user …). */
    account: p.json<Record<string, unknown>>(),
    ...timestamps,
  },
});
export type Integration = InferEntity<typeof Integration>;

/** Where the finished responses of one survey go: a channel or a database, with mapped questions. */
export const IntegrationLink = defineEntity({
  name: 'IntegrationLink',
  tableName: 'integration_links',
  properties: {
    id: p.string().primary(),
    integration: () => p.manyToOne(Integration).deleteRule('cascade').index(),
    survey: () => p.manyToOne(Survey).deleteRule('cascade').index(),
    targetId: p.string(),
    targetName: p.string().nullable(),
    /** Slack: `[{questionId}]`; Notion: `[{questionId, property, propertyType}]`. */
    mapping: p.json<{ questionId: string; property?: string; propertyType?: string }[]>(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
});
export type IntegrationLink = InferEntity<typeof IntegrationLink>;

/** What a webhook can be triggered by, in Formbricks' names: one per kind of response fact. */
export const WEBHOOK_TRIGGERS = ['responseCreated', 'responseUpdated', 'responseFinished'] as const;
export type WebhookTrigger = (typeof WEBHOOK_TRIGGERS)[number];
/** Who made a webhook, as Formbricks records it (an automation platform, or a person). */
export const WEBHOOK_SOURCES = ['user', 'zapier', 'make', 'n8n', 'activepieces'] as const;

/**
 * A webhook of one environment: the response changes (`triggers`) of its surveys (`surveyIds`, or
 * every survey when empty) that are POSTed to `url`, signed with its secret (encrypted like tokens).
 */
export const Webhook = defineEntity({
  name: 'Webhook',
  tableName: 'webhooks',
  properties: {
    id: p.string().primary(),
    environment: () => p.manyToOne(Environment).deleteRule('cascade').index(),
    name: p.string().nullable(),
    url: p.text(),
    source: p.enum([...WEBHOOK_SOURCES]).default('user'),
    triggers: p.json<WebhookTrigger[]>(),
    surveyIds: p.json<string[]>(),
    secretCiphertext: p.text(),
    ...timestamps,
  },
});
export type Webhook = InferEntity<typeof Webhook>;

export const DELIVERY_STATUSES = ['pending', 'sending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * One finished response to one link (at most one message or page, ever), or one response fact to
 * one webhook (`webhook`, `event`, `eventId`; at most one delivery per fact and webhook). Exactly one
 * of `link` and `webhook` is set. `sending` is written (and committed) before the provider is called,
 * so a crash mid-call never leads to a second send unnoticed.
 */
export const Delivery = defineEntity({
  name: 'Delivery',
  tableName: 'deliveries',
  uniques: [{ properties: ['responseId', 'link'] }, { properties: ['webhook', 'eventId'] }],
  indexes: [
    { properties: ['status', 'nextAttemptAt'] },
    { properties: ['integrationId', 'id'] },
    { properties: ['status', 'updatedAt'] },
  ],
  properties: {
    id: p.string().primary(),
    responseId: p.string(),
    link: () => p.manyToOne(IntegrationLink).deleteRule('cascade').nullable(),
    integrationId: p.string().nullable(),
    webhook: () => p.manyToOne(Webhook).deleteRule('cascade').nullable(),
    /** A webhook delivery's trigger, and the id of the response fact that fired it. */
    event: p.enum([...WEBHOOK_TRIGGERS]).nullable(),
    eventId: p.string().nullable(),
    status: p.enum([...DELIVERY_STATUSES]).default('pending'),
    attempts: p.integer().default(0),
    nextAttemptAt: p.datetime().defaultRaw('now()'),
    /**
     * When the current send was claimed (switched to `sending`). Set only by the claim, never by a
     * recovery renewing its lease (`updatedAt`): an interrupted send is looked for from here.
     */
    claimedAt: p.datetime().nullable(),
    lastError: p.text().nullable(),
    /** The provider's id of what was created (Slack message ts, Notion page id). */
    externalId: p.string().nullable(),
    /** The response after the change, as its response-events fact carries it: what is delivered. */
    response: p.json<Record<string, unknown>>(),
    /** W3C trace context of the command that made the change, continued by the provider call. */
    traceContext: p.json<Record<string, string>>().nullable(),
    ...timestamps,
  },
});
export type Delivery = InferEntity<typeof Delivery>;

/** Ids of the events a processor has applied: redelivered events are recognised here and skipped. */
export const AppliedEvent = defineEntity({
  name: 'AppliedEvent',
  tableName: 'applied_events',
  properties: {
    eventId: p.string().primary(),
    appliedAt: p.datetime().defaultRaw('now()').index(),
  },
});
export type AppliedEvent = InferEntity<typeof AppliedEvent>;

/**
 * Rows per environment of the listed tables, kept by triggers (see the record_counts migration);
 * a table's count is the sum of its shards.
 */
export const RecordCount = defineEntity({
  name: 'RecordCount',
  tableName: 'record_counts',
  properties: {
    environmentId: p.string().primary(),
    kind: p.string().primary(),
    shard: p.smallint().primary(),
    count: p.bigint().default(0),
  },
});
export type RecordCount = InferEntity<typeof RecordCount>;

/**
 * The sums behind a survey's summary, per span of creation time and counter
 * (store/summary-counts.ts; the counters are summaries/contributions.ts').
 */
export const SummaryCount = defineEntity({
  name: 'SummaryCount',
  tableName: 'summary_counts',
  properties: {
    surveyId: p.string().primary(),
    span: p.string().length(16).primary(),
    start: p.datetime().primary(),
    key: p.text().primary(),
    n: p.bigint().default(0),
    total: p.double().default(0),
  },
});
export type SummaryCount = InferEntity<typeof SummaryCount>;

/** A survey whose summary must be counted again (pipeline/summary-recounts.ts). */
export const SummaryRecount = defineEntity({
  name: 'SummaryRecount',
  tableName: 'summary_recounts',
  properties: {
    surveyId: p.string().length(64).primary(),
    requestedAt: p.datetime(),
    /** When a processor took it; an edit meanwhile clears it (that processor's count is then not kept). */
    claimedAt: p.datetime().nullable(),
  },
});
export type SummaryRecount = InferEntity<typeof SummaryRecount>;

/**
 * Facts made by the store's own triggers (contacts and surveys: migration public_facts), waiting to
 * be published to their public topic by the fact relay (pipeline/fact-relay.ts), in `seq` order.
 * Written in the transaction that made the change, so no committed change goes unannounced.
 */
export const OutboxFact = defineEntity({
  name: 'OutboxFact',
  tableName: 'fact_outbox',
  properties: {
    seq: p.bigint().primary().autoincrement(),
    topic: p.string(),
    key: p.string(),
    type: p.string(),
    environmentId: p.string(),
    occurredAt: p.datetime(),
    appliedAt: p.datetime().defaultRaw('now()'),
    payload: p.json<Record<string, unknown>>(),
  },
});
export type OutboxFact = InferEntity<typeof OutboxFact>;

/**
 * A command that came before what it applies to (a response's update before its create, which
 * happens for a moment when partitions are added): kept as consumed, and handed to its processor
 * again once it can be applied (pipeline/parking.ts).
 */
export const ParkedCommand = defineEntity({
  name: 'ParkedCommand',
  tableName: 'parked_commands',
  indexes: [{ properties: ['topic', 'key'] }, { properties: ['parkedAt'] }],
  properties: {
    eventId: p.string().primary(),
    topic: p.string(),
    key: p.string(),
    partition: p.integer(),
    offset: p.string(),
    value: p.text(),
    headers: p.json<Record<string, string>>(),
    parkedAt: p.datetime().defaultRaw('now()'),
  },
});
export type ParkedCommand = InferEntity<typeof ParkedCommand>;

/**
 * How far each processor's consumer group has applied each partition of its topic (store/
 * log-positions.ts): written after each batch, read when a partition is assigned. A database
 * restored from a backup holds the positions of its moment, and the processors replay the log from
 * there (docs/operations.md, "Restoring the database").
 */
export const LogPosition = defineEntity({
  name: 'LogPosition',
  tableName: 'log_positions',
  properties: {
    consumerGroup: p.string().primary(),
    topic: p.string().primary(),
    partition: p.integer().primary(),
    /** The offset of the next record to apply. */
    nextOffset: p.bigint(),
    /**
     * Set when a restored database's position was found behind the committed offset: the records
     * before it are applied again (a replay), whichever member of the group applies them.
     */
    replayUntil: p.bigint().nullable(),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
});
export type LogPosition = InferEntity<typeof LogPosition>;

/**
 * The database the store was last seen in, by its PostgreSQL object id (one row). A backup restored
 * into a new database carries the old one: store/incarnation.ts tells it so.
 */
export const StoreIncarnation = defineEntity({
  name: 'StoreIncarnation',
  tableName: 'store_incarnation',
  checks: [{ name: 'store_incarnation_one_row', expression: 'id = 1' }],
  properties: {
    id: p.integer().primary().autoincrement(false).default(1),
    databaseOid: p.bigint(),
    updatedAt: p.datetime().defaultRaw('now()'),
  },
});
export type StoreIncarnation = InferEntity<typeof StoreIncarnation>;

/** A response whose create the processor refused (store/refused-responses.ts). */
export const RefusedResponse = defineEntity({
  name: 'RefusedResponse',
  tableName: 'refused_responses',
  properties: {
    id: p.string().primary(),
    refusedAt: p.datetime().defaultRaw('now()').index(),
  },
});
export type RefusedResponse = InferEntity<typeof RefusedResponse>;

/**
 * An OAuth connection attempt (src/integrations/README.md, "The OAuth connect flow"): its ticket is
 * redeemed once by the browser, and its state consumed once by the callback. Hashes only, never
 * the ticket or the nonce. Used through conditional UPDATEs in store/integrations.ts.
 */
export const OAuthAttempt = defineEntity({
  name: 'OAuthAttempt',
  tableName: 'oauth_attempts',
  properties: {
    id: p.string().primary(),
    ticketHash: p.string().unique(),
    environment: () => p.manyToOne(Environment).deleteRule('cascade'),
    provider: p.enum([...PROVIDERS]),
    nonceHash: p.string().nullable(),
    expiresAt: p.datetime().index(),
    authorizedAt: p.datetime().nullable(),
    consumedAt: p.datetime().nullable(),
    createdAt: p.datetime().defaultRaw('now()'),
  },
});
export type OAuthAttempt = InferEntity<typeof OAuthAttempt>;

export const entities = [
  Organization,
  Environment,
  ApiKey,
  ApiKeyEnvironment,
  Segment,
  Survey,
  ActionClass,
  Response,
  Display,
  Contact,
  ContactAttributeKey,
  SegmentMember,
  SegmentEvaluation,
  QuotaMember,
  ContactTombstone,
  Integration,
  IntegrationLink,
  Webhook,
  Delivery,
  AppliedEvent,
  RecordCount,
  SummaryCount,
  SummaryRecount,
  OAuthAttempt,
  OutboxFact,
  ParkedCommand,
  LogPosition,
  StoreIncarnation,
  StoreVersion,
  RefusedResponse,
];
