// Chorus for a bench script, set up the way `npm test` sets up a test file: local services brought
// up (or found running), a private test world on them (its own database and topics), and Chorus
// in-process with role `all` (edge and processors) in that world.
import { loadConfig } from '../src/config.ts';
import { ensureLocalServices } from '../src/local-services.ts';
import type { Logger } from '../src/logger.ts';
import { startChorus, type Chorus } from '../src/roles/start.ts';
import { createTestWorld, type TestWorld } from '../test/helpers/env.ts';

export interface BenchChorus {
  chorus: Chorus;
  world: TestWorld;
  /** Stops Chorus, drops the world and stops the local services; logs errors instead of throwing. */
  stop(): Promise<void>;
}

export async function startBenchChorus(name: string, logger: Logger): Promise<BenchChorus> {
  const stops: (() => unknown)[] = [];
  // In reverse order of start, each step even when an earlier one failed; draining the list makes a
  // second call do nothing.
  const stop = async () => {
    for (const step of stops.splice(0).reverse()) {
      await Promise.resolve(step()).catch((err: unknown) => logger.warn({ err }, 'error while stopping'));
    }
  };
  try {
    const config = loadConfig();
    const local = await ensureLocalServices(config, logger);
    stops.push(() => local.stop());
    // As test/run.ts hands its test files: the world's database goes on the server just brought up.
    process.env.CHORUS_TEST_DATABASE_URL = local.databaseUrl;
    const world = await createTestWorld(name, {
      KAFKA_BROKERS: config.kafka.brokers.join(','),
      REDIS_URL: config.redis.url,
      // The load comes from one address into one environment: the limiter runs on every request
      // (its cost is part of the figures), with a limit the load cannot reach.
      RATE_LIMIT_CLIENT_PER_ENVIRONMENT: '1000000000',
    });
    stops.push(() => world.cleanup());
    const chorus = await startChorus({ role: 'all', env: world.env, localServices: false, logger });
    stops.push(() => chorus.stop());
    return { chorus, world, stop };
  } catch (error) {
    // The caller gets no handle on a failed start, so what did start is stopped here.
    await stop();
    throw error;
  }
}

/**
 * The frame of a bench script: starts Chorus, runs `body`, logs a failure as fatal (exit code 1),
 * stops everything and exits.
 */
export async function runBench(
  name: string,
  logger: Logger,
  body: (bench: BenchChorus) => Promise<void>,
): Promise<never> {
  let bench: BenchChorus | undefined;
  try {
    bench = await startBenchChorus(name, logger);
    await body(bench);
  } catch (error) {
    logger.fatal({ err: error }, 'bench failed');
    process.exitCode = 1;
  } finally {
    await bench?.stop();
  }
  // Kafka and database clients may keep timers alive for a while after closing: the bench is done.
  process.exit(process.exitCode ?? 0);
}
