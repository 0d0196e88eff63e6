// The migrations MikroORM's migrator runs: listed explicitly (no directory scan), in the order of
// names.ts.
import type { MigrationObject } from '@mikro-orm/core';
import { MIGRATION_NAMES, type MigrationName } from './names.ts';
import { Migration20261122000000_foundation } from './Migration20261122000000_foundation.ts';
import { Migration20261122010000_client_api } from './Migration20261122010000_client_api.ts';
import { Migration20261122020000_management } from './Migration20261122020000_management.ts';
import { Migration20261122030000_integrations } from './Migration20261122030000_integrations.ts';
import { Migration20261122040000_delivery_trace } from './Migration20261122040000_delivery_trace.ts';
import { Migration20261123000000_attribute_key_description } from './Migration20261123000000_attribute_key_description.ts';
import { Migration20261123010000_record_counts } from './Migration20261123010000_record_counts.ts';
import { Migration20261123020000_oauth_attempts } from './Migration20261123020000_oauth_attempts.ts';
import { Migration20261124000000_quota_members_per_survey } from './Migration20261124000000_quota_members_per_survey.ts';
import { Migration20261124010000_delivery_claimed_at } from './Migration20261124010000_delivery_claimed_at.ts';
import { Migration20261125000000_widget_state } from './Migration20261125000000_widget_state.ts';
import { Migration20261126000000_public_facts } from './Migration20261126000000_public_facts.ts';
import { Migration20261126010000_order_by_clock } from './Migration20261126010000_order_by_clock.ts';
import { Migration20261127000000_webhooks } from './Migration20261127000000_webhooks.ts';
import { Migration20261127010000_refused_responses } from './Migration20261127010000_refused_responses.ts';
import { Migration20261128000000_segments } from './Migration20261128000000_segments.ts';
import { Migration20261129000000_pruning } from './Migration20261129000000_pruning.ts';
import { Migration20261130000000_summary_counts } from './Migration20261130000000_summary_counts.ts';
import { Migration20261201000000_summary_recounts } from './Migration20261201000000_summary_recounts.ts';
import { Migration20261202000000_partial_response_indexes } from './Migration20261202000000_partial_response_indexes.ts';
import { Migration20261206000000_contact_emails } from './Migration20261206000000_contact_emails.ts';
import { Migration20261206010000_log_positions } from './Migration20261206010000_log_positions.ts';
import { Migration20261206020000_store_incarnation } from './Migration20261206020000_store_incarnation.ts';
import { Migration20261206030000_store_changes } from './Migration20261206030000_store_changes.ts';
import { Migration20261206040000_log_replays } from './Migration20261206040000_log_replays.ts';
import { Migration20261207000000_contact_activity } from './Migration20261207000000_contact_activity.ts';

/** Each checked-in migration's class, under its name (names.ts): the compiler holds the two lists equal. */
const classes = {
  Migration20261122000000_foundation,
  Migration20261122010000_client_api,
  Migration20261122020000_management,
  Migration20261122030000_integrations,
  Migration20261122040000_delivery_trace,
  Migration20261123000000_attribute_key_description,
  Migration20261123010000_record_counts,
  Migration20261123020000_oauth_attempts,
  Migration20261124000000_quota_members_per_survey,
  Migration20261124010000_delivery_claimed_at,
  Migration20261125000000_widget_state,
  Migration20261126000000_public_facts,
  Migration20261126010000_order_by_clock,
  Migration20261127000000_webhooks,
  Migration20261127010000_refused_responses,
  Migration20261128000000_segments,
  Migration20261129000000_pruning,
  Migration20261130000000_summary_counts,
  Migration20261201000000_summary_recounts,
  Migration20261202000000_partial_response_indexes,
  Migration20261206000000_contact_emails,
  Migration20261206010000_log_positions,
  Migration20261206020000_store_incarnation,
  Migration20261206030000_store_changes,
  Migration20261206040000_log_replays,
  Migration20261207000000_contact_activity,
} satisfies Record<MigrationName, MigrationObject['class']>;

export const migrationsList: MigrationObject[] = MIGRATION_NAMES.map((name) => ({
  name,
  class: classes[name],
}));
