// Formbricks' v2 contacts (enterprise, as its Contacts feature): create one (`POST`, 409 when its
// email or user id is taken), or upsert up to 250 (`PUT /bulk`, contacts/bulk-upload.ts). Both go
// through the `contacts` topic as identifies, like the widget's, so the contact processor applies
// them in order with every other change of the contact and keeps segment membership current; the
// answer comes once Kafka has them.
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { DEFAULT_KEYS } from '../../../contacts/attribute-key-rules.ts';
import { planBulkUpload } from '../../../contacts/bulk-upload.ts';
import { isEmail } from '../../../contacts/identify-input.ts';
import { ChorusError, invalidInput } from '../../../errors.ts';
import { attributeKeyTypes, upsertNamedKeys } from '../../../store/attribute-keys.ts';
import { contactsMatching } from '../../../store/contacts.ts';
import { publishIdentify } from '../../client/identify.ts';
import { data } from '../../openapi/route-doc.ts';
import { Id } from '../../openapi/replies.ts';
import type { Route } from '../../router.ts';
import { parseJsonBody, validateBody } from '../../validation.ts';
import { authenticate } from '../auth.ts';
import { forgetEnvironmentCaches, requireContactsFeature, type ManagementContext } from '../context.ts';
import { ENVIRONMENT_FIELDS, namedEnvironment, v2Route as route } from './shared.ts';

const BASE = '/api/v2/management/contacts';
const CONTACTS_REFUSAL = 'Contacts feature is not enabled for this environment';
const MAX_BULK_CONTACTS = 250;

const CreateBody = Compile(
  Type.Object({
    ...ENVIRONMENT_FIELDS,
    attributes: Type.Record(Type.String(), Type.String({ maxLength: 10_000 })),
  }),
);

const BulkBody = Compile(
  Type.Object({
    ...ENVIRONMENT_FIELDS,
    contacts: Type.Array(
      Type.Object({
        attributes: Type.Array(
          Type.Object({
            attributeKey: Type.Object({
              key: Type.String({ minLength: 1, maxLength: 64 }),
              name: Type.String({ maxLength: 255 }),
            }),
            value: Type.String({ maxLength: 10_000 }),
          }),
          { maxItems: 200 },
        ),
      }),
      { maxItems: MAX_BULK_CONTACTS },
    ),
  }),
);

const CreatedContact = Type.Object({
  id: Id,
  createdAt: Type.String({ format: 'date-time' }),
  workspaceId: Id,
  environmentId: Id,
  attributes: Type.Record(Type.String(), Type.String()),
});

const BulkResult = Type.Object({
  status: Type.Literal('success'),
  message: Type.String(),
  meta: Type.Optional(
    Type.Object({
      processed: Type.Integer(),
      skippedContacts: Type.Array(
        Type.Object({
          index: Type.Integer(),
          userId: Type.Optional(Type.String()),
          email: Type.Optional(Type.String()),
          issue: Type.String(),
        }),
      ),
    }),
  ),
});

