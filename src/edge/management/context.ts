import type { ApiKeyGrant } from '../../store/environments.ts';
import type { Orm } from '../../store/orm.ts';
import type { Directory } from '../directory.ts';
import type { ClientContext } from '../client/context.ts';

export interface ManagementContext {
  orm: Orm;
  keys: Directory<ApiKeyGrant>;
  /** The client side's caches and Kafka writer (contacts are created through the same pipeline). */
  client: ClientContext;
  /**
   * The edge's cached widget states, by environment: a write forgets its environment's before it
   * answers (other edges hear of it through PostgreSQL), so the caller's next read sees the change.
   */
  environmentStates?: { delete(environmentId: string): void };
}
