// Organizations, environments and API keys: created together for a new tenant; more keys later.
import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ChorusError, invalidInput } from '../errors.ts';
import { newId } from '../ids.ts';
import {
  ApiKey,
  ApiKeyEnvironment,
  Environment,
  Organization,
  type Permission,
  type Plan,
} from './entities.ts';

export interface CreatedEnvironment {
  organizationId: string;
  environmentId: string;
  /** The only time the key is seen in clear text: the store keeps its hash. */
  apiKey: string;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/**
 * Mints a key and stores only its hash, with one grant per environment. The caller has checked the
 * grants: every environment belongs to `organization` and none is named twice.
 */
function addApiKey(
  tx: EntityManager,
  organization: Organization,
  label: string,
  grants: { environment: Environment; permission: Permission }[],
): { apiKeyId: string; apiKey: string } {
  const apiKey = `chk_${randomBytes(32).toString('base64url')}`;
  const key = tx.create(ApiKey, { id: newId('key'), organization, label, keyHash: hashApiKey(apiKey) });
  for (const { environment, permission } of grants) {
    tx.create(ApiKeyEnvironment, { apiKey: key, environment, permission });
  }
  return { apiKeyId: key.id, apiKey };
}

/**
 * A new environment with a `manage` key for it: in a new organization on `plan`, or in the existing
 * organization `organizationId` (whose plan it shares), so that one key can later span both.
 */
export async function createEnvironment(
  em: EntityManager,
  input: { name: string } & ({ plan: Plan } | { organizationId: string }),
): Promise<CreatedEnvironment> {
  return em.transactional(async (tx) => {
    const organization =
      'plan' in input
        ? tx.create(Organization, { id: newId('org'), name: input.name, plan: input.plan })
        : await tx.findOne(Organization, { id: input.organizationId });
    if (!organization) {
      const id = 'organizationId' in input ? input.organizationId : '';
      throw new ChorusError('not_found', `Organization not found: ${id}`, {
        resource_id: id,
        resource_type: 'organization',
      });
    }
    const environment = tx.create(Environment, { id: newId('env'), organization, name: input.name });
    const { apiKey } = addApiKey(tx, organization, `${input.name} key`, [
      { environment, permission: 'manage' },
    ]);
    await tx.flush();
    return { organizationId: organization.id, environmentId: environment.id, apiKey };
  });
}

export interface ApiKeyGrantInput {
  environmentId: string;
  permission: Permission;
}

export interface CreatedApiKey {
  apiKeyId: string;
  organizationId: string;
  /** The only time the key is seen in clear text: the store keeps its hash. */
  apiKey: string;
}

/**
 * A new API key granting each listed environment its permission. A key belongs to one organization
 * (compat notes), so all environments must exist and share one; otherwise nothing is stored.
 */
export async function createApiKey(
  em: EntityManager,
  input: { label: string; grants: readonly ApiKeyGrantInput[] },
): Promise<CreatedApiKey> {
  const ids = input.grants.map((g) => g.environmentId);
  if (ids.length === 0)
    throw invalidInput({ grants: 'at least one environment' }, 'A key needs an environment');
  const repeated = ids.filter((id, i) => ids.indexOf(id) !== i);
  if (repeated.length > 0) {
    throw invalidInput(
      { environmentId: repeated },
      `Environment named twice: ${[...new Set(repeated)].join(', ')}`,
    );
  }
  return em.transactional(async (tx) => {
    const environments = await tx.find(Environment, { id: { $in: ids } });
    const byId = new Map(environments.map((e) => [e.id, e]));
    const unknown = ids.filter((id) => !byId.has(id));
    if (unknown.length > 0) {
      throw new ChorusError('not_found', `Environment not found: ${unknown.join(', ')}`, {
        resource_id: unknown.join(','),
        resource_type: 'environment',
      });
    }
    const organizationIds = [...new Set(environments.map((e) => e.organization.id))];
    if (organizationIds.length !== 1) {
      const owners = environments.map((e) => `${e.id} of ${e.organization.id}`).join(', ');
      throw invalidInput(
        { environmentId: ids },
        `The environments belong to different organizations (${owners}); a key belongs to one organization`,
      );
    }
    const organization = environments[0]!.organization;
    const { apiKeyId, apiKey } = addApiKey(
      tx,
      organization,
      input.label,
      input.grants.map((g) => ({ environment: byId.get(g.environmentId)!, permission: g.permission })),
    );
    await tx.flush();
    return { apiKeyId, organizationId: organization.id, apiKey };
  });
}

export interface EnvironmentInfo {
  id: string;
  organizationId: string;
  plan: Plan;
}

export async function findEnvironment(em: EntityManager, id: string): Promise<EnvironmentInfo | undefined> {
  const environment = await em.findOne(Environment, { id }, { populate: ['organization'] });
  if (!environment) return undefined;
  return {
    id: environment.id,
    organizationId: environment.organization.id,
    plan: environment.organization.plan,
  };
}

/** What an API key may do, per environment. */
export interface ApiKeyGrant {
  keyId: string;
  organizationId: string;
  environments: ReadonlyMap<string, Permission>;
}

export async function findApiKeyGrant(em: EntityManager, keyHash: string): Promise<ApiKeyGrant | undefined> {
  const fork = em.fork();
  const key = await fork.findOne(ApiKey, { keyHash });
  if (!key) return undefined;
  const grants = await fork.find(ApiKeyEnvironment, { apiKey: key.id });
  return {
    keyId: key.id,
    organizationId: key.organization.id,
    environments: new Map(grants.map((g) => [g.environment.id, g.permission])),
  };
}
