// Integrations through the management API (API key rules as elsewhere): list, read and delete the
// connected workspaces, and the channels (Slack) or databases (Notion) a link can target.
import Type, { type TSchema } from 'typebox';
import { notFound } from '../../../errors.ts';
import { PROVIDERS, type Provider } from '../../../config.ts';
import { integrationRecord, listIntegrations } from '../../../store/integrations.ts';
import { LINK_TARGETS } from '../../../integrations/providers.ts';
import type { Route, RouteRequest } from '../../router.ts';
import { listRoute } from '../paging.ts';
import { data } from '../../openapi/route-doc.ts';
import { IntegrationRecord, NotionDatabase, SlackChannel } from '../../openapi/replies.ts';
import {
  accessible,
  INTEGRATIONS_PATH,
  providerCall,
  requireConfigured,
  tokenOf,
  type IntegrationsContext,
} from './context.ts';

/** What each provider's targets are, for the API document. */
const TARGETS: Record<Provider, { summary: string; item: TSchema }> = {
  slack: { summary: 'The Slack channels the app can post to', item: SlackChannel },
  notion: { summary: 'The Notion databases shared with the integration', item: NotionDatabase },
};

export function integrationRoutes(ctx: IntegrationsContext): Route[] {
  const base = INTEGRATIONS_PATH;
  return [
    listRoute(
      base,
      ctx,
      { summary: 'List the connected workspaces', item: IntegrationRecord },
      (environmentIds, page) => listIntegrations(ctx.orm.em, environmentIds, page),
    ),
    {
      method: 'GET',
      path: `${base}/:integrationId`,
      doc: {
        summary: 'Read an integration',
        auth: 'apiKey',
        replies: { 200: data(IntegrationRecord, 'The integration') },
        errors: [400, 404, 503],
      },
      handler: async (r) => ({
        status: 200,
        body: { data: integrationRecord((await accessible(ctx, r)).integration) },
      }),
    },
    {
      method: 'DELETE',
      path: `${base}/:integrationId`,
      doc: {
        summary: 'Delete an integration with its links and deliveries',
        auth: 'apiKey',
        replies: { 200: data(IntegrationRecord, 'The integration deleted') },
        errors: [400, 404, 503],
      },
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
      doc: {
        summary: `${TARGETS[provider].summary} (a ${provider} integration only)`,
        auth: 'apiKey' as const,
        replies: { 200: data(Type.Array(TARGETS[provider].item), 'Every one the provider lists') },
        errors: [400, 404, 503],
      },
      handler: (r: RouteRequest) => targets(ctx, r, provider),
    })),
  ];
}

/** The channels (Slack) or databases (Notion) a link can target. */
async function targets(ctx: IntegrationsContext, request: RouteRequest, provider: Provider) {
  const { integration } = await accessible(ctx, request);
  if (integration.provider !== provider) throw notFound('Integration', integration.id);
  const token = tokenOf(ctx, integration);
  const data = await providerCall(() => requireConfigured(ctx, provider).api.listTargets(token));
  return { status: 200, body: { data } };
}
