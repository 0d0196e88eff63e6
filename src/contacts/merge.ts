// The domain of a contact's attributes: how an identify changes them. The contact processor applies
// it, in order per contact; the edge answers an identify with the contact it will become by the
// same rule.

/** Sent attributes overwrite stored ones with the same key, others are kept; `userId` is the contact's. */
export function mergeAttributes(
  before: Readonly<Record<string, string>> | undefined,
  sent: Readonly<Record<string, string>>,
  userId: string,
): Record<string, string> {
  return Object.assign({}, before, sent, { userId });
}
