// A database restored from a backup is a copy of the past. Its `pending` deliveries were pending at
// the backup's moment, and may have been sent since: sent again blindly, they would post a second
// Slack message or Notion page. The store remembers the database it was last seen in (by its
// object id, which a backup restored into a new database does not keep); seen in another one, it
// turns those deliveries into sends interrupted at their last claim (or creation), which the
// deliverer settles by asking the provider before it sends anything. A point-in-time restore into
// the same database keeps the object id and is not told apart (docs/operations.md says what to do).
import { query, type EntityManager } from './orm.ts';

/**
 * When the store is seen in another database than before (restored from a backup), records the new
 * one and makes its pending deliveries uncertain; answers how many, or undefined when nothing
 * changed. Safe to call from several processes at once: one of them sees the change.
 */
export async function settleRestore(em: EntityManager): Promise<number | undefined> {
  const [row] = await query<{ restored: string; deliveries: string }>(
    em,
    `with moved as (
       update store_incarnation s set database_oid = live.oid, updated_at = now()
       from (select oid from pg_database where datname = current_database()) live
       where s.database_oid <> live.oid
       returning 1
     ), uncertain as (
       update deliveries set status = 'sending',
         claimed_at = coalesce(claimed_at, created_at), updated_at = coalesce(claimed_at, created_at)
       where status = 'pending' and exists (select 1 from moved)
       returning 1
     )
     select (select count(*) from moved) as restored, (select count(*) from uncertain) as deliveries`,
    [],
  );
  return Number(row?.restored) > 0 ? Number(row!.deliveries) : undefined;
}
