import type { ApiKeyGrant } from '../../store/environments.ts';
import type { Orm } from '../../store/orm.ts';
import type { Directory } from '../directory.ts';
import type { ClientContext } from '../client/context.ts';

export interface ManagementContext {
  orm: Orm;
  keys: Directory<ApiKeyGrant>;
  /** The client side's caches and Kafka writer (contacts are created through the same pipeline). */
  client: ClientContext;
}
