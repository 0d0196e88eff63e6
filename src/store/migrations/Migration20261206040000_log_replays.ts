import { Migration } from '@mikro-orm/migrations';

/** Where a replay after a restore ends, per position (store/log-positions.ts). */
export class Migration20261206040000_log_replays extends Migration {
  override up(): void {
    this.addSql(`alter table "log_positions" add column "replay_until" bigint null;`);
  }

  override down(): void {
    this.addSql(`alter table "log_positions" drop column "replay_until";`);
  }
}
