// Management API: contact attribute keys, unique per environment.
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { invalidInput, notFound } from '../../errors.ts';
import { ID_PATTERN } from '../../ids.ts';
import { ATTRIBUTE_TYPES, ContactAttributeKey } from '../../store/entities.ts';
import {
  attributeKeyRecord,
  createAttributeKey,
  deleteAttributeKey,
  listAttributeKeys,
} from '../../store/attribute-keys.ts';
import type { Route } from '../router.ts';
import { parseJsonBody, requireId, validateBody } from '../validation.ts';
import { authenticate, can, requireAccess } from './auth.ts';
import { forgetEnvironmentCaches, type ManagementContext } from './context.ts';
import { listRoute } from './paging.ts';
import { data } from '../openapi/route-doc.ts';
import { AttributeKeyRecord } from '../openapi/replies.ts';

const CreateBody = Compile(
  Type.Object({
    environmentId: Type.Optional(Type.String({ pattern: ID_PATTERN })),
    key: Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_.-]{0,63}$' }),
    type: Type.Enum([...ATTRIBUTE_TYPES]),
    name: Type.Optional(Type.String({ maxLength: 255 })),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
  }),
);

export function managementAttributeKeyRoutes(ctx: ManagementContext): Route[] {
  const base = '/api/v1/management/contact-attribute-keys';
  return [
    listRoute(
      base,
      ctx,
      { summary: 'List contact attribute keys', item: AttributeKeyRecord },
      (environmentIds, page) => listAttributeKeys(ctx.orm.em, environmentIds, page),
    ),
    {
      method: 'POST',
      path: base,
      doc: {
        summary: 'Create a contact attribute key (409 when the key exists)',
        description: '`environmentId` may be left out when the API key can write to exactly one environment.',
        auth: 'apiKey',
        body: CreateBody.Type(),
        replies: { 200: data(AttributeKeyRecord, 'The key created') },
        errors: [400, 409, 503],
      },
      handler: async (request) => {
        const grant = await authenticate(request, ctx.keys);
        const body = validateBody(CreateBody, parseJsonBody(request.body));
        // Left out, the environment is the key's own when it has exactly one it can write to.
        const writable = [...grant.environments.keys()].filter((id) => can(grant, id, 'write'));
        const environmentId = body.environmentId ?? (writable.length === 1 ? writable[0] : undefined);
        if (environmentId === undefined) throw invalidInput({ environmentId: 'Required' });
        requireAccess(grant, environmentId, 'write');
        const record = await createAttributeKey(ctx.orm.em, { ...body, environmentId });
        // Key types change how segments read values.
        forgetEnvironmentCaches(ctx, environmentId);
        return { status: 200, body: { data: record } };
      },
    },
    {
      method: 'DELETE',
      path: `${base}/:keyId`,
      doc: {
        summary: 'Delete a contact attribute key and its values from the contacts',
        auth: 'apiKey',
        replies: { 200: data(AttributeKeyRecord, 'The key deleted') },
        errors: [400, 404, 503],
      },
      handler: async (request) => {
        const grant = await authenticate(request, ctx.keys);
        const id = requireId('keyId', request.params.keyId);
        const row = await ctx.orm.em.fork().findOne(ContactAttributeKey, { id });
        if (!row) throw notFound('ContactAttributeKey', id);
        requireAccess(grant, row.environment.id, 'manage');
        const record = attributeKeyRecord(row);
        await deleteAttributeKey(ctx.orm.em, row);
        forgetEnvironmentCaches(ctx, row.environment.id);
        return { status: 200, body: { data: record } };
      },
    },
  ];
}
