import { Migration } from '@mikro-orm/migrations';

/**
 * When a delivery's send was claimed, kept apart from `updated_at`, which a recovery renews as its
 * lease: a recovery that died or failed transiently left the row `sending` with a later
 * `updated_at`, and the next one looked for the message only from then on, missed it and sent it
 * again. Recovery now searches from `claimed_at`.
 *
 * Rows `sending` now may have had their lease renewed already, so their claim time is unknown: it
 * is after their creation, so `created_at` gives a window that surely holds their send (wider is
 * only slower, as the provider's copy is recognised by the delivery id). Other rows get theirs at
 * their next claim.
 */
export class Migration20261124010000_delivery_claimed_at extends Migration {
  override up(): void {
    this.addSql(`alter table "deliveries" add column "claimed_at" timestamptz null;`);
    this.addSql(`update "deliveries" set "claimed_at" = "created_at" where "status" = 'sending';`);
  }

  override down(): void {
    this.addSql(`alter table "deliveries" drop column if exists "claimed_at";`);
  }
}
