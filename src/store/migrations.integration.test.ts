import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestWorld } from '../../test/helpers/env.ts';
import { openStore } from './orm.ts';
import { prepareStore } from './prepare.ts';
import { createLogger } from '../logger.ts';

test('the checked-in migrations create exactly the schema the entities describe', async () => {
  const world = await createTestWorld('migrations');
  const orm = await openStore(world.databaseUrl);
  try {
    await prepareStore(orm, createLogger('fatal'), { demo: false });
    const drift = await orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false });
    assert.equal(drift.trim(), '', `entities and migrations differ; generate a migration for:\n${drift}`);
  } finally {
    await orm.close();
    await world.cleanup();
  }
});

test('preparing a store twice applies nothing the second time and creates the demo environment once', async () => {
  const world = await createTestWorld('prepare');
  const orm = await openStore(world.databaseUrl);
  const logger = createLogger('fatal');
  try {
    const [first, second] = await Promise.all([prepareStore(orm, logger), prepareStore(orm, logger)]);
    assert.equal([first, second].filter(Boolean).length, 1, 'exactly one demo environment');
    assert.equal(await prepareStore(orm, logger), undefined);
  } finally {
    await orm.close();
    await world.cleanup();
  }
});
