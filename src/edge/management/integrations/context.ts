// What the integration routes share: their context, the integration a request names (with the API
// key's access to it checked), the provider's client and the token for it, and how a provider that
// fails while a user waits is answered.
import { ChorusError, notFound } from '../../../errors.ts';
import type { Provider } from '../../../config.ts';
import { Integration } from '../../../store/entities.ts';
import { decryptToken } from '../../../integrations/secrets.ts';
import type { Destinations } from '../../../integrations/destination.ts';
import { ProviderError } from '../../../integrations/failure.ts';
import type { RouteRequest } from '../../router.ts';
import { requireId } from '../../validation.ts';
import { authenticate, permissionFor, requireAccess } from '../auth.ts';
import type { ManagementContext } from '../context.ts';

export interface IntegrationsContext extends ManagementContext {
  destinations: Destinations;
  webappUrl: string;
  encryptionKey: Buffer | undefined;
}

/** Where the management API keeps integrations, their targets, links and deliveries. */
export const INTEGRATIONS_PATH = '/api/v1/management/integrations';

export function requireConfigured(ctx: IntegrationsContext, provider: Provider) {
  const api = ctx.destinations[provider];
  if (!api || !ctx.encryptionKey) {
    throw new ChorusError('invalid_input', `The ${provider} integration is not configured on this server`, {
      provider,
    });
  }
  return { api, key: ctx.encryptionKey };
}

/** The integration of the path, once the API key is known to have access to it for this method. */
export async function accessible(ctx: IntegrationsContext, request: RouteRequest) {
  const grant = await authenticate(request, ctx.keys);
  const id = requireId('integrationId', request.params.integrationId);
  const em = ctx.orm.em.fork();
  const integration = await em.findOne(Integration, { id });
  if (!integration) throw notFound('Integration', id);
  requireAccess(grant, integration.environment.id, permissionFor(request.method));
  return { em, integration };
}

export function tokenOf(ctx: IntegrationsContext, integration: Integration): string {
  const { key } = requireConfigured(ctx, integration.provider);
  return decryptToken(key, integration.tokenCiphertext);
}

/** A provider that fails while a user waits: a clear 4xx/503, never a 500. */
export async function providerCall<T>(call: () => Promise<T>): Promise<T> {
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
