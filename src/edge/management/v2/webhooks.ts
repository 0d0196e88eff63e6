// Formbricks' v2 webhooks: list (with `surveyIds`: those naming any of them), create (the answer
// holds the signing secret, this once), read, change, delete. The same webhooks as
// `/api/v1/webhooks` (management/webhooks.ts): URL checks, survey checks and signing are theirs.
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { invalidInput } from '../../../errors.ts';
import { ID_PATTERN } from '../../../ids.ts';
import { Webhook, WEBHOOK_SOURCES, WEBHOOK_TRIGGERS } from '../../../store/entities.ts';
import { changeWebhook, queryWebhooks, webhookRecord } from '../../../store/webhooks.ts';
import { data } from '../../openapi/route-doc.ts';
import { Id, WebhookRecord } from '../../openapi/replies.ts';
import type { Route } from '../../router.ts';
import { nullable, parseJsonBody, validateBody } from '../../validation.ts';
import { authenticate } from '../auth.ts';
import { accessibleWebhook, checkWebhookFields, createWebhookIn, type WebhooksContext } from '../webhooks.ts';
import { ENVIRONMENT_FIELDS, namedEnvironment, v2ListRoute, v2Route as route } from './shared.ts';

const BASE = '/api/v2/management/webhooks';
const ID = new RegExp(ID_PATTERN);

const V2Webhook = Type.Object({ ...WebhookRecord.properties, workspaceId: Id });
const v2Record = (row: Webhook) => ({ ...webhookRecord(row), workspaceId: row.environment.id });

const Fields = {
  name: nullable(Type.String({ maxLength: 255 })),
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  source: Type.Optional(Type.Enum([...WEBHOOK_SOURCES])),
  triggers: Type.Array(Type.Enum([...WEBHOOK_TRIGGERS]), { minItems: 1 }),
  surveyIds: Type.Optional(Type.Array(Type.String({ pattern: ID_PATTERN }), { maxItems: 1000 })),
};
const CreateBody = Compile(Type.Object({ ...ENVIRONMENT_FIELDS, ...Fields }));
const UpdateBody = Compile(Type.Partial(Type.Object(Fields)));

export function v2WebhookRoutes(ctx: WebhooksContext): Route[] {
  return [
    v2ListRoute(
      ctx,
      BASE,
      {
        summary: 'List webhooks (Formbricks v2)',
        item: V2Webhook,
        extraQuery: {
          surveyIds: {
            schema: Type.String(),
            description: 'Survey ids, comma-separated or repeated: the webhooks that name any of them',
          },
        },
      },
      (q, query) => {
        const surveyIds = query.getAll('surveyIds').flatMap((v) => v.split(',').filter(Boolean));
        if (!surveyIds.every((id) => ID.test(id))) throw invalidInput({ surveyIds: 'must be survey ids' });
        return queryWebhooks(ctx.orm.em, q, surveyIds, v2Record);
      },
    ),
    route({
      method: 'POST',
      path: BASE,
      doc: {
        summary: 'Create a webhook (Formbricks v2); the answer holds its signing secret, shown this once',
        description:
          'As `POST /api/v1/webhooks`: `triggers` among `responseCreated`, `responseUpdated`, `responseFinished`; `surveyIds` (every survey when empty) must be surveys of the environment; the URL http or https to a public address. The environment is `workspaceId` or `environmentId`.',
        auth: 'apiKey',
        body: CreateBody.Type(),
        replies: {
          201: data(
            Type.Object({ ...V2Webhook.properties, secret: Type.String() }),
            'The webhook and its secret',
          ),
        },
        errors: [400, 503],
      },
      handler: async (request) => {
        const grant = await authenticate(request, ctx.keys);
        const { workspaceId, environmentId, ...fields } = validateBody(
          CreateBody,
          parseJsonBody(request.body),
        );
        const environment = namedEnvironment(grant, { workspaceId, environmentId });
        const { webhook, secret } = await createWebhookIn(ctx, environment, fields);
        return { status: 201, body: { data: { ...v2Record(webhook), secret } } };
      },
    }),
    route({
      method: 'GET',
      path: `${BASE}/:webhookId`,
      doc: {
        summary: 'Read a webhook (Formbricks v2), without its secret',
        auth: 'apiKey',
        replies: { 200: data(V2Webhook, 'The webhook') },
        errors: [400, 404, 503],
      },
      handler: async (request) => ({
        status: 200,
        body: { data: v2Record((await accessibleWebhook(ctx, request)).webhook) },
      }),
    }),
    route({
      method: 'PUT',
      path: `${BASE}/:webhookId`,
      doc: {
        summary: 'Change a webhook (Formbricks v2): the fields sent replace its own; its secret stays',
        auth: 'apiKey',
        body: UpdateBody.Type(),
        replies: { 200: data(V2Webhook, 'The webhook changed') },
        errors: [400, 404, 503],
      },
      handler: async (request) => {
        const change = validateBody(UpdateBody, parseJsonBody(request.body));
        const { em, webhook } = await accessibleWebhook(ctx, request);
        const surveyIds = await checkWebhookFields(ctx, webhook.environment.id, {
          url: change.url ?? webhook.url,
          surveyIds: change.surveyIds ?? webhook.surveyIds,
        });
        await changeWebhook(em, webhook, {
          ...(change.name !== undefined ? { name: change.name } : {}),
          ...(change.url !== undefined ? { url: change.url } : {}),
          ...(change.source !== undefined ? { source: change.source } : {}),
          ...(change.triggers !== undefined
            ? { triggers: WEBHOOK_TRIGGERS.filter((t) => change.triggers!.includes(t)) }
            : {}),
          surveyIds,
        });
        return { status: 200, body: { data: v2Record(webhook) } };
      },
    }),
    route({
      method: 'DELETE',
      path: `${BASE}/:webhookId`,
      doc: {
        summary: 'Delete a webhook with its deliveries (Formbricks v2)',
        auth: 'apiKey',
        replies: { 200: data(V2Webhook, 'The webhook deleted') },
        errors: [400, 404, 503],
      },
      handler: async (request) => {
        const { em, webhook } = await accessibleWebhook(ctx, request);
        const record = v2Record(webhook);
        await em.remove(webhook).flush();
        return { status: 200, body: { data: record } };
      },
    }),
  ];
}
