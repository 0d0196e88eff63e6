// `chorus contacts import` of a big file, as `npm run bench` measures it: BENCH_IMPORT_CONTACTS
// lines (a userId, an email and three attributes each) written by the command to the bench world's
// `contacts` topic, timed from its start to its exit (every line acknowledged by Kafka), then until
// the contact processor (`chorus start --role processor`) stored them all.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runChorus } from '../test/helpers/process.ts';
import { startChorusProcess } from './processes.ts';
import { freePort } from '../test/helpers/local-kafka.ts';
import type { ResponseBenchWorld } from './world.ts';
import { loadConfig } from '../src/config.ts';
import { createKafka, ensureTopics, topicsFor } from '../src/kafka/kafka.ts';
import { createLogger } from '../src/logger.ts';

export interface ContactsImportResult {
  contacts: number;
  /** From the command's start to its exit: every line acknowledged. */
  acknowledgedPerSecond: number;
  /** From the command's start until the processor stored the last contact. */
  storedPerSecond: number;
}

export async function measureContactsImport(
  bench: ResponseBenchWorld,
  contacts: number,
): Promise<ContactsImportResult> {
  const dir = await mkdtemp(join(tmpdir(), 'chorus-bench-import-'));
  // The topics, as `chorus start` makes them: the command writes to a Chorus that has run.
  const config = loadConfig(bench.world.env);
  await ensureTopics(
    createKafka(config.kafka, createLogger('warn', process.stderr)),
    topicsFor(config.kafka.topicPrefix),
    config.kafka.partitions,
  );
  const processor = startChorusProcess('processor', bench.world.env, await freePort());
  try {
    const file = join(dir, 'contacts.csv');
    const lines = ['userId,email,plan,company,seats'];
    for (let i = 0; i < contacts; i++)
      lines.push(
        `imported-${i},user${i}@example.com,${i % 3 === 0 ? 'pro' : 'free'},"Company ${i % 997}, Inc",${i % 50}`,
      );
    await writeFile(file, `${lines.join('\n')}\n`);
    const began = performance.now();
    const run = await runChorus(
      ['contacts', 'import', file, '--environment', bench.environmentId],
      bench.world.env,
    );
    const acknowledgedS = (performance.now() - began) / 1000;
    if (run.code !== 0) throw new Error(`chorus contacts import exited ${run.code}: ${run.stderr}`);
    const connection = bench.orm.em.getConnection();
    for (;;) {
      const [row] = await connection.execute<{ n: string }[]>(
        `select count(*) as n from contacts where environment_id = ? and user_id like 'imported-%'`,
        [bench.environmentId],
      );
      if (Number(row!.n) >= contacts) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const storedS = (performance.now() - began) / 1000;
    return { contacts, acknowledgedPerSecond: contacts / acknowledgedS, storedPerSecond: contacts / storedS };
  } finally {
    await processor.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
