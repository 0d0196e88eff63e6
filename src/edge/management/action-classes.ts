// Management API: action classes, as Formbricks' `/api/v1/management/action-classes`. A `code`
// action fires on `formbricks.track(key)`; a `noCode` one on what its `noCodeConfig` describes (a
// page view, a click, exit intent, a 50 % scroll, time on page). Names and keys are unique within
// an environment (409). A write forgets the environment's cached widget state on this edge; the
// others hear of it through PostgreSQL.
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { invalidInput, notFound } from '../../errors.ts';
import { ID_PATTERN } from '../../ids.ts';
import { ACTION_CLASS_TYPES, ActionClass } from '../../store/entities.ts';
import {
  actionClassRecord,
  createActionClass,
  listActionClasses,
  updateActionClass,
  type ActionClassFields,
} from '../../store/action-classes.ts';
import { NoCodeConfig } from '../../surveys/widget-fields.ts';
import type { Route, RouteRequest } from '../router.ts';
import { nullable, parseJsonBody, requireId, validateBody } from '../validation.ts';
import { authenticate, permissionFor, requireAccess, writableEnvironment } from './auth.ts';
import type { ManagementContext } from './context.ts';
import { listRoute } from './paging.ts';
import { data } from '../openapi/route-doc.ts';
import { ActionClassRecord } from '../openapi/replies.ts';

const Fields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  description: nullable(Type.String({ maxLength: 1000 })),
  type: Type.Enum([...ACTION_CLASS_TYPES]),
  key: nullable(Type.String({ minLength: 1, maxLength: 255 })),
  noCodeConfig: nullable(NoCodeConfig),
};
const CreateBody = Compile(
  Type.Object({ environmentId: Type.Optional(Type.String({ pattern: ID_PATTERN })), ...Fields }),
);
const UpdateBody = Compile(Type.Partial(Type.Object({ environmentId: Type.String(), ...Fields })));

type Input = Partial<Omit<ActionClassFields, 'noCodeConfig'>> & { noCodeConfig?: NoCodeConfig | null };

/**
 * The stored fields of a body (over `current` for an update), with Formbricks' rules: a name is
 * trimmed and not blank; a code action has a key and no configuration; a no-code action has a
 * configuration and no key, a click names its element and a page dwell its time.
 */
function actionClassFields(body: Input, current?: Partial<ActionClassFields>): ActionClassFields {
  const type = body.type ?? current?.type ?? 'code';
  const name = (body.name ?? current?.name ?? '').trim();
  const description = body.description === undefined ? (current?.description ?? null) : body.description;
  const problems: Record<string, string> = {};
  if (name === '') problems.name = 'Name must be at least 1 character long';
  let key: string | null = null;
  let noCodeConfig: NoCodeConfig | null = null;
  if (type === 'code') {
    key = (body.key === undefined ? (current?.key ?? null) : body.key)?.trim() || null;
    if (key === null) problems.key = 'A code action needs a key';
  } else {
    noCodeConfig =
      body.noCodeConfig === undefined
        ? ((current?.noCodeConfig as NoCodeConfig | null | undefined) ?? null)
        : body.noCodeConfig;
    if (noCodeConfig === null) problems.noCodeConfig = 'A no-code action needs a noCodeConfig';
    else if (
      noCodeConfig.type === 'click' &&
      !noCodeConfig.elementSelector?.cssSelector &&
      !noCodeConfig.elementSelector?.innerHtml
    )
      problems['noCodeConfig.elementSelector'] = 'Either cssSelector or innerHtml must be provided';
    else if (noCodeConfig.type === 'pageDwell' && noCodeConfig.timeInSeconds === undefined)
      problems['noCodeConfig.timeInSeconds'] = 'Required';
  }
  if (Object.keys(problems).length > 0) throw invalidInput(problems);
  return { name, description, type, key, noCodeConfig };
}

export function managementActionClassRoutes(ctx: ManagementContext): Route[] {
  const base = '/api/v1/management/action-classes';
  return [
    listRoute(
      base,
      ctx,
      { summary: 'List action classes', item: ActionClassRecord },
      (environmentIds, page) => listActionClasses(ctx.orm.em, environmentIds, page),
    ),
    {
      method: 'GET',
      path: `${base}/:actionClassId`,
      doc: {
        summary: 'Read an action class',
        auth: 'apiKey',
        replies: { 200: data(ActionClassRecord, 'The action class') },
        errors: [400, 404, 503],
      },
      handler: async (request) => {
        const { row } = await accessibleActionClass(ctx, request);
        return { status: 200, body: { data: actionClassRecord(row) } };
      },
    },
    {
      method: 'POST',
      path: base,
      doc: {
        summary: 'Create an action class: `code` with a `key`, or `noCode` with a `noCodeConfig`',
        description:
          '409 when the name or key is used in the environment. `environmentId` may be left out when the API key can write to exactly one environment.',
        auth: 'apiKey',
        body: CreateBody.Type(),
        replies: { 200: data(ActionClassRecord, 'The action class created') },
        errors: [400, 409, 503],
      },
      handler: async (request) => {
        const grant = await authenticate(request, ctx.keys);
        const { environmentId: asked, ...body } = validateBody(CreateBody, parseJsonBody(request.body));
        const environmentId = writableEnvironment(grant, asked);
        const record = await createActionClass(ctx.orm.em, { environmentId, ...actionClassFields(body) });
        ctx.environmentStates?.delete(environmentId);
        return { status: 200, body: { data: record } };
      },
    },
    {
      method: 'PUT',
      path: `${base}/:actionClassId`,
      doc: {
        summary: 'Change the fields sent of an action class, with the same rules',
        auth: 'apiKey',
        body: UpdateBody.Type(),
        replies: { 200: data(ActionClassRecord, 'The action class changed') },
        errors: [400, 404, 409, 503],
      },
      handler: async (request) => {
        const { em, row } = await accessibleActionClass(ctx, request);
        const { environmentId, ...body } = validateBody(UpdateBody, parseJsonBody(request.body));
        if (environmentId !== undefined && environmentId !== row.environment.id) {
          throw invalidInput({ environmentId: 'An action class cannot move to another environment' });
        }
        const record = await updateActionClass(em, row, actionClassFields(body, row));
        ctx.environmentStates?.delete(row.environment.id);
        return { status: 200, body: { data: record } };
      },
    },
    {
      method: 'DELETE',
      path: `${base}/:actionClassId`,
      doc: {
        summary: 'Delete an action class (survey triggers on it stop being served)',
        auth: 'apiKey',
        replies: { 200: data(ActionClassRecord, 'The action class deleted') },
        errors: [400, 404, 503],
      },
      handler: async (request) => {
        const { em, row } = await accessibleActionClass(ctx, request);
        const record = actionClassRecord(row);
        // Survey triggers naming it stay stored; the widget state leaves them out (widget-state.ts).
        await em.remove(row).flush();
        ctx.environmentStates?.delete(row.environment.id);
        return { status: 200, body: { data: record } };
      },
    },
  ];
}

/** The action class of the path, if the key may act on its environment (GET read, PUT write, DELETE manage). */
async function accessibleActionClass(ctx: ManagementContext, request: RouteRequest) {
  const grant = await authenticate(request, ctx.keys);
  const id = requireId('actionClassId', request.params.actionClassId);
  const em = ctx.orm.em.fork();
  const row = await em.findOne(ActionClass, { id });
  if (!row) throw notFound('ActionClass', id);
  requireAccess(grant, row.environment.id, permissionFor(request.method));
  return { em, row };
}
