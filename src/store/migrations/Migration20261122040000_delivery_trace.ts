import { Migration } from '@mikro-orm/migrations';

/** The trace context of the finished response a delivery sends, so the provider call joins its trace. */
export class Migration20261122040000_delivery_trace extends Migration {
  override up(): void {
    this.addSql(`alter table "deliveries" add column "trace_context" jsonb null;`);
  }

  override down(): void {
    this.addSql(`alter table "deliveries" drop column "trace_context";`);
  }
}
