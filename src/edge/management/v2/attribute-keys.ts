// Formbricks' v2 contact attribute keys: list, create, read, change what a key is called, delete.
// A new key follows Formbricks' rules (contacts/attribute-key-rules.ts); its `dataType` (string,
// number or date: Chorus' text, number, date) is set once. Formbricks' own keys (`userId`, `email`,
// `firstName`, `lastName`, `language`) are `default` and cannot be changed or deleted here.
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { ChorusError, invalidInput, notFound } from '../../../errors.ts';
import {
  attributeKeyRecord,
  createAttributeKey,
  deleteAttributeKey,
  describeAttributeKey,
  queryAttributeKeys,
  type AttributeKeyRecord,
} from '../../../store/attribute-keys.ts';
import {
  DEFAULT_KEYS,
  newKeyProblem,
  titleCase,
  UNIQUE_KEYS,
} from '../../../contacts/attribute-key-rules.ts';
import { ContactAttributeKey, type AttributeType } from '../../../store/entities.ts';
import { data } from '../../openapi/route-doc.ts';
import { Id } from '../../openapi/replies.ts';
import type { Route, RouteRequest } from '../../router.ts';
import { nullable, parseJsonBody, requireId, validateBody } from '../../validation.ts';
import { authenticate, permissionFor, requireAccess } from '../auth.ts';
import { forgetEnvironmentCaches, type ManagementContext } from '../context.ts';
import { ENVIRONMENT_FIELDS, namedEnvironment, v2ListRoute, v2Route as route } from './shared.ts';

const BASE = '/api/v2/management/contact-attribute-keys';

/** Formbricks' data types, and Chorus' name for each. */
const DATA_TYPES = { string: 'text', number: 'number', date: 'date' } as const satisfies Record<
  string,
  AttributeType
>;
type DataType = keyof typeof DATA_TYPES;
const dataTypeOf = (type: AttributeType): DataType => (type === 'text' ? 'string' : type);

const V2AttributeKey = Type.Object({
  id: Id,
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  isUnique: Type.Boolean(),
  key: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  description: Type.Union([Type.String(), Type.Null()]),
  type: Type.Enum(['default', 'custom']),
  dataType: Type.Enum(Object.keys(DATA_TYPES)),
  workspaceId: Id,
  environmentId: Id,
});

/** A key in Formbricks' v2 shape, from Chorus' record of it. */
function v2Record(record: AttributeKeyRecord) {
  const { type, environmentId, ...rest } = record;
  return {
    ...rest,
    isUnique: UNIQUE_KEYS.has(record.key),
    type: DEFAULT_KEYS.has(record.key) ? 'default' : 'custom',
    dataType: dataTypeOf(type),
    workspaceId: environmentId,
    environmentId,
  };
}

const v2RecordOf = (row: ContactAttributeKey) => v2Record(attributeKeyRecord(row));

const CreateBody = Compile(
  Type.Object({
    ...ENVIRONMENT_FIELDS,
    key: Type.String({ minLength: 1, maxLength: 64 }),
    name: nullable(Type.String({ maxLength: 255 })),
    description: nullable(Type.String({ maxLength: 1000 })),
    dataType: Type.Optional(Type.Enum(Object.keys(DATA_TYPES) as DataType[])),
  }),
);

const UpdateBody = Compile(
  Type.Object({
    name: nullable(Type.String({ maxLength: 255 })),
    description: nullable(Type.String({ maxLength: 1000 })),
  }),
);

