// Management API: contacts. Reads hit PostgreSQL; create-or-merge goes through the contacts topic
// like identify (one writer per contact, in order); delete is immediate and leaves a tombstone.
import { notFound } from '../../errors.ts';
import { deleteContact, findContact, listContacts, type ContactRecord } from '../../store/contacts.ts';
import type { Route, RouteRequest } from '../router.ts';
import { parseJsonBody, requireId } from '../validation.ts';
import { identifyBody, publishIdentify } from '../client/identify.ts';
import { parseIdentifyBody } from '../../contacts/identify-input.ts';
import { authenticate, permissionFor, requireAccess } from './auth.ts';
import type { ManagementContext } from './context.ts';
import { listRoute } from './paging.ts';
import { data, type RouteDoc } from '../openapi/route-doc.ts';
import { Contact, DeletedContact } from '../openapi/replies.ts';

export function managementContactRoutes(ctx: ManagementContext): Route[] {
  const byEnvironment = '/api/v1/environments/:environmentId/contacts';
  const read: RouteDoc = {
    summary: 'Read a contact',
    auth: 'apiKey',
    replies: { 200: data(Contact, 'The contact') },
    errors: [400, 404, 503],
  };
  return [
    listRoute(
      '/api/v1/management/contacts',
      ctx,
      { summary: 'List contacts', item: Contact },
      (environmentIds, page) => listContacts(ctx.orm.em, environmentIds, page),
    ),
    {
      method: 'GET',
      path: '/api/v1/management/contacts/:contactId',
      doc: read,
      handler: async (request) => ({ status: 200, body: { data: await accessibleContact(ctx, request) } }),
    },
    {
      method: 'POST',
      path: byEnvironment,
      doc: {
        summary: 'Create a contact, or merge attributes into it, with the identify rules',
        auth: 'apiKey',
        body: identifyBody('string'),
        replies: { 200: data(Contact, 'The contact as it will be once stored') },
        errors: [400, 503],
      },
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
      doc: read,
      handler: async (request) => ({ status: 200, body: { data: await accessibleContact(ctx, request) } }),
    },
    {
      method: 'DELETE',
      path: `${byEnvironment}/:contactId`,
      doc: {
        summary: 'Delete a contact with its responses, displays and quota counts (a tombstone remains)',
        auth: 'apiKey',
        replies: { 200: data(DeletedContact, 'Deleted') },
        errors: [400, 404, 503],
      },
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
