// Integrations: OAuth connect/authorize/callback, and through the management API (API key rules as
// elsewhere) integrations, their links, the channels/databases to choose from, and deliveries.
import { randomBytes } from 'node:crypto';
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
  consumeOAuthAttempt,
  createLink,
  integrationRecord,
  linkRecord,
  listDeliveries,
  listIntegrations,
  recordOAuthAttempt,
  redeemOAuthTicket,
  saveIntegration,
} from '../../store/integrations.ts';
import { questionsOf } from '../../surveys/definition.ts';
import {
  decryptToken,
  encryptToken,
  matchesHash,
  newSecret,
  secretHash,
  signState,
  verifyState,
} from '../../integrations/secrets.ts';
import type { Destinations } from '../../integrations/destination.ts';
import { LINK_TARGETS } from '../../integrations/providers.ts';
import { ProviderError } from '../../integrations/failure.ts';
import type { Route, RouteRequest } from '../router.ts';
import { parseJsonBody, requireId, validateBody } from '../validation.ts';
import { requireStorableRequest } from '../safe-json.ts';
import { authenticate, permissionFor, requireAccess } from './auth.ts';
import type { ManagementContext } from './context.ts';
import { listRoute, parsePage } from './paging.ts';

/** How long the connect URL may wait for a browser to open it. */
const TICKET_TTL_MS = 10 * 60_000;
/** How long the user has to consent, from the browser opening the connect URL. */
const STATE_TTL_MS = 10 * 60_000;
const COOKIE_PREFIX = 'chorus_oauth_';
const COOKIE_PATH = '/api/v1/integrations';

export interface IntegrationsContext extends ManagementContext {
  destinations: Destinations;
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
    { method: 'GET', path: '/api/v1/integrations/:provider/authorize', handler: (r) => authorize(ctx, r) },
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
    // Each provider's targets under its own name (`channels`, `databases`), known even when the
    // provider is not configured here.
    ...PROVIDERS.map((provider) => ({
      method: 'GET',
      path: `${base}/:integrationId/${LINK_TARGETS[provider]}`,
      handler: (r: RouteRequest) => targets(ctx, r, provider),
    })),
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
  const api = ctx.destinations[provider];
  if (!api || !ctx.encryptionKey) {
    throw new ChorusError('invalid_input', `The ${provider} integration is not configured on this server`, {
      provider,
    });
  }
  return { api, key: ctx.encryptionKey };
}

const callbackUrl = (ctx: IntegrationsContext, provider: Provider) =>
  `${ctx.webappUrl}/api/v1/integrations/${provider}/callback`;

/**
 * Connecting (docs/integrations.md, "Connecting a workspace"): the management client calls connect with its API
 * key and gets a Chorus URL holding a one-time ticket; the browser opens it, which redeems the
 * ticket, sets a cookie holding a random nonce and redirects to the provider with a signed state
 * carrying the nonce's hash; the callback needs that cookie and consumes the state once. So a
 * state completes at most one connection, and only in the browser that started it: a state seen
 * by someone else (a log, a referer, a replayed callback URL) cannot connect another workspace.
 */
async function connect(ctx: IntegrationsContext, request: RouteRequest) {
  const provider = providerOf(request);
  const grant = await authenticate(request, ctx.keys);
  const environmentId = requireId('environmentId', request.query.get('environmentId') ?? undefined);
  requireAccess(grant, environmentId, 'write');
  requireConfigured(ctx, provider);
  const ticket = newSecret();
  await recordOAuthAttempt(ctx.orm.em, {
    id: randomBytes(16).toString('hex'),
    ticketHash: secretHash(ticket),
    environmentId,
    provider,
    expiresAt: new Date(Date.now() + TICKET_TTL_MS),
  });
  const target = new URL(`${ctx.webappUrl}/api/v1/integrations/${provider}/authorize`);
  target.searchParams.set('ticket', ticket);
  return {
    status: 302,
    headers: { Location: target.toString() },
    body: { data: { url: target.toString() } },
  };
}