export function v2AttributeKeyRoutes(ctx: ManagementContext): Route[] {
  const one = (description: string) => ({ 200: data(V2AttributeKey, description) });
  return [
    v2ListRoute(
      ctx,
      BASE,
      { summary: 'List contact attribute keys (Formbricks v2)', item: V2AttributeKey },
      (q) => queryAttributeKeys(ctx.orm.em, q, v2RecordOf),
    ),
    route({
      method: 'POST',
      path: BASE,
      doc: {
        summary: 'Create a contact attribute key (Formbricks v2); 409 when the key exists',
        description:
          '`key`: lowercase letters, digits and `_`, a letter first; `dataType` `string` (the default), `number` or `date`; `name` defaults to the key in title case. The environment is `workspaceId` or `environmentId`.',
        auth: 'apiKey',
        body: CreateBody.Type(),
        replies: { 201: data(V2AttributeKey, 'The key created') },
        errors: [400, 409, 503],
      },
      handler: async (request) => {
        const grant = await authenticate(request, ctx.keys);
        const body = validateBody(CreateBody, parseJsonBody(request.body));
        const environmentId = namedEnvironment(grant, body);
        const problem = newKeyProblem(body.key);
        if (problem) throw invalidInput({ key: problem });
        const created = await createAttributeKey(ctx.orm.em, {
          environmentId,
          key: body.key,
          type: DATA_TYPES[body.dataType ?? 'string'],
          name: body.name ?? titleCase(body.key),
          description: body.description ?? undefined,
        }).catch((error: unknown) => {
          if (error instanceof ChorusError && error.kind === 'conflict')
            throw new ChorusError('conflict', 'Conflict', {
              contactAttributeKey: `Contact attribute key with "${body.key}" already exists`,
            });
          throw error;
        });
        forgetEnvironmentCaches(ctx, environmentId);
        return { status: 201, body: { data: v2Record(created) } };
      },
    }),
    route({
      method: 'GET',
      path: `${BASE}/:keyId`,
      doc: {
        summary: 'Read a contact attribute key (Formbricks v2)',
        auth: 'apiKey',
        replies: one('The key'),
        errors: [400, 404, 503],
      },
      handler: async (request) => ({
        status: 200,
        body: { data: v2RecordOf((await accessibleKey(ctx, request)).row) },
      }),
    }),
    route({
      method: 'PUT',
      path: `${BASE}/:keyId`,
      doc: {
        summary: 'Change the name and description of a contact attribute key (Formbricks v2); its key stays',
        auth: 'apiKey',
        body: UpdateBody.Type(),
        replies: one('The key changed'),
        errors: [400, 404, 503],
      },
      handler: async (request) => {
        const change = validateBody(UpdateBody, parseJsonBody(request.body));
        const { em, row } = await changeableKey(ctx, request, 'update');
        await describeAttributeKey(em, row, change);
        return { status: 200, body: { data: v2RecordOf(row) } };
      },
    }),
    route({
      method: 'DELETE',
      path: `${BASE}/:keyId`,
      doc: {
        summary: 'Delete a contact attribute key and its values from the contacts (Formbricks v2)',
        auth: 'apiKey',
        replies: one('The key deleted'),
        errors: [400, 404, 503],
      },
      handler: async (request) => {
        const { row } = await changeableKey(ctx, request, 'delete');
        const record = v2RecordOf(row);
        await deleteAttributeKey(ctx.orm.em, row);
        forgetEnvironmentCaches(ctx, row.environment.id);
        return { status: 200, body: { data: record } };
      },
    }),
  ];
}

/** The key of the path, if the API key may act on its environment (GET read, PUT write, DELETE manage). */
async function accessibleKey(ctx: ManagementContext, request: RouteRequest) {
  const grant = await authenticate(request, ctx.keys);
  const id = requireId('keyId', request.params.keyId);
  const em = ctx.orm.em.fork();
  const row = await em.findOne(ContactAttributeKey, { id });
  if (!row) throw notFound('ContactAttributeKey', id);
  requireAccess(grant, row.environment.id, permissionFor(request.method));
  return { em, row };
}

/** As accessibleKey, refusing Formbricks' own keys as it does. */
async function changeableKey(ctx: ManagementContext, request: RouteRequest, change: 'update' | 'delete') {
  const found = await accessibleKey(ctx, request);
  const { key } = found.row;
  if (DEFAULT_KEYS.has(key) || UNIQUE_KEYS.has(key))
    throw invalidInput({ contactAttributeKey: `cannot ${change} default contact attribute key` });
  return found;
}
