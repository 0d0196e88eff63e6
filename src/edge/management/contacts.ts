// Management API: contacts. Reads hit PostgreSQL; create-or-merge goes through the contacts topic
// like identify (one writer per contact, in order); delete is immediate and leaves a tombstone.
import { notFound } from '../../errors.ts';
import { deleteContact, findContact, listContacts, type ContactRecord } from '../../store/contacts.ts';
import type { Route, RouteRequest } from '../router.ts';
import { parseJsonBody, requireId } from '../validation.ts';
import { parseIdentifyBody, publishIdentify } from '../client/identify.ts';
import { authenticate, permissionFor, requireAccess } from './auth.ts';
import type { ManagementContext } from './context.ts';
import { listRoute } from './paging.ts';

export function managementContactRoutes(ctx: ManagementContext): Route[] {
  const byEnvironment = '/api/v1/environments/:environmentId/contacts';
  return [
    listRoute('/api/v1/management/contacts', ctx, (environmentIds, page) =>
      listContacts(ctx.orm.em, environmentIds, page),
    ),
    {
      method: 'GET',
      path: '/api/v1/management/contacts/:contactId',
      handler: async (request) => ({ status: 200, body: { data: await accessibleContact(ctx, request) } }),
    },
    {
      method: 'POST',
      path: byEnvironment,
      handler: async (request) => {
        const grant = await authenticate(request, ctx.keys);
        const environmentId = requireId('environmentId', request.params.environmentId);
        requireAccess(grant, environmentId, 'write');
        const input = parseIdentifyBody(parseJsonBody(request.body));
        return { status: 200, body: { data: await publishIdentify(ctx.client, environmentId, input) } };
      },
    },
    {
      method: 'GET',
      path: `${byEnvironment}/:contactId`,
      handler: async (request) => ({ status: 200, body: { data: await accessibleContact(ctx, request) } }),
    },
    {
      method: 'DELETE',
      path: `${byEnvironment}/:contactId`,
      handler: async (request) => {
        const contact = await accessibleContact(ctx, request);
        await deleteContact(ctx.orm.em, contact);
        ctx.client.contacts.delete(contact.id);
        return { status: 200, body: { data: { id: contact.id, deleted: true } } };
      },
    },
  ];
}

/** The contact of the path (in the path's environment, for the environment form), if the key may act on it. */
async function accessibleContact(ctx: ManagementContext, request: RouteRequest): Promise<ContactRecord> {
  const grant = await authenticate(request, ctx.keys);
  const id = requireId('contactId', request.params.contactId);
  const contact = await findContact(ctx.orm.em, id);
  const environmentId = request.params.environmentId;
  if (!contact || (environmentId !== undefined && contact.environmentId !== environmentId)) {
    throw notFound('Contact', id);
  }
  requireAccess(grant, contact.environmentId, permissionFor(request.method));
  return contact;
}
