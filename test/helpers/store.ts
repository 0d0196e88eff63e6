// Reads of the store for assertions: what a user would find in PostgreSQL.
import type { Orm } from '../../src/store/orm.ts';
import { Response } from '../../src/store/entities.ts';

export async function storedResponse(orm: Orm, id: string) {
  return (await orm.em.fork().findOne(Response, { id })) ?? undefined;
}
