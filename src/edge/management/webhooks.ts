// Management API: webhooks, as Formbricks' `/api/v1/webhooks` (list, read, create, delete), scoped
// to the API key's environments like every management route. A webhook POSTs the response changes
// it is triggered by (of the surveys it names, or of all) to its URL, signed with its secret, which
// this API shows once: in the answer to the create. The URL is checked when the webhook is created
// (http or https, a host that resolves to public addresses) and again at every send.
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { invalidInput, notFound } from '../../errors.ts';
import { ID_PATTERN } from '../../ids.ts';
import { Webhook, WEBHOOK_SOURCES, WEBHOOK_TRIGGERS, type WebhookTrigger } from '../../store/entities.ts';
import { createWebhook, listWebhooks, surveysOfEnvironment, webhookRecord } from '../../store/webhooks.ts';
import { sealSecret } from '../../integrations/secrets.ts';
import { newWebhookSecret } from '../../integrations/webhook/signature.ts';
import type { WebhookDestination } from '../../integrations/webhook/destination.ts';
import type { Route, RouteRequest } from '../router.ts';
import { nullable, parseJsonBody, requireId, validateBody } from '../validation.ts';
import { data } from '../openapi/route-doc.ts';
import { CreatedWebhook, WebhookRecord } from '../openapi/replies.ts';
import { authenticate, permissionFor, requireAccess, writableEnvironment } from './auth.ts';
import type { ManagementContext } from './context.ts';
import { deliveriesRoute } from './deliveries.ts';
import { listRoute } from './paging.ts';

export interface WebhooksContext extends ManagementContext {
  webhooks: WebhookDestination;
  /** Encrypts the secrets at rest when set (integrations/secrets.ts, sealSecret). */
  encryptionKey: Buffer | undefined;
}

export const WEBHOOKS_PATH = '/api/v1/webhooks';

const CreateBody = Compile(
  Type.Object({
    environmentId: Type.Optional(Type.String({ pattern: ID_PATTERN })),
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    name: nullable(Type.String({ maxLength: 255 })),
    triggers: Type.Array(Type.Enum([...WEBHOOK_TRIGGERS]), { minItems: 1 }),
    surveyIds: Type.Optional(Type.Array(Type.String({ pattern: ID_PATTERN }), { maxItems: 1000 })),
    source: Type.Optional(Type.Enum([...WEBHOOK_SOURCES])),
  }),
);

export function managementWebhookRoutes(ctx: WebhooksContext): Route[] {
  const base = WEBHOOKS_PATH;
  return [
    listRoute(base, ctx, { summary: 'List webhooks', item: WebhookRecord }, (environmentIds, page) =>
      listWebhooks(ctx.orm.em, environmentIds, page),
    ),
    {
      method: 'GET',
      path: `${base}/:webhookId`,
      doc: {
        summary: 'Read a webhook (without its secret)',
        auth: 'apiKey',
        replies: { 200: data(WebhookRecord, 'The webhook') },
        errors: [400, 404, 503],
      },
      handler: async (r) => ({
        status: 200,
        body: { data: webhookRecord((await accessibleWebhook(ctx, r)).webhook) },
      }),
    },
    {
      method: 'POST',
      path: base,
      doc: {
        summary: 'Create a webhook; the answer holds its signing secret, shown this once',
        description:
          '`triggers` among `responseCreated`, `responseUpdated` and `responseFinished`; `surveyIds` limits it to those surveys of the environment (every survey when empty or left out). The URL must be http or https and resolve to public addresses (unless the server allows private ones): else 400 with `details.url`. Requests are signed per Standard Webhooks with `secret`. `environmentId` may be left out when the API key can write to exactly one environment.',
        auth: 'apiKey',
        body: CreateBody.Type(),
        replies: { 200: data(CreatedWebhook, 'The webhook created, with its secret') },
        errors: [400, 503],
      },
      handler: (r) => createWebhookRoute(ctx, r),
    },
    {
      method: 'DELETE',
      path: `${base}/:webhookId`,
      doc: {
        summary: 'Delete a webhook with its deliveries',
        auth: 'apiKey',
        replies: { 200: data(WebhookRecord, 'The webhook deleted') },
        errors: [400, 404, 503],
      },
      handler: async (r) => {
        const { em, webhook } = await accessibleWebhook(ctx, r);
        const record = webhookRecord(webhook);
        await em.remove(webhook).flush();
        return { status: 200, body: { data: record } };
      },
    },
    deliveriesRoute({
      path: `${base}/:webhookId/deliveries`,
      summary: "A webhook's deliveries, newest first",
      ctx,
      owner: async (r) => ({ webhookId: (await accessibleWebhook(ctx, r)).webhook.id }),
    }),
  ];
}

async function createWebhookRoute(ctx: WebhooksContext, request: RouteRequest) {
  const grant = await authenticate(request, ctx.keys);
  const { environmentId: asked, ...body } = validateBody(CreateBody, parseJsonBody(request.body));
  const { webhook, secret } = await createWebhookIn(ctx, writableEnvironment(grant, asked), body);
  return { status: 200, body: { data: { ...webhookRecord(webhook), secret } } };
}

/** What a webhook is: where it sends, what fires it, for which surveys (every one when empty). */
export interface WebhookFields {
  url: string;
  name?: string | null;
  triggers: WebhookTrigger[];
  surveyIds?: string[];
  source?: Webhook['source'];
}

/** Creates a webhook with a new secret, returned this once. */
export async function createWebhookIn(ctx: WebhooksContext, environmentId: string, fields: WebhookFields) {
  const surveyIds = await checkWebhookFields(ctx, environmentId, fields);
  const secret = newWebhookSecret();
  const webhook = await createWebhook(ctx.orm.em, {
    environmentId,
    name: fields.name ?? null,
    url: fields.url,
    source: fields.source ?? 'user',
    triggers: WEBHOOK_TRIGGERS.filter((t) => fields.triggers.includes(t)),
    surveyIds,
    secretCiphertext: sealSecret(ctx.encryptionKey, secret),
  });
  return { webhook, secret };
}

/**
 * The surveys a webhook names, each once, once each is known to be a survey of the environment
 * (400 naming those that are not), and the URL checked (400 with `details.url`).
 */
export async function checkWebhookFields(
  ctx: WebhooksContext,
  environmentId: string,
  fields: Pick<WebhookFields, 'url' | 'surveyIds'>,
): Promise<string[]> {
  const surveyIds = [...new Set(fields.surveyIds ?? [])];
  const known = await surveysOfEnvironment(ctx.orm.em, environmentId, surveyIds);
  const unknown = surveyIds.filter((id) => !known.has(id));
  if (unknown.length > 0)
    throw invalidInput(
      Object.fromEntries(unknown.map((id) => [`surveyIds.${id}`, 'Not a survey of this environment'])),
    );
  await ctx.webhooks.checkUrl(fields.url);
  return surveyIds;
}

/** The webhook of the path, if the key may act on its environment (GET read, DELETE manage). */
export async function accessibleWebhook(ctx: WebhooksContext, request: RouteRequest) {
  const grant = await authenticate(request, ctx.keys);
  const id = requireId('webhookId', request.params.webhookId);
  const em = ctx.orm.em.fork();
  const webhook = await em.findOne(Webhook, { id });
  if (!webhook) throw notFound('Webhook', id);
  requireAccess(grant, webhook.environment.id, permissionFor(request.method));
  return { em, webhook };
}
