// Formbricks' v2 bulk upload of contacts (`PUT /api/v2/management/contacts/bulk`), as Chorus
// applies it: each contact of the upload becomes the identify of one Chorus contact, or is skipped
// alone with the reason, never failing the others (Formbricks refuses a whole upload for most of
// these). Formbricks matches contacts by email; Chorus keys them by user id, so a contact is:
// - the contact that has its email, when there is one (its user id cannot change: an upload naming
//   another is skipped);
// - else the contact with its `userId` attribute, when that contact has no email or this one
//   (one with another email is a conflict, as in Formbricks);
// - else a new contact, keyed by its `userId`, or by its email when it has none.
// New keys follow Formbricks' rules and get the type their values share (number, ISO date, else
// text); a value that does not fit an existing number or date key skips its contact.
import { DEFAULT_KEYS, newKeyProblem } from './attribute-key-rules.ts';
import { isEmail, isIsoDate, type IdentifyInput } from './identify-input.ts';

/** The types an attribute key can have (the store's `ATTRIBUTE_TYPES`). */
type AttributeType = 'text' | 'number' | 'date';

export interface UploadedContact {
  attributes: readonly { attributeKey: { key: string; name: string }; value: string }[];
}

/** What the store holds that an upload is matched against. */
export interface KnownContacts {
  /** The environment's contacts that have an email or user id of the upload. */
  contacts: readonly { userId: string; email: string | null }[];
  /** The environment's attribute keys and their types. */
  keyTypes: ReadonlyMap<string, AttributeType>;
}

export interface SkippedContact {
  index: number;
  userId?: string;
  email?: string;
  issue: string;
}

export interface BulkPlan {
  identifies: { index: number; input: IdentifyInput }[];
  skipped: SkippedContact[];
  /** The keys the applied contacts name: created with this name and type, or renamed (Formbricks does). */
  keys: { key: string; name: string; type: AttributeType }[];
}

/** Keys that are the contact's own, not attributes (as identify ignores them). */
const NOT_ATTRIBUTES = new Set(['userId', 'id']);

export function planBulkUpload(contacts: readonly UploadedContact[], known: KnownContacts): BulkPlan {
  const ownerOfEmail = new Map<string, string>();
  const emailOfUser = new Map<string, string | null>();
  for (const c of known.contacts) {
    if (c.email !== null) ownerOfEmail.set(c.email, c.userId);
    emailOfUser.set(c.userId, c.email);
  }
  const newKeyTypes = typesOfNewKeys(contacts, known.keyTypes);
  const plan: BulkPlan = { identifies: [], skipped: [], keys: [] };
  const keyNames = new Map<string, string>();
  const firstWith = {
    email: new Map<string, number>(),
    userId: new Map<string, number>(),
    contact: new Map<string, number>(),
  };

  contacts.forEach((contact, index) => {
    const values = new Map<string, string>();
    const repeated = new Set<string>();
    for (const { attributeKey, value } of contact.attributes) {
      if (values.has(attributeKey.key)) repeated.add(attributeKey.key);
      values.set(attributeKey.key, value);
    }
    const email = values.get('email') || undefined;
    const userId = values.get('userId') || undefined;
    const skip = (issue: string) =>
      plan.skipped.push({ index, ...(userId ? { userId } : {}), ...(email ? { email } : {}), issue });
    const seenBefore = (kind: keyof typeof firstWith, value: string) => {
      const first = firstWith[kind].get(value);
      if (first === undefined) firstWith[kind].set(value, index);
      return first;
    };

    if (repeated.size > 0) return skip(`Duplicate attribute keys: ${[...repeated].join(', ')}`);
    if (!email) return skip('Email attribute is required');
    if (!isEmail(email)) return skip('Invalid email format');
    if (userId && userId.length > 255) return skip('userId must be at most 255 characters');
    const emailTwice = seenBefore('email', email);
    if (emailTwice !== undefined) return skip(`Duplicate email: the contact at index ${emailTwice} has it`);
    const userTwice = userId === undefined ? undefined : seenBefore('userId', userId);
    if (userTwice !== undefined) return skip(`Duplicate userId: the contact at index ${userTwice} has it`);

    for (const [key, value] of values) {
      if (NOT_ATTRIBUTES.has(key)) continue;
      const type = known.keyTypes.get(key);
      if (type === undefined) {
        const problem = DEFAULT_KEYS.has(key) ? undefined : newKeyProblem(key);
        if (problem) return skip(problem);
      } else if (value !== '' && !fits(value, type)) {
        return skip(
          `Attribute "${key}" is typed as "${type === 'text' ? 'string' : type}" but received an invalid value: ${value}`,
        );
      }
    }

    const owner = ownerOfEmail.get(email);
    if (userId !== undefined && owner !== undefined && owner !== userId)
      return skip(`The contact with this email has userId "${owner}": a contact's userId cannot change`);
    const emailOfUserId = userId === undefined ? undefined : emailOfUser.get(userId);
    if (owner === undefined && emailOfUserId)
      return skip('A contact with this userId and another email already exists');
    const target = userId ?? owner ?? email;
    const sameContact = seenBefore('contact', target);
    if (sameContact !== undefined) return skip(`The contact at index ${sameContact} is the same contact`);

    const attributes: Record<string, string> = {};
    for (const { attributeKey, value } of contact.attributes) {
      if (NOT_ATTRIBUTES.has(attributeKey.key)) continue;
      attributes[attributeKey.key] = value;
      if (!keyNames.has(attributeKey.key)) keyNames.set(attributeKey.key, attributeKey.name);
    }
    plan.identifies.push({ index, input: { userId: target, attributes, attributeTypes: {} } });
  });

  plan.keys = [...keyNames].map(([key, name]) => ({
    key,
    name,
    type: known.keyTypes.get(key) ?? newKeyTypes.get(key) ?? 'text',
  }));
  return plan;
}

/** Whether a value can be held by a key of this type. */
function fits(value: string, type: AttributeType): boolean {
  if (type === 'number') return value.trim() !== '' && Number.isFinite(Number(value));
  if (type === 'date') return isIsoDate(value);
  return true;
}

/** The type each new key's values share: that of its first non-empty value, if every other fits it. */
function typesOfNewKeys(
  contacts: readonly UploadedContact[],
  keyTypes: ReadonlyMap<string, AttributeType>,
): Map<string, AttributeType> {
  const types = new Map<string, AttributeType>();
  for (const contact of contacts) {
    for (const { attributeKey, value } of contact.attributes) {
      const { key } = attributeKey;
      if (keyTypes.has(key) || value === '') continue;
      const type = types.get(key);
      if (type === undefined)
        types.set(key, isIsoDate(value) ? 'date' : fits(value, 'number') ? 'number' : 'text');
      else if (!fits(value, type)) types.set(key, 'text');
    }
  }
  return types;
}
