// Client API: identify a user (enterprise). The contact id is derived from (environment, userId),
// so the answer — the contact with its merged attributes — is built here from the cached contact
// and the sent attributes; the contact processor applies the same merge, in order per user.
//
// The answer is the spec's contact PLUS the `state` the Formbricks widget reads (widget contract
// §5.8), so both kinds of client are served by one shape. v1 keeps the spec's body rules (string
// attribute values only); v2, where js-core and the mobile SDKs identify, also takes numbers and
// booleans, written as strings (the spec's rule 2 for contacts).
//
// While PostgreSQL is unavailable an identify is still accepted (written to Kafka, answered 200;
// the contact processor applies it once PostgreSQL is back), for an environment the edge knows. What
// the answer can say then is what the edge holds: the contact's attributes merged into the cached
// contact, or the sent ones alone when the edge does not hold it; and a user state WITHOUT the
// contact's stored history, which cannot be read. That state lists the displays and responses this
// edge wrote for the contact lately, and no segment, so the widget shows the user no survey until it
// identifies again, at its first page load after a minute (USER_STATE_WITHOUT_HISTORY_TTL_MS).
// Listing the environment's app surveys instead would let the widget show a survey the user has
// already answered, or seen as often as it may be shown, since it filters by that history: missing
// a survey for a while is the lesser harm. (js-core pushes `expiresAt` back by itself while a page
// stays open, so on that page the state lasts until it identifies again.)
import Type from 'typebox';
import { mergeAttributes } from '../../contacts/merge.ts';
import {
  parseIdentifyBody,
  type AttributeValues,
  type IdentifyInput,
} from '../../contacts/identify-input.ts';
import { contactIdFor } from '../../ids.ts';
import type { ContactIdentified } from '../../events/contacts.ts';
import { emptyActivity, type ContactActivity } from '../../store/contact-activity.ts';
import { segmentIdsOf } from '../../segments/membership.ts';
import { deviceTypeOf } from '../request-meta.ts';
import type { ContactRecord } from '../../store/contacts.ts';
import type { Route, RouteRequest } from '../router.ts';
import { data } from '../openapi/route-doc.ts';
import { IdentifiedContact } from '../openapi/replies.ts';
import { parseJsonBody, requireId } from '../validation.ts';
import { requireStorableRequest } from '../safe-json.ts';
import { preflight } from './cors.ts';
import {
  CORS_HEADERS,
  envelope,
  requireEnterpriseForUserId,
  requireEnvironment,
  unlessUnavailable,
  type ClientContext,
} from './context.ts';
import { withRecentWrites } from './recent-activity.ts';
import { buildUserState, USER_STATE_WITHOUT_HISTORY_TTL_MS } from './user-state.ts';

/** Reads what the user state needs from the store (store/contact-activity.ts). */
export type ActivityReader = (environmentId: string, contactId: string) => Promise<ContactActivity>;

/** Keys the service owns: ignored when a client sends them as attributes. */
export function clientIdentifyRoutes(ctx: ClientContext, activityOf: ActivityReader): Route[] {
  return (['v1', 'v2'] as const).flatMap((version): Route[] => {
    const path = `/api/${version}/client/:environmentId/user`;
    const values = version === 'v1' ? 'string' : 'scalar';
    return [
      {
        method: 'POST',
        path,
        headers: CORS_HEADERS,
        doc: {
          summary:
            version === 'v1'
              ? 'Identify a user (enterprise): attribute values are strings'
              : 'Identify a user, as the Formbricks widget does (enterprise): attribute values may also be numbers or booleans',
          body: identifyBody(values),
          replies: {
            200: data(
              IdentifiedContact,
              "The contact with its merged attributes, and the widget's user state",
            ),
          },
          errors: [400, 403, 404, 503],
        },
        handler: (r) => identify(ctx, activityOf, r, values),
      },
      preflight(path, ['POST']),
    ];
  });
}

/**
 * The identify body as the API document states it. parseIdentifyBody checks it, with the spec's
 * messages; keys are attribute keys (`ATTRIBUTE_KEY_PATTERN`), `email` must look like one, and the
 * keys `userId` and `id` are ignored.
 */
export function identifyBody(values: AttributeValues) {
  const value =
    values === 'string' ? Type.String() : Type.Union([Type.String(), Type.Number(), Type.Boolean()]);
  return Type.Object({
    userId: Type.String({ minLength: 1, maxLength: 255 }),
    attributes: Type.Optional(Type.Record(Type.String(), value)),
  });
}

