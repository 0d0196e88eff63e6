// Formbricks' rules for the attribute keys a management client creates (its v2 API and bulk
// upload): a safe identifier — lowercase letters, digits and `_`, a letter first — that is not one
// of the names it keeps for its defaults. Its own default keys are created by it, not by clients,
// and cannot be changed or deleted through its API.
const SAFE_IDENTIFIER = /^[a-z][a-z0-9_]{0,63}$/;

/** Formbricks keeps these for the safe-identifier names of its defaults (its attribute-key-policy.ts). */
const RESERVED_KEYS = new Set(['user_id', 'first_name', 'last_name']);

/** The keys Formbricks creates with every environment (`type: "default"`). */
export const DEFAULT_KEYS: ReadonlySet<string> = new Set([
  'userId',
  'email',
  'firstName',
  'lastName',
  'language',
]);

/** The default keys whose values identify one contact (`isUnique`). */
export const UNIQUE_KEYS: ReadonlySet<string> = new Set(['userId', 'email']);

/** Why a client may not create this key, or undefined when it may. */
export function newKeyProblem(key: string): string | undefined {
  if (!SAFE_IDENTIFIER.test(key))
    return `Invalid attribute key "${key}": keys must only contain lowercase letters, numbers, and underscores, start with a letter, and have at most 64 characters`;
  if (RESERVED_KEYS.has(key))
    return `Reserved attribute key "${key}": it is reserved for the safe-identifier names of the default attributes`;
  return undefined;
}

/** `job_title` → `Job Title`: the name of a key created without one. */
export function titleCase(key: string): string {
  return key
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}
