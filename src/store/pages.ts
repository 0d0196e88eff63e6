// One page of a tenant's records, with the total count for X-Total-Count.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EntityName, FilterQuery, QueryOrderMap } from '@mikro-orm/core';

export interface PageRequest {
  limit: number;
  offset: number;
}

export async function pageOf<T extends object, R>(
  em: EntityManager,
  entity: EntityName<T>,
  where: FilterQuery<T>,
  page: PageRequest,
  toRecord: (row: T) => R,
  orderBy: QueryOrderMap<T> = { id: 'asc' } as QueryOrderMap<T>,
): Promise<{ items: R[]; total: number }> {
  const [rows, total] = await em
    .fork()
    .findAndCount(entity, where, { orderBy, limit: page.limit, offset: page.offset });
  return { items: rows.map(toRecord), total };
}