/** The browser opens the connect URL: the ticket is redeemed once, the browser gets its nonce. */
async function authorize(ctx: IntegrationsContext, request: RouteRequest) {
  requireStorableRequest(request); // no API key here (see authenticate): checked on its own
  const provider = providerOf(request);
  const { api, key } = requireConfigured(ctx, provider);
  const ticket = request.query.get('ticket');
  if (!ticket) throw invalidInput({ ticket: 'Required' });
  const nonce = newSecret();
  const expiresAt = Date.now() + STATE_TTL_MS;
  const attempt = await redeemOAuthTicket(ctx.orm.em, {
    ticketHash: secretHash(ticket),
    provider,
    nonceHash: secretHash(nonce),
    expiresAt: new Date(expiresAt),
  });
  if (!attempt) throw invalidInput({ ticket: 'Invalid, expired or already used: connect again' });
  const state = signState(key, {
    environmentId: attempt.environmentId,
    provider,
    attemptId: attempt.id,
    nonceHash: secretHash(nonce),
    expiresAt,
  });
  const target = api.authorizeUrl(callbackUrl(ctx, provider), state);
  return {
    status: 302,
    headers: {
      Location: target.toString(),
      'Set-Cookie': nonceCookie(ctx, attempt.id, nonce, STATE_TTL_MS / 1000),
    },
    body: { data: { url: target.toString() } },
  };
}

/** The provider sends the user back here: exchange the code, keep the token encrypted. */
async function callback(ctx: IntegrationsContext, request: RouteRequest) {
  requireStorableRequest(request); // no API key here (see authenticate): checked on its own
  const provider = providerOf(request);
  const { api, key } = requireConfigured(ctx, provider);
  const refused = request.query.get('error');
  if (refused) throw invalidInput({ error: refused }, `The ${provider} authorization was not granted`);
  const state = verifyState(key, request.query.get('state') ?? '');
  if (!state || state.provider !== provider || typeof state.attemptId !== 'string')
    throw invalidInput({ state: 'Invalid or expired state' });
  const nonce = cookieOf(request, `${COOKIE_PREFIX}${state.attemptId}`);
  if (nonce === undefined || !matchesHash(nonce, state.nonceHash))
    throw invalidInput({ state: 'This browser did not start this connection: connect again' });
  const code = request.query.get('code');
  if (!code) throw invalidInput({ code: 'Required' });
  // Consumed before the code is exchanged: of two callbacks with this state, one goes on.
  const attempt = await consumeOAuthAttempt(ctx.orm.em, {
    id: state.attemptId,
    provider,
    nonceHash: state.nonceHash,
  });
  if (!attempt) throw invalidInput({ state: 'Already used or expired: connect again' });
  const exchanged = await providerCall(() => api.exchangeCode(code, callbackUrl(ctx, provider)));
  const integration = await saveIntegration(ctx.orm.em, {
    environmentId: attempt.environmentId,
    provider,
    tokenCiphertext: encryptToken(key, exchanged.accessToken),
    account: exchanged.account,
  });
  return {
    status: 200,
    headers: { 'Set-Cookie': nonceCookie(ctx, state.attemptId, '', 0) },
    body: { data: integrationRecord(integration) },
  };
}

/**
 * The cookie that binds an attempt to its browser. HttpOnly (no script reads it), SameSite=Lax
 * (sent on the provider's top-level redirect back, not on cross-site subrequests), scoped to the
 * integrations routes, Secure when browsers reach Chorus over https. One per attempt, so connecting
 * Slack and Notion at once in one browser works.
 */
function nonceCookie(ctx: IntegrationsContext, attemptId: string, nonce: string, maxAgeSeconds: number) {
  const secure = ctx.webappUrl.startsWith('https://') ? '; Secure' : '';
  return `${COOKIE_PREFIX}${attemptId}=${nonce}; Max-Age=${maxAgeSeconds}; Path=${COOKIE_PATH}; HttpOnly; SameSite=Lax${secure}`;
}

function cookieOf(request: RouteRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
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
  const data = await providerCall(() => requireConfigured(ctx, provider).api.listTargets(token));
  return { status: 200, body: { data } };
}

async function createLinkRoute(ctx: IntegrationsContext, request: RouteRequest) {
  const { em, integration } = await accessible(ctx, request);
  const body = validateBody(LinkBody, parseJsonBody(request.body));
  const survey = await em.findOne(Survey, { id: body.surveyId });
  if (!survey || survey.environment.id !== integration.environment.id)
    throw notFound('Survey', body.surveyId);
  const questions = questionsOf({ blocks: survey.blocks });
  const token = tokenOf(ctx, integration);
  const { api } = requireConfigured(ctx, integration.provider);
  const mapping = await providerCall(() => api.linkMapping(token, questions, body));
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
