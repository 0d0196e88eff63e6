// Migrations are listed here explicitly (no directory scan), in the order they run.
import type { MigrationObject } from '@mikro-orm/core';
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

export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261122000000_foundation', class: Migration20261122000000_foundation },
  { name: 'Migration20261122010000_client_api', class: Migration20261122010000_client_api },
  { name: 'Migration20261122020000_management', class: Migration20261122020000_management },
  { name: 'Migration20261122030000_integrations', class: Migration20261122030000_integrations },
  { name: 'Migration20261122040000_delivery_trace', class: Migration20261122040000_delivery_trace },
  {
    name: 'Migration20261123000000_attribute_key_description',
    class: Migration20261123000000_attribute_key_description,
  },
  { name: 'Migration20261123010000_record_counts', class: Migration20261123010000_record_counts },
  { name: 'Migration20261123020000_oauth_attempts', class: Migration20261123020000_oauth_attempts },
  {
    name: 'Migration20261124000000_quota_members_per_survey',
    class: Migration20261124000000_quota_members_per_survey,
  },
  { name: 'Migration20261124010000_delivery_claimed_at', class: Migration20261124010000_delivery_claimed_at },
  { name: 'Migration20261125000000_widget_state', class: Migration20261125000000_widget_state },
  { name: 'Migration20261126000000_public_facts', class: Migration20261126000000_public_facts },
  { name: 'Migration20261126010000_order_by_clock', class: Migration20261126010000_order_by_clock },
  { name: 'Migration20261127000000_webhooks', class: Migration20261127000000_webhooks },
  {
    name: 'Migration20261127010000_refused_responses',
    class: Migration20261127010000_refused_responses,
  },
  { name: 'Migration20261128000000_segments', class: Migration20261128000000_segments },
  { name: 'Migration20261129000000_pruning', class: Migration20261129000000_pruning },
  { name: 'Migration20261130000000_summary_counts', class: Migration20261130000000_summary_counts },
  { name: 'Migration20261201000000_summary_recounts', class: Migration20261201000000_summary_recounts },
  {
    name: 'Migration20261202000000_partial_response_indexes',
    class: Migration20261202000000_partial_response_indexes,
  },
  { name: 'Migration20261206000000_contact_emails', class: Migration20261206000000_contact_emails },
  { name: 'Migration20261206010000_log_positions', class: Migration20261206010000_log_positions },
  { name: 'Migration20261206020000_store_incarnation', class: Migration20261206020000_store_incarnation },
  { name: 'Migration20261206030000_store_changes', class: Migration20261206030000_store_changes },
  { name: 'Migration20261206040000_log_replays', class: Migration20261206040000_log_replays },
];
