// Integrations: OAuth connect/callback, and through the management API (API key rules as
// elsewhere) integrations, their links, the channels/databases to choose from, and deliveries.
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { ChorusError, invalidInput, notFound } from '../../errors.ts';
import { ID_PATTERN } from '../../ids.ts';
import {
  Delivery,
  DELIVERY_STATUSES,
  Integration,
  IntegrationLink,
  PROVIDERS,
  Survey,
  type Provider,
} from '../../store/entities.ts';
import {
  createLink,
  integrationRecord,
  linkRecord,
  listDeliveries,
  listIntegrations,
  saveIntegration,
} from '../../store/integrations.ts';
import { questionsOf } from '../../surveys/definition.ts';
import { decryptToken, encryptToken, signState, verifyState } from '../../integrations/secrets.ts';
import { ProviderError } from '../../integrations/failure.ts';
import { SLACK_SCOPES } from '../../integrations/slack/slack-api.ts';
import type { ProviderApis } from '../../integrations/providers.ts';
import { mappingProblems } from '../../integrations/notion/properties.ts';
import type { Route, RouteRequest } from '../router.ts';
import { parseJsonBody, requireId, validateBody } from '../validation.ts';
import { authenticate, permissionFor, requireAccess } from './auth.ts';
import type { ManagementContext } from './context.ts';
import { listRoute, parsePage } from './paging.ts';

const STATE_TTL_MS = 10 * 60_000;

export interface IntegrationsContext extends ManagementContext, ProviderApis {
  webappUrl: string;
  encryptionKey: Buffer | undefined;
}

const LinkBody = Compile(
  Type.Object({
    surveyId: Type.String({ pattern: ID_PATTERN }),
    targetId: Type.String({ minLength: 1, maxLength: 255 }),
    targetName: Type.Optional(Type.String({ maxLength: 255 })),
    questionIds: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
    mapping: Type.Optional(
      Type.Array(
        Type.Object({ questionId: Type.String({ minLength: 1 }), property: Type.String({ minLength: 1 }) }),
        { minItems: 1 },
      ),
    ),
  }),
);

export function integrationRoutes(ctx: IntegrationsContext): Route[] {
  const base = '/api/v1/management/integrations';
  return [
    { method: 'GET', path: '/api/v1/integrations/:provider/connect', handler: (r) => connect(ctx, r) },
    { method: 'GET', path: '/api/v1/integrations/:provider/callback', handler: (r) => callback(ctx, r) },
    listRoute(base, ctx, (environmentIds, page) => listIntegrations(ctx.orm.em, environmentIds, page)),
    {
      method: 'GET',
      path: `${base}/:integrationId`,
      handler: async (r) => ({
        status: 200,
        body: { data: integrationRecord((await accessible(ctx, r)).integration) },
      }),
    },
    {
      method: 'DELETE',
      path: `${base}/:integrationId`,
      handler: async (r) => {
        const { em, integration } = await accessible(ctx, r);
        const record = integrationRecord(integration);
        // Links and their pending deliveries go with it; messages and pages already created stay.
        await em.remove(integration).flush();
        return { status: 200, body: { data: record } };
      },
    },
    { method: 'GET', path: `${base}/:integrationId/channels`, handler: (r) => targets(ctx, r, 'slack') },
    { method: 'GET', path: `${base}/:integrationId/databases`, handler: (r) => targets(ctx, r, 'notion') },
    {
      method: 'GET',
      path: `${base}/:integrationId/links`,
      handler: async (r) => {
        const { em, integration } = await accessible(ctx, r);
        const links = await em.find(
          IntegrationLink,
          { integration: integration.id },
          { orderBy: { id: 'asc' } },
        );
        return { status: 200, body: { data: links.map(linkRecord) } };
      },
    },
    { method: 'POST', path: `${base}/:integrationId/links`, handler: (r) => createLinkRoute(ctx, r) },
    {
      method: 'DELETE',
      path: `${base}/:integrationId/links/:linkId`,
      handler: async (r) => {
        const { em, integration } = await accessible(ctx, r);
        const id = requireId('linkId', r.params.linkId);
        const link = await em.findOne(IntegrationLink, { id, integration: integration.id });
        if (!link) throw notFound('IntegrationLink', id);
        const record = linkRecord(link);
        await em.remove(link).flush();
        return { status: 200, body: { data: record } };
      },
    },
    {
      method: 'GET',
      path: `${base}/:integrationId/deliveries`,
      handler: async (r) => {
        const { integration } = await accessible(ctx, r);
        const status = r.query.get('status') ?? undefined;
        if (status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(status)) {
          throw invalidInput({ status: `must be one of ${DELIVERY_STATUSES.join(', ')}` });
        }
        const page = parsePage(r.query);
        const { items, total } = await listDeliveries(
          ctx.orm.em,
          { integrationIds: [integration.id], status: status as Delivery['status'] | undefined },
          page,
        );
        return { status: 200, headers: { 'X-Total-Count': String(total) }, body: { data: items } };
      },
    },
  ];
}

function providerOf(request: RouteRequest): Provider {
  const provider = request.params.provider;
  if (!(PROVIDERS as readonly string[]).includes(provider ?? ''))
    throw notFound('Integration provider', provider ?? '');
  return provider as Provider;
}

function requireConfigured(ctx: IntegrationsContext, provider: Provider) {
  const api = ctx[provider];
  if (!api || !ctx.encryptionKey) {
    throw new ChorusError('invalid_input', `The ${provider} integration is not configured on this server`, {
      provider,
    });
  }
  return { api, key: ctx.encryptionKey };
}

const callbackUrl = (ctx: IntegrationsContext, provider: Provider) =>
  `${ctx.webappUrl}/api/v1/integrations/${provider}/callback`;

