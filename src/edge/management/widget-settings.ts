// Management API: an environment's widget settings — placement, overlay, click-outside-close,
// branding, styling and the default recontact days — which Formbricks keeps on the project and the
// environment state serves as `workspace` (and `project`). GET answers them with the defaults
// filled in; PUT changes the fields sent.
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { notFound } from '../../errors.ts';
import { findWidgetSettings, updateWidgetSettings } from '../../store/environment-state.ts';
import { WidgetSettingsFields } from '../../surveys/widget-fields.ts';
import { widgetSettingsOf } from '../../surveys/widget-state.ts';
import type { Route, RouteRequest } from '../router.ts';
import { parseJsonBody, requireId, validateBody } from '../validation.ts';
import { authenticate, permissionFor, requireAccess } from './auth.ts';
import type { ManagementContext } from './context.ts';
import { data } from '../openapi/route-doc.ts';
import { WidgetSettings } from '../openapi/replies.ts';

const UpdateBody = Compile(Type.Object(WidgetSettingsFields));

export function managementWidgetSettingsRoutes(ctx: ManagementContext): Route[] {
  const path = '/api/v1/management/environments/:environmentId/widget-settings';
  return [
    {
      method: 'GET',
      path,
      doc: {
        summary: "An environment's widget settings, defaults filled in",
        auth: 'apiKey',
        replies: { 200: data(WidgetSettings, 'The settings') },
        errors: [400, 404, 503],
      },
      handler: async (request) => {
        const environmentId = await accessibleEnvironment(ctx, request);
        const stored = await findWidgetSettings(ctx.orm.em, environmentId);
        if (!stored) throw notFound('Environment', environmentId);
        return { status: 200, body: { data: widgetSettingsOf(environmentId, stored) } };
      },
    },
    {
      method: 'PUT',
      path,
      doc: {
        summary: "Change the fields sent of an environment's widget settings",
        auth: 'apiKey',
        body: UpdateBody.Type(),
        replies: { 200: data(WidgetSettings, 'The settings changed') },
        errors: [400, 404, 503],
      },
      handler: async (request) => {
        const environmentId = await accessibleEnvironment(ctx, request);
        const body = validateBody(UpdateBody, parseJsonBody(request.body));
        const stored = await updateWidgetSettings(ctx.orm.em, environmentId, body);
        if (!stored) throw notFound('Environment', environmentId);
        ctx.environmentStates?.delete(environmentId);
        return { status: 200, body: { data: widgetSettingsOf(environmentId, stored) } };
      },
    },
  ];
}

/** The environment of the path, if the key may act on it (GET read, PUT write). */
async function accessibleEnvironment(ctx: ManagementContext, request: RouteRequest): Promise<string> {
  const grant = await authenticate(request, ctx.keys);
  const environmentId = requireId('environmentId', request.params.environmentId);
  requireAccess(grant, environmentId, permissionFor(request.method));
  return environmentId;
}
