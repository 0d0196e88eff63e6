// Connecting a workspace over OAuth: the management client's connect, the browser's authorize and
// the provider's callback, which keeps the token encrypted (see connect for how an attempt is bound
// to the browser that started it).
import { randomBytes } from 'node:crypto';
import Type from 'typebox';
import { invalidInput, notFound } from '../../../errors.ts';
import { PROVIDERS, type Provider } from '../../../config.ts';
import {
  consumeOAuthAttempt,
  integrationRecord,
  recordOAuthAttempt,
  redeemOAuthTicket,
  saveIntegration,
} from '../../../store/integrations.ts';
import {
  encryptToken,
  matchesHash,
  newSecret,
  secretHash,
  signState,
  verifyState,
} from '../../../integrations/secrets.ts';
import type { Route, RouteRequest } from '../../router.ts';
import { requireId } from '../../validation.ts';
import { requireStorableRequest } from '../../safe-json.ts';
import { authenticate, requireAccess } from '../auth.ts';
import { providerCall, requireConfigured, type IntegrationsContext } from './context.ts';
import { data, type Parameter } from '../../openapi/route-doc.ts';
import { Id, IntegrationRecord, Redirect } from '../../openapi/replies.ts';

/** How long the connect URL may wait for a browser to open it. */
const TICKET_TTL_MS = 10 * 60_000;
/** How long the user has to consent, from the browser opening the connect URL. */
const STATE_TTL_MS = 10 * 60_000;
const COOKIE_PREFIX = 'chorus_oauth_';
const COOKIE_PATH = '/api/v1/integrations';

const PROVIDER = { provider: Type.Enum([...PROVIDERS]) };
const redirect = (to: string, headers: Record<string, Parameter> = {}) =>
  data(Redirect, `To ${to}`, {
    Location: { schema: Type.String(), description: 'The same address' },
    ...headers,
  });
const SET_COOKIE: Record<string, Parameter> = {
  'Set-Cookie': { schema: Type.String(), description: 'The nonce that binds the attempt to this browser' },
};

export function oauthRoutes(ctx: IntegrationsContext): Route[] {
  return [
    {
      method: 'GET',
      path: '/api/v1/integrations/:provider/connect',
      doc: {
        summary: 'Start connecting a workspace: the address a browser opens, once',
        auth: 'apiKey',
        params: PROVIDER,
        query: { environmentId: { schema: Id, description: 'The environment to connect', required: true } },
        replies: { 302: redirect('the single-use authorize address for the browser') },
        errors: [400, 404, 503],
      },
      handler: (r) => connect(ctx, r),
    },
    {
      method: 'GET',
      path: '/api/v1/integrations/:provider/authorize',
      doc: {
        summary: "Opened by the browser: redeems the ticket and redirects to the provider's consent page",
        params: PROVIDER,
        query: { ticket: { schema: Type.String(), description: 'From the connect address', required: true } },
        replies: { 302: redirect("the provider's consent page", SET_COOKIE) },
        errors: [400, 404, 503],
      },
      handler: (r) => authorize(ctx, r),
    },
    {
      method: 'GET',
      path: '/api/v1/integrations/:provider/callback',
      doc: {
        summary: 'Where the provider sends the browser back: stores the token, encrypted',
        params: PROVIDER,
        query: {
          code: { schema: Type.String(), description: "The provider's authorization code" },
          state: { schema: Type.String(), description: 'The signed state of the attempt' },
          error: { schema: Type.String(), description: 'Set by the provider when consent was declined' },
        },
        replies: { 200: data(IntegrationRecord, 'The integration connected', SET_COOKIE) },
        errors: [400, 404, 503],
      },
      handler: (r) => callback(ctx, r),
    },
  ];
}

function providerOf(request: RouteRequest): Provider {
  const provider = request.params.provider;
  if (!(PROVIDERS as readonly string[]).includes(provider ?? ''))
    throw notFound('Integration provider', provider ?? '');
  return provider as Provider;
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
