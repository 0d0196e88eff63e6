// The private `store-changes` topic, keyed by environment id: every change the management API (and
// anything else) makes to the store's own tables directly, outside the command topics, as the row
// after it (`row.saved`) or its id (`row.deleted`). Written by triggers in the transaction of the
// change (Migration20261206030000_store_changes), relayed like the public facts. Applied by its own
// group whatever the store holds: a no-op, unless a database restored from a backup lost the change
// (pipeline/store-change-replay.ts).

/** The tables whose changes are kept; of `contacts`, only deletions (the rest comes from `contacts`). */
export const JOURNALED_TABLES = [
  'surveys',
  'segments',
  'webhooks',
  'contact_attribute_keys',
  'action_classes',
  'contacts',
] as const;
export type JournaledTable = (typeof JOURNALED_TABLES)[number];

export interface StoreChange {
  type: 'row.saved' | 'row.deleted';
  version: 1;
  eventId: string;
  occurredAt: string;
  appliedAt: string;
  environmentId: string;
  table: JournaledTable;
  id: string;
  /** The row after the change, as PostgreSQL's to_jsonb gives it (`row.saved`). */
  row?: Record<string, unknown>;
}
