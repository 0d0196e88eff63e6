// API keys of the management API: `x-api-key` (or `Authorization: Bearer`), looked up by hash.
// A key grants read, write or manage per environment; GET needs read, POST/PUT write, DELETE
// manage. Missing or unknown key → 401; a known key without access → 403 (compat notes).
import { ChorusError, invalidInput } from '../../errors.ts';
import { hashApiKey, type ApiKeyGrant } from '../../store/environments.ts';
import type { Permission } from '../../store/entities.ts';
import type { Directory } from '../directory.ts';
import type { HttpRequest } from '../http/types.ts';
import { requireStorableRequest } from '../safe-json.ts';

const RANK: Record<Permission, number> = { read: 1, write: 2, manage: 3 };

const NEEDED: Record<string, Permission> = { GET: 'read', POST: 'write', PUT: 'write', DELETE: 'manage' };

export function permissionFor(method: string): Permission {
  return NEEDED[method] ?? 'manage';
}

/** The API key a request carries, if any (also what management rate limits count by). */
export function apiKeyOf(request: HttpRequest): string | undefined {
  const bearer = request.headers.authorization?.match(/^Bearer\s+(\S+)$/i)?.[1];
  return request.headers['x-api-key'] || bearer;
}

export async function authenticate(request: HttpRequest, keys: Directory<ApiKeyGrant>): Promise<ApiKeyGrant> {
  const key = apiKeyOf(request);
  const grant = key ? await keys.get(hashApiKey(key)) : undefined;
  if (!grant) {
    throw new ChorusError('not_authenticated', 'Not authenticated', {
      'x-Api-Key': 'Header not provided or API Key invalid',
    });
  }
  // Every management route but the OAuth callback starts here: its path and query are checked once.
  requireStorableRequest(request);
  return grant;
}

export function forbidden(): ChorusError {
  return new ChorusError('forbidden', 'You are not authorized to access this resource');
}

export function can(grant: ApiKeyGrant, environmentId: string, needed: Permission): boolean {
  const granted = grant.environments.get(environmentId);
  return granted !== undefined && RANK[granted] >= RANK[needed];
}

export function requireAccess(grant: ApiKeyGrant, environmentId: string, needed: Permission): void {
  if (!can(grant, environmentId, needed)) throw forbidden();
}

/**
 * The environment a create writes to: the one asked for, or, left out, the key's own when it can
 * write to exactly one (a Formbricks key belongs to one environment). 400 without one, 403 without
 * write access.
 */
export function writableEnvironment(grant: ApiKeyGrant, asked: string | undefined): string {
  const writable = [...grant.environments.keys()].filter((id) => can(grant, id, 'write'));
  const environmentId = asked ?? (writable.length === 1 ? writable[0] : undefined);
  if (environmentId === undefined) throw invalidInput({ environmentId: 'Required' });
  requireAccess(grant, environmentId, 'write');
  return environmentId;
}

/** The environments a list covers: all the key can read, or the one asked for (403 if not allowed). */
export function listedEnvironments(grant: ApiKeyGrant, query: URLSearchParams): string[] {
  const asked = query.get('environmentId');
  if (asked !== null) {
    requireAccess(grant, asked, 'read');
    return [asked];
  }
  return [...grant.environments.keys()].filter((id) => can(grant, id, 'read'));
}