async function identify(
  ctx: ClientContext,
  activityOf: ActivityReader,
  request: RouteRequest,
  values: AttributeValues,
) {
  requireStorableRequest(request);
  const environmentId = requireId('environmentId', request.params.environmentId);
  const input = parseIdentifyBody(parseJsonBody(request.body), values);
  const environment = await requireEnvironment(ctx, environmentId);
  requireEnterpriseForUserId(environment, input.userId);
  // The history is read from the store, with the displays and responses THIS edge acknowledged
  // lately added (still in Kafka, or not yet applied by their processors). Those other edges
  // acknowledged are eventually consistent: they appear once stored (see recent-activity.ts), as do
  // app surveys created since the read. The widget reads the state again when it expires. Read
  // beside the write: if the write fails the client retries, and an identify sent twice merges the
  // same attributes twice, which changes nothing. A history that cannot be read (PostgreSQL
  // unavailable) is left out, and the state says so by its segments and expiry (see above).
  const contactId = contactIdFor(environmentId, input.userId);
  // A contact the store does not hold has no stored history (displays, responses and memberships
  // name stored contacts): the history is read only for one it holds, which spares a new user's
  // identify a statement (half of what it asks of PostgreSQL).
  const existing = unlessUnavailable(ctx.contacts.get(contactId));
  const [contact, stored, segments] = await Promise.all([
    publishIdentify(ctx, environmentId, input, contactId, existing),
    existing.then((found) =>
      found?.value
        ? unlessUnavailable(activityOf(environmentId, contactId))
        : found && { value: emptyActivity() },
    ),
    unlessUnavailable(ctx.segments.get(environmentId)),
  ]);
  const recent = ctx.recent.of(contactId);
  const now = new Date();
  if (!stored || !segments?.value) {
    const state = buildUserState(
      contact,
      withRecentWrites(WITHOUT_HISTORY, recent),
      [],
      now,
      USER_STATE_WITHOUT_HISTORY_TTL_MS,
    );
    return { status: 200, body: { data: Object.assign({}, contact, { state }) } };
  }
  const activity = withRecentWrites(stored.value, recent);
  // The contact's segments (docs/segments.md): stored membership while it holds for the merged
  // attributes (this identify changed none), else evaluated for them; device- and time-dependent
  // segments always now, with this request's device.
  const segmentIds = segmentIdsOf({
    env: segments.value,
    attributes: contact.attributes,
    stored: stored.value.membership
      ? { digest: stored.value.membership.digest, segmentIds: new Set(stored.value.membership.segmentIds) }
      : undefined,
    device: deviceTypeOf(request.headers['user-agent']),
    // Read only by the segments evaluated at each request: none, nothing to convert.
    history:
      segments.value.requestDependent.size === 0
        ? undefined
        : {
            displays: activity.displays.map((d) => ({
              surveyId: d.surveyId,
              createdAt: new Date(d.createdAt),
            })),
            responses: activity.responses.map((r) => ({ ...r, createdAt: new Date(r.createdAt) })),
          },
    now,
  });
  const state = buildUserState(contact, activity, segmentIds, now);
  return { status: 200, body: { data: Object.assign({}, contact, { state }) } };
}

/** Nothing shown or answered, and no segment: what a state without the store knows. */
const WITHOUT_HISTORY: ContactActivity = emptyActivity();

/** Writes the identify to Kafka and returns the contact as it will be once applied. */
export async function publishIdentify(
  ctx: ClientContext,
  environmentId: string,
  input: IdentifyInput,
  contactId = contactIdFor(environmentId, input.userId),
  existingRead = unlessUnavailable(ctx.contacts.get(contactId)),
): Promise<ContactRecord> {
  const event: ContactIdentified = {
    type: 'contact.identified',
    ...envelope(environmentId),
    contactId,
    userId: input.userId,
    attributes: input.attributes,
    ...(Object.keys(input.attributeTypes).length > 0 ? { attributeTypes: input.attributeTypes } : {}),
  };
  // The stored contact, whose attributes the answer merges the sent ones into. While the store is
  // unavailable and the edge does not hold it, the answer has the sent attributes alone (the
  // processor still merges them into the stored ones), and the edge keeps it provisionally: this
  // edge's writes naming the contact are accepted through the outage, and the stored record is
  // read again as soon as the store answers.
  // Read beside the write (an identify's latency is one of them, not their sum): a contact the
  // processor updated meanwhile merges the same attributes again, which changes nothing.
  const [existing] = await Promise.all([existingRead, ctx.outputs.contacts.publish(event)]);
  const contact: ContactRecord = {
    id: contactId,
    createdAt: existing?.value?.createdAt ?? event.occurredAt,
    updatedAt: event.occurredAt,
    environmentId,
    userId: input.userId,
    attributes: mergeAttributes(existing?.value?.attributes, input.attributes, input.userId),
  };
  ctx.contacts.set(contactId, contact, { provisional: existing === undefined });
  // Acknowledged: a response created next, at any edge, carries these attributes (responses.ts).
  // They are what this edge knows of the contact: an identify at another edge that the processor
  // has not applied yet is not among them (the response's snapshot still gets it from the store
  // when the contact processor applied it before the response). Reading the other edges' view in
  // Redis first cost a sixth of the identifies per second.
  // Answered only once the other edges can read them: a response sent at once to another edge
  // would otherwise miss them while that edge's Redis read overtook this edge's write (seen in a
  // full test run on a busy machine).
  await ctx.identified.setShared(contactId, { attributes: contact.attributes });
  return contact;
}
