import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestWorld } from '../../test/helpers/env.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { lockContacts, lockDisplays } from './locks.ts';
import { migrate, openStore, query, type EntityManager, type Orm } from './orm.ts';

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}_${i}`);

/** Runs `work` in a transaction that stays open until the returned `release` is called. */
function holding(orm: Orm, work: (tx: EntityManager) => Promise<void>) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const held = new Promise<void>((resolve) => (locked = resolve));
  const done = orm.em.fork().transactional(async (tx) => {
    await work(tx);
    locked();
    await released;
  });
  return { held, release, done };
}

async function waitingLocks(orm: Orm): Promise<number> {
  const [row] = await query<{ n: string }>(
    orm.em.fork(),
    "select count(*) as n from pg_locks where locktype = 'advisory' and not granted",
    [],
  );
  return Number(row!.n);
}

test('batches of a backlog lock thousands of contacts and displays at once without filling the lock table', async () => {
  const world = await createTestWorld('locks_many');
  const orm = await openStore(world.databaseUrl);
  try {
    await migrate(orm);
    // 4 × 20,000 names at once: one lock each would be 80,000 (PostgreSQL's table holds far fewer
    // with its defaults, and answered "out of shared memory" from 15,000 on).
    await Promise.all(
      [0, 1, 2, 3].map((n) =>
        orm.em.fork().transactional(async (tx) => {
          await lockContacts(tx, ids(`ctc_${n}`, 10_000));
          await lockDisplays(tx, ids(`dsp_${n}`, 10_000));
        }),
      ),
    );
  } finally {
    await orm.close();
    await world.cleanup();
  }
});

test('a contact locked by a big batch or by a small one makes another writer of that contact wait', async () => {
  const world = await createTestWorld('locks_levels');
  const orm = await openStore(world.databaseUrl);
  try {
    await migrate(orm);
    for (const size of [1_000, 3]) {
      const batch = ids(`ctc_${size}`, size);
      const holder = holding(orm, (tx) => lockContacts(tx, batch));
      await holder.held;
      // A deletion of one of them (a single name) waits, and so does a batch naming it.
      let deleted = false;
      const deletion = orm.em.fork().transactional(async (tx) => {
        await lockContacts(tx, [batch[1]!]);
        deleted = true;
      });
      await waitFor(async () => (await waitingLocks(orm)) > 0 || undefined, {
        what: 'the deletion to wait for the lock',
        timeoutMs: 10_000,
      });
      assert.equal(deleted, false);
      // Other contacts are not held up by a small batch.
      if (size === 3) {
        await orm.em.fork().transactional((tx) => lockContacts(tx, ['ctc_elsewhere']));
      }
      holder.release();
      await holder.done;
      await deletion;
      assert.equal(deleted, true);
    }
  } finally {
    await orm.close();
    await world.cleanup();
  }
});