export function v2ContactRoutes(ctx: ManagementContext): Route[] {
  return [
    route({
      method: 'POST',
      path: BASE,
      doc: {
        summary: 'Create a contact (Formbricks v2, enterprise): 409 when its email or userId is taken',
        description:
          '`attributes` holds `email` (required) and, optionally, `userId` (else the email is the contact’s user id); every other key must exist. Written to the `contacts` topic like an identify; the answer is the contact as it will be stored.',
        auth: 'apiKey',
        body: CreateBody.Type(),
        replies: { 201: data(CreatedContact, 'The contact') },
        errors: [400, 403, 409, 503],
      },
      handler: async (request) => {
        const grant = await authenticate(request, ctx.keys);
        const { attributes, ...named } = validateBody(CreateBody, parseJsonBody(request.body));
        const environmentId = namedEnvironment(grant, named);
        await requireContactsFeature(ctx, environmentId, CONTACTS_REFUSAL);
        const { email, userId: sentUserId, ...others } = attributes;
        if (!email) throw invalidInput({ attributes: 'Email attribute is required' });
        if (!isEmail(email)) throw invalidInput({ attributes: 'Invalid email format' });
        const userId = sentUserId || email;
        if (userId.length > 255)
          throw invalidInput({ 'attributes.userId': 'must be at most 255 characters' });
        const taken = await contactsMatching(ctx.orm.em, environmentId, {
          emails: [email],
          userIds: [userId],
        });
        if (taken.some((c) => c.email === email))
          throw new ChorusError('conflict', 'Conflict', { email: 'contact with this email already exists' });
        if (taken.length > 0)
          throw new ChorusError('conflict', 'Conflict', {
            userId: 'contact with this userId already exists',
          });
        const keys = await attributeKeyTypes(ctx.orm.em, environmentId);
        const missing = Object.keys(others).filter((key) => !keys.has(key) && !DEFAULT_KEYS.has(key));
        if (missing.length > 0)
          throw invalidInput({ attributes: `attribute keys not found: ${missing.join(', ')}` });
        const contact = await publishIdentify(ctx.client, environmentId, {
          userId,
          attributes: { email, ...others },
          attributeTypes: {},
        });
        return {
          status: 201,
          body: {
            data: {
              id: contact.id,
              createdAt: contact.createdAt,
              workspaceId: environmentId,
              environmentId,
              attributes: contact.attributes,
            },
          },
        };
      },
    }),
    route({
      method: 'PUT',
      path: `${BASE}/bulk`,
      doc: {
        summary: `Upsert up to ${MAX_BULK_CONTACTS} contacts by email (Formbricks v2, enterprise); 207 names those skipped`,
        description:
          'Each contact’s `attributes` are `{attributeKey: {key, name}, value}`, `email` required. A contact is the one with its email, else the one with its `userId` (when that one has no other email), else a new one. A contact that cannot be applied (no or a bad email, one repeated in the upload, a key Formbricks would refuse, a value that does not fit a number or date key, a userId that would change) is skipped alone and named in `meta.skippedContacts` with its index and the issue; the others are written to the `contacts` topic before the answer. New keys are created with the name given and the type their values share; existing keys get the name given.',
        auth: 'apiKey',
        body: BulkBody.Type(),
        replies: {
          200: data(BulkResult, 'Every contact written'),
          207: data(BulkResult, 'Some contacts skipped, each named with the issue; the others written'),
        },
        errors: [400, 403, 503],
      },
      handler: async (request) => {
        const grant = await authenticate(request, ctx.keys);
        const { contacts, ...named } = validateBody(BulkBody, parseJsonBody(request.body));
        const environmentId = namedEnvironment(grant, named);
        await requireContactsFeature(ctx, environmentId, CONTACTS_REFUSAL);
        const valuesOf = (key: string) =>
          contacts.flatMap((c) =>
            c.attributes.filter((a) => a.attributeKey.key === key && a.value).map((a) => a.value),
          );
        const [known, keys] = await Promise.all([
          contactsMatching(ctx.orm.em, environmentId, {
            emails: valuesOf('email'),
            userIds: valuesOf('userId'),
          }),
          attributeKeyTypes(ctx.orm.em, environmentId),
        ]);
        const plan = planBulkUpload(contacts, { contacts: known, keyTypes: keys });
        await upsertNamedKeys(ctx.orm.em, environmentId, plan.keys);
        if (plan.keys.some((k) => !keys.has(k.key))) forgetEnvironmentCaches(ctx, environmentId);
        await Promise.all(
          plan.identifies.map(({ input }) => publishIdentify(ctx.client, environmentId, input)),
        );
        if (plan.skipped.length === 0)
          return {
            status: 200,
            body: { data: { status: 'success', message: 'Contacts bulk upload successful' } },
          };
        return {
          status: 207,
          body: {
            data: {
              status: 'success',
              message: 'Contacts bulk upload partially successful. Some contacts were skipped.',
              meta: { processed: plan.identifies.length, skippedContacts: plan.skipped },
            },
          },
        };
      },
    }),
  ];
}
