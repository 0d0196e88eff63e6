// Formbricks' v2 management API (`/api/v2/management/…`, `/api/v2/me`): its request and answer
// shapes and error envelope (shared.ts) over the same stores, API keys and commands as v1.
import type { Route } from '../../router.ts';
import type { WebhooksContext } from '../webhooks.ts';
import { v2AttributeKeyRoutes } from './attribute-keys.ts';
import { v2ContactRoutes } from './contacts.ts';
import { v2MeRoute } from './me.ts';
import { v2ResponseRoutes } from './responses.ts';
import { v2WebhookRoutes } from './webhooks.ts';

export function managementV2Routes(ctx: WebhooksContext): Route[] {
  return [
    ...v2ResponseRoutes(ctx),
    v2MeRoute(ctx),
    ...v2ContactRoutes(ctx),
    ...v2AttributeKeyRoutes(ctx),
    ...v2WebhookRoutes(ctx),
  ];
}
