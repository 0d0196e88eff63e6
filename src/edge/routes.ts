// The route table of the edge: every route it serves, and the API document that describes them
// (openapi/), built from this same table.
import type { Readiness } from '../observability/readiness.ts';
import type { Directory } from './directory.ts';
import { healthRoutes } from './health.ts';
import type { Route } from './router.ts';
import type { ClientContext } from './client/context.ts';
import { clientResponseRoutes } from './client/responses.ts';
import { clientDisplayRoutes } from './client/displays.ts';
import { clientIdentifyRoutes, type ActivityReader } from './client/identify.ts';
import { clientEnvironmentRoutes, type CachedEnvironmentState } from './client/environment.ts';
import { clientStorageRoutes, type UploadStore } from './client/storage.ts';
import type { Idempotency } from './client/idempotency.ts';
import type { ManagementContext } from './management/context.ts';
import { managementResponseRoutes } from './management/responses.ts';
import { managementExportRoutes } from './management/response-export.ts';
import { managementV2Routes } from './management/v2/routes.ts';
import { managementSurveyRoutes } from './management/surveys.ts';
import { surveySummaryRoute } from './management/survey-summary.ts';
import { managementSegmentRoutes } from './management/segments.ts';
import { managementContactRoutes } from './management/contacts.ts';
import { managementAttributeKeyRoutes } from './management/attribute-keys.ts';
import { managementActionClassRoutes } from './management/action-classes.ts';
import { managementWidgetSettingsRoutes } from './management/widget-settings.ts';
import type { IntegrationsContext } from './management/integrations/context.ts';
import { oauthRoutes } from './management/integrations/oauth.ts';
import { integrationRoutes } from './management/integrations/integrations.ts';
import { linkRoutes } from './management/integrations/links.ts';
import { managementWebhookRoutes, type WebhooksContext } from './management/webhooks.ts';
import { withApiDocument } from './openapi/route.ts';

/** What the routes answer from: the route factories only keep them for their handlers. */
export interface RouteContexts {
  readiness: Readiness;
  client: ClientContext;
  idempotency: Idempotency;
  /** The identify routes' read of a contact's history (store/contact-activity.ts). */
  activityOf: ActivityReader;
  /** Where uploads are signed for; undefined: uploads are not configured. */
  uploads: UploadStore | undefined;
  environmentStates: Directory<CachedEnvironmentState>;
  management: ManagementContext;
  integrations: IntegrationsContext;
  webhooks: WebhooksContext;
}

/** Every route of the edge, `GET /api/openapi.json` included; `version` is the document's. */
export function edgeRoutes(ctx: RouteContexts, version: string): Route[] {
  return withApiDocument(
    [
      ...healthRoutes(ctx.readiness),
      ...clientResponseRoutes(ctx.client, ctx.idempotency),
      ...clientDisplayRoutes(ctx.client, ctx.idempotency),
      ...clientIdentifyRoutes(ctx.client, ctx.activityOf),
      ...clientStorageRoutes(ctx.client, ctx.uploads),
      ...clientEnvironmentRoutes(ctx.environmentStates),
      // Before the responses' routes: `export` is not a response id.
      ...managementExportRoutes(ctx.management),
      ...managementResponseRoutes(ctx.management),
      ...managementV2Routes(ctx.webhooks),
      ...managementSurveyRoutes(ctx.management),
      surveySummaryRoute(ctx.management),
      ...managementSegmentRoutes(ctx.management),
      ...managementContactRoutes(ctx.management),
      ...managementAttributeKeyRoutes(ctx.management),
      ...managementActionClassRoutes(ctx.management),
      ...managementWidgetSettingsRoutes(ctx.management),
      ...oauthRoutes(ctx.integrations),
      ...integrationRoutes(ctx.integrations),
      ...linkRoutes(ctx.integrations),
      ...managementWebhookRoutes(ctx.webhooks),
    ],
    version,
  );
}
