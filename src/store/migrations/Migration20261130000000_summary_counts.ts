import { Migration } from '@mikro-orm/migrations';
import type { EntityManager } from '../orm.ts';
import { recountSummaries } from '../summary-counts.ts';

/**
 * The sums behind each survey's summary (store/summary-counts.ts), per span of creation time (`all`,
 * `day`, `quarter`) and counter key. Like `responses`, they outlive a deleted survey. The surveys
 * that have responses or displays already are counted from them.
 */
export class Migration20261130000000_summary_counts extends Migration {
  override async up(): Promise<void> {
    await this.execute(
      `create table "summary_counts" ("survey_id" varchar(255) not null, "span" varchar(16) not null, "start" timestamptz not null, "key" text not null, "n" bigint not null default 0, "total" double precision not null default 0, constraint "summary_counts_pkey" primary key ("survey_id", "span", "start", "key"));`,
    );
    const surveys = await this.execute(
      `select id from surveys s where exists (select 1 from responses r where r.survey_id = s.id)
         or exists (select 1 from displays d where d.survey_id = s.id)`,
    );
    // Not getEntityManager(): its entity manager follows MikroORM's context, and the migrations run
    // inside prepareStore's transaction, whose entity manager would be given this one's transaction.
    const em = this.driver.createEntityManager(false) as EntityManager;
    em.setTransactionContext(this.ctx);
    await recountSummaries(
      em,
      surveys.map((s) => s['id'] as string),
    );
  }

  override down(): void {
    this.addSql(`drop table if exists "summary_counts";`);
  }
}
