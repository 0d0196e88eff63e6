// Organizations, environments and API keys: created together for a new tenant.
import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
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

export async function createEnvironment(
  em: EntityManager,
  input: { plan: Plan; name: string },
): Promise<CreatedEnvironment> {
  const apiKey = `chk_${randomBytes(32).toString('base64url')}`;
  return em.transactional(async (tx) => {
    const organization = tx.create(Organization, { id: newId('org'), name: input.name, plan: input.plan });
    const environment = tx.create(Environment, { id: newId('env'), organization, name: input.name });
    const key = tx.create(ApiKey, {
      id: newId('key'),
      organization,
      label: `${input.name} key`,
      keyHash: hashApiKey(apiKey),
    });
    tx.create(ApiKeyEnvironment, { apiKey: key, environment, permission: 'manage' });
    await tx.flush();
    return { organizationId: organization.id, environmentId: environment.id, apiKey };
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
