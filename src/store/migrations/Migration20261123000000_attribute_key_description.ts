import { Migration } from '@mikro-orm/migrations';

/** Attribute key descriptions take up to 1,000 characters, as the management API accepts. */
export class Migration20261123000000_attribute_key_description extends Migration {
  override up(): void {
    this.addSql(`alter table "contact_attribute_keys" alter column "description" type text;`);
  }

  override down(): void {
    this.addSql(
      `alter table "contact_attribute_keys" alter column "description" type varchar(255) using left("description", 255);`,
    );
  }
}
