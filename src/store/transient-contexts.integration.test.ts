// MikroORM's contexts are off between transactions (transient-contexts.ts), and transactions that
// overlap still each see their own context until they end.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestWorld, type TestWorld } from '../../test/helpers/env.ts';
import { createLogger } from '../logger.ts';
import type { EntityManager, Orm } from './orm.ts';

// Loaded on its own first, as bin/chorus.js loads it (a static import's modules load before it runs).
const { contextsOn, transient } = await import('./transient-contexts.ts');
const { openStore } = await import('./orm.ts');
const { prepareStore } = await import('./prepare.ts');
const { createEnvironment } = await import('./environments.ts');
const { TransactionContext } = await import('@mikro-orm/core');
/** Node's own flag of the one storage MikroORM shows (async_hooks' hooks are on while it is). */
const transactionStorageEnabled = () =>
  (TransactionContext as unknown as { storage: { enabled: boolean } }).storage.enabled;

const ASYNC_CONTEXT_FRAME = Number(process.versions.node.split('.')[0]) >= 24;
/** The transaction a query of `em` runs in (PostgreSQL's id of it). */
const txid = async (em: EntityManager) =>
  String((await em.execute<{ id: string }[]>('select txid_current() as id'))[0]!.id);

describe("MikroORM's contexts, on only while a transaction runs", () => {
  let world: TestWorld;
  let orm: Orm;
  before(async () => {
    world = await createTestWorld('transient_contexts');
    orm = await openStore(world.databaseUrl);
    await prepareStore(orm, createLogger('fatal'), { demo: false });
  });
  after(async () => {
    await orm?.close();
    await world?.cleanup();
  });

  test(
    'are off once a transaction with a flush ended, and once one failed',
    { skip: ASYNC_CONTEXT_FRAME && 'Node 24 keeps contexts without async_hooks' }, // skipped only on Node 24, where nothing is switched
    async () => {
      assert.equal(transient, true, 'MikroORM was loaded with transient contexts');
      await createEnvironment(orm.em.fork(), { plan: 'free', name: 'contexts' });
      assert.equal(contextsOn(), false);
      assert.equal(transactionStorageEnabled(), false);
      await assert.rejects(
        orm.em.fork().transactional(async (tx) => {
          assert.equal(contextsOn(), true, 'on while it runs');
          await txid(tx);
          throw new Error('refused');
        }),
        /refused/,
      );
      assert.equal(contextsOn(), false);
    },
  );

  test('overlapping transactions each keep their own context until they end', async () => {
    let firstEnded!: () => void;
    const whenFirstEnded = new Promise<void>((resolve) => (firstEnded = resolve));
    const second = orm.em.fork().transactional(async (tx) => {
      const own = await txid(tx);
      await whenFirstEnded;
      // The first transaction ended meanwhile: this one's context is still there.
      assert.equal(await txid(orm.em), own, 'a query of the global manager runs in this transaction');
      return own;
    });
    const first = await orm.em.fork().transactional((tx) => txid(tx));
    firstEnded();
    assert.notEqual(await second, first);
  });
});
