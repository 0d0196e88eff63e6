import { Migration } from '@mikro-orm/migrations';

/**
 * Indexes the pruner (store/pruning.ts) finds old rows through: deleted contacts by their deletion
 * time, and deliveries by status and last change (only delivered and failed ones are pruned).
 * `applied_events`, `refused_responses` and `oauth_attempts` have theirs already.
 */
export class Migration20261129000000_pruning extends Migration {
  override up(): void {
    this.addSql(`create index "contact_tombstones_deleted_at_index" on "contact_tombstones" ("deleted_at");`);
    this.addSql(
      `create index "deliveries_status_updated_at_index" on "deliveries" ("status", "updated_at");`,
    );
  }

  override down(): void {
    this.addSql(`drop index if exists "deliveries_status_updated_at_index";`);
    this.addSql(`drop index if exists "contact_tombstones_deleted_at_index";`);
  }
}