/** Redirects to the provider's consent page, with a signed, expiring state naming the environment. */
async function connect(ctx: IntegrationsContext, request: RouteRequest) {
  const provider = providerOf(request);
  const grant = await authenticate(request, ctx.keys);
  const environmentId = requireId('environmentId', request.query.get('environmentId') ?? undefined);
  requireAccess(grant, environmentId, 'write');
  const { api, key } = requireConfigured(ctx, provider);
  const state = signState(key, { environmentId, provider, expiresAt: Date.now() + STATE_TTL_MS });
  const target =
    provider === 'slack'
      ? new URL(ctx.slack!.authorizeUrl)
      : new URL(`${ctx.notion!.apiUrl.replace(/\/+$/, '')}/v1/oauth/authorize`);
  target.searchParams.set('client_id', api.clientId);
  target.searchParams.set('redirect_uri', callbackUrl(ctx, provider));
  target.searchParams.set('state', state);
  if (provider === 'slack') target.searchParams.set('scope', SLACK_SCOPES.join(','));
  else {
    target.searchParams.set('response_type', 'code');
    target.searchParams.set('owner', 'user');
  }
  return {
    status: 302,
    headers: { Location: target.toString() },
    body: { data: { url: target.toString() } },
  };
}

/** The provider sends the user back here: exchange the code, keep the token encrypted. */
async function callback(ctx: IntegrationsContext, request: RouteRequest) {
  const provider = providerOf(request);
  const { api, key } = requireConfigured(ctx, provider);
  const refused = request.query.get('error');
  if (refused) throw invalidInput({ error: refused }, `The ${provider} authorization was not granted`);
  const state = verifyState(key, request.query.get('state') ?? '');
  if (!state || state.provider !== provider) throw invalidInput({ state: 'Invalid or expired state' });
  const code = request.query.get('code');
  if (!code) throw invalidInput({ code: 'Required' });
  const exchanged = await providerCall(() => api.exchangeCode(code, callbackUrl(ctx, provider)));
  const integration = await saveIntegration(ctx.orm.em, {
    environmentId: state.environmentId,
    provider,
    tokenCiphertext: encryptToken(key, exchanged.accessToken),
    account: exchanged.account,
  });
  return { status: 200, body: { data: integrationRecord(integration) } };
}

async function accessible(ctx: IntegrationsContext, request: RouteRequest) {
  const grant = await authenticate(request, ctx.keys);
  const id = requireId('integrationId', request.params.integrationId);
  const em = ctx.orm.em.fork();
  const integration = await em.findOne(Integration, { id });
  if (!integration) throw notFound('Integration', id);
  requireAccess(grant, integration.environment.id, permissionFor(request.method));
  return { em, integration };
}

function tokenOf(ctx: IntegrationsContext, integration: Integration): string {
  const { key } = requireConfigured(ctx, integration.provider);
  return decryptToken(key, integration.tokenCiphertext);
}

/** The channels (Slack) or databases (Notion) a link can target. */
async function targets(ctx: IntegrationsContext, request: RouteRequest, provider: Provider) {
  const { integration } = await accessible(ctx, request);
  if (integration.provider !== provider) throw notFound('Integration', integration.id);
  const token = tokenOf(ctx, integration);
  const data =
    provider === 'slack'
      ? await providerCall(() => ctx.slack!.listChannels(token))
      : await providerCall(() => ctx.notion!.searchDatabases(token));
  return { status: 200, body: { data } };
}

async function createLinkRoute(ctx: IntegrationsContext, request: RouteRequest) {
  const { em, integration } = await accessible(ctx, request);
  const body = validateBody(LinkBody, parseJsonBody(request.body));
  const survey = await em.findOne(Survey, { id: body.surveyId });
  if (!survey || survey.environment.id !== integration.environment.id)
    throw notFound('Survey', body.surveyId);
  const questions = questionsOf({ blocks: survey.blocks });
  const known = new Set(questions.map((q) => q.id));

  let mapping: IntegrationLink['mapping'];
  if (integration.provider === 'slack') {
    const questionIds = body.questionIds ?? questions.map((q) => q.id);
    const unknown = questionIds.filter((id) => !known.has(id));
    if (unknown.length > 0)
      throw invalidInput(Object.fromEntries(unknown.map((id) => [id, 'Not a question of this survey'])));
    mapping = questionIds.map((questionId) => ({ questionId }));
  } else {
    if (!body.mapping) throw invalidInput({ mapping: 'Required: question → Notion property' });
    const token = tokenOf(ctx, integration);
    const properties = await providerCall(() => ctx.notion!.databaseProperties(token, body.targetId));
    // Refused now, with the reason, rather than failing on every delivery later.
    const problems = mappingProblems(questions, body.mapping, properties);
    if (Object.keys(problems).length > 0)
      throw invalidInput(problems, 'The mapping does not fit the Notion database');
    mapping = body.mapping.map((m) => ({ ...m, propertyType: properties[m.property]!.type }));
  }
  const link = await createLink(ctx.orm.em, {
    integrationId: integration.id,
    surveyId: survey.id,
    targetId: body.targetId,
    targetName: body.targetName,
    mapping,
  });
  return { status: 201, body: { data: linkRecord(link) } };
}

/** A provider that fails while a user waits: a clear 4xx/503, never a 500. */
async function providerCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    if (error.failure.kind === 'retry')
      throw new ChorusError(
        'unavailable',
        `The provider is temporarily unavailable: ${error.failure.reason}`,
      );
    throw new ChorusError('invalid_input', `The provider refused the request: ${error.failure.reason}`, {
      provider: error.failure.reason,
    });
  }
}
