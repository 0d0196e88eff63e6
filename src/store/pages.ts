// One page of a tenant's records, with the total count for X-Total-Count.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EntityName, FilterQuery, QueryOrderMap } from '@mikro-orm/core';

export interface PageRequest {
  limit: number;
  offset: number;
}

/** Tables whose rows per environment are counted by triggers (see the record_counts migration). */
export type CountedTable = 'contacts' | 'surveys' | 'responses' | 'contact_attribute_keys';

/**
 * How the total is found: read from the trigger-kept counts when the list is all of a table's rows
 * in some environments (no count over a tenant's rows per request), or counted with the filter.
 */
export type Total = { counted: CountedTable; environmentIds: readonly string[] } | 'count';

export async function pageOf<T extends object, R>(
  em: EntityManager,
  entity: EntityName<T>,
  where: FilterQuery<T>,
  page: PageRequest,
  toRecord: (row: T) => R,
  {
    total = 'count',
    orderBy = { id: 'asc' } as QueryOrderMap<T>,
  }: { total?: Total; orderBy?: QueryOrderMap<T> } = {},
): Promise<{ items: R[]; total: number }> {
  const fork = em.fork();
  const options = { orderBy, limit: page.limit, offset: page.offset };
  const [rows, count] =
    total === 'count'
      ? await fork.findAndCount(entity, where, options)
      : await Promise.all([
          fork.find(entity, where, options),
          countedRows(em, total.counted, total.environmentIds),
        ]);
  return { items: rows.map(toRecord), total: count };
}

/** The rows of `table` in these environments, from the trigger-kept counts. */
export async function countedRows(em: EntityManager, table: CountedTable, environmentIds: readonly string[]) {
  if (environmentIds.length === 0) return 0;
  const [row] = await em.fork().execute<{ total: string | null }[]>(
    `select sum(count) as total from record_counts
       where kind = ? and environment_id in (${environmentIds.map(() => '?').join(', ')})`,
    [table, ...environmentIds],
  );
  return Number(row?.total ?? 0);
}

/** The time fields Formbricks' v2 lists sort and filter by. */
export type TimeField = 'createdAt' | 'updatedAt';

/** Formbricks' v2 list query (its `ZGetFilter`), over the environments a key may read. */
export interface TimedQuery {
  environmentIds: readonly string[];
  /** `dateField` then or later, then or earlier (instants). */
  from?: string;
  to?: string;
  dateField: TimeField;
  sortBy: TimeField;
  order: 'asc' | 'desc';
  limit: number;
  skip: number;
}

/** One page of an entity's records by a v2 query, `where` narrowing it further, and how many match in all. */
export function timedPage<T extends { id: string }, R>(
  em: EntityManager,
  entity: EntityName<T>,
  q: TimedQuery,
  where: FilterQuery<T>,
  toRecord: (row: T) => R,
): Promise<{ items: R[]; total: number }> {
  const window: Record<string, Date> = {};
  if (q.from) window.$gte = new Date(q.from);
  if (q.to) window.$lte = new Date(q.to);
  const filter = {
    ...(where as object),
    environment: { $in: q.environmentIds },
    ...(q.from || q.to ? { [q.dateField]: window } : {}),
  } as unknown as FilterQuery<T>;
  const orderBy = { [q.sortBy]: q.order, id: q.order } as QueryOrderMap<T>;
  return pageOf(em, entity, filter, { limit: q.limit, offset: q.skip }, toRecord, { orderBy });
}
