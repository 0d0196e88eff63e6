// Client API: identify a user (enterprise). The contact id is derived from (environment, userId),
// so the answer — the contact with its merged attributes — is built here from the cached contact
// and the sent attributes; the contact processor applies the same merge, in order per user.
import { mergeAttributes } from '../../contacts/merge.ts';
import { contactIdFor } from '../../ids.ts';
import type { ContactIdentified } from '../../events/contacts.ts';
import { invalidInput } from '../../errors.ts';
import type { ContactRecord } from '../../store/contacts.ts';
import { ATTRIBUTE_KEY_PATTERN } from '../../store/entities.ts';
import type { Route, RouteRequest } from '../router.ts';
import { parseJsonBody, requireId } from '../validation.ts';
import { requireStorableRequest } from '../safe-json.ts';
import { preflight } from './cors.ts';
import {
  CORS_HEADERS,
  envelope,
  requireEnterpriseForUserId,
  requireEnvironment,
  type ClientContext,
} from './context.ts';

/** Keys the service owns: ignored when a client sends them as attributes. */
const IGNORED_ATTRIBUTES = new Set(['userId', 'id']);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function clientIdentifyRoutes(ctx: ClientContext): Route[] {
  const path = '/api/v1/client/:environmentId/user';
  return [
    { method: 'POST', path, headers: CORS_HEADERS, handler: (r) => identify(ctx, r) },
    preflight(path, ['POST']),
  ];
}

export interface IdentifyInput {
  userId: string;
  attributes: Record<string, string>;
}

/** The identify body rules (shared with the management form of contact creation). */
export function parseIdentifyBody(value: unknown): IdentifyInput {
  const problems: Record<string, string> = {};
  const body = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const userId = body.userId;
  if (userId === undefined || userId === null || userId === '') problems.userId = 'userId is required';
  else if (typeof userId !== 'string') problems.userId = 'must be a string';
  else if (userId.length > 255) problems.userId = 'must be at most 255 characters';

  const attributes: Record<string, string> = {};
  const sent = body.attributes ?? {};
  if (typeof sent !== 'object' || sent === null || Array.isArray(sent)) {
    problems.attributes = 'must be an object';
  } else {
    for (const [key, v] of Object.entries(sent)) {
      if (IGNORED_ATTRIBUTES.has(key)) continue;
      if (!ATTRIBUTE_KEY_PATTERN.test(key)) problems[`attributes.${key}`] = 'is not a valid attribute key';
      else if (typeof v !== 'string') problems[`attributes.${key}`] = 'must be a string';
      else if (key === 'email' && !EMAIL.test(v)) problems['attributes.email'] = 'must be a valid email';
      else attributes[key] = v;
    }
  }
  if (Object.keys(problems).length > 0) throw invalidInput(problems);
  return { userId: userId as string, attributes };
}

async function identify(ctx: ClientContext, request: RouteRequest) {
  requireStorableRequest(request);
  const environmentId = requireId('environmentId', request.params.environmentId);
  const input = parseIdentifyBody(parseJsonBody(request.body));
  const environment = await requireEnvironment(ctx, environmentId);
  requireEnterpriseForUserId(environment, input.userId);
  return { status: 200, body: { data: await publishIdentify(ctx, environmentId, input) } };
}

/** Writes the identify to Kafka and returns the contact as it will be once applied. */
export async function publishIdentify(
  ctx: ClientContext,
  environmentId: string,
  input: IdentifyInput,
): Promise<ContactRecord> {
  const contactId = contactIdFor(environmentId, input.userId);
  const event: ContactIdentified = {
    type: 'contact.identified',
    ...envelope(environmentId),
    contactId,
    userId: input.userId,
    attributes: input.attributes,
  };
  const existing = await ctx.contacts.get(contactId);
  await ctx.outputs.contacts.publish(event);
  const contact: ContactRecord = {
    id: contactId,
    createdAt: existing?.createdAt ?? event.occurredAt,
    updatedAt: event.occurredAt,
    environmentId,
    userId: input.userId,
    attributes: mergeAttributes(existing?.attributes, input.attributes, input.userId),
  };
  ctx.contacts.set(contactId, contact);
  return contact;
}
