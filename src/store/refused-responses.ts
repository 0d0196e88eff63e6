// Responses whose create the processor refused (a single-use id already used, a deleted contact):
// an update of one that arrives later is rejected at once instead of waiting for a create that will
// never be stored (see pipeline/parking.ts). Pruned past RETENTION_EVENT_CLAIMS_DAYS (store/pruning.ts),
// longer than an update can be on its way.
import { query, type EntityManager } from './orm.ts';

/** Records refused creates, in the transaction that refuses them. */
export async function recordRefused(tx: EntityManager, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await query(tx, `insert into refused_responses (id) select unnest(?::varchar[]) on conflict do nothing`, [
    ids,
  ]);
}

/** Those of `ids` whose create was refused. */
export async function refusedAmong(tx: EntityManager, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await query<{ id: string }>(tx, `select id from refused_responses where id = any(?)`, [ids]);
  return new Set(rows.map((r) => r.id));
}
