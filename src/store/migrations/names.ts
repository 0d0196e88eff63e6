// The checked-in migrations' names, in the order they run: read without loading the migrations
// themselves (and MikroORM's migrator with them), to see at a process's start that a store has
// them all (orm.ts). A new migration is named here and its class added to index.ts.
export const MIGRATION_NAMES = [
  'Migration20261122000000_foundation',
  'Migration20261122010000_client_api',
  'Migration20261122020000_management',
  'Migration20261122030000_integrations',
  'Migration20261122040000_delivery_trace',
  'Migration20261123000000_attribute_key_description',
  'Migration20261123010000_record_counts',
  'Migration20261123020000_oauth_attempts',
  'Migration20261124000000_quota_members_per_survey',
  'Migration20261124010000_delivery_claimed_at',
  'Migration20261125000000_widget_state',
  'Migration20261126000000_public_facts',
  'Migration20261126010000_order_by_clock',
  'Migration20261127000000_webhooks',
  'Migration20261127010000_refused_responses',
  'Migration20261128000000_segments',
  'Migration20261129000000_pruning',
  'Migration20261130000000_summary_counts',
  'Migration20261201000000_summary_recounts',
  'Migration20261202000000_partial_response_indexes',
  'Migration20261206000000_contact_emails',
  'Migration20261206010000_log_positions',
  'Migration20261206020000_store_incarnation',
  'Migration20261206030000_store_changes',
  'Migration20261206040000_log_replays',
  'Migration20261207000000_contact_activity',
] as const;

export type MigrationName = (typeof MIGRATION_NAMES)[number];
