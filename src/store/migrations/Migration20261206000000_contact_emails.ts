import { Migration } from '@mikro-orm/migrations';

/** Contacts by email, per environment: Formbricks' v2 bulk upload matches contacts by their email. */
export class Migration20261206000000_contact_emails extends Migration {
  override up(): void {
    this.addSql(
      `create index "contacts_email_index" on "contacts" ("environment_id", ("attributes" ->> 'email'));`,
    );
  }

  override down(): void {
    this.addSql(`drop index if exists "contacts_email_index";`);
  }
}
