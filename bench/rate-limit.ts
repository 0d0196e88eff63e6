// `node --import tsx bench/rate-limit.ts`: what the shared rate limiter costs, against the local
// Redis (as `npm test` brings it up): one check at a time (latency), then BENCH_CONCURRENCY checks
// in flight at once (throughput, as under load), far below the limits (answered from the edge's
// local budgets) and near one (one Lua round trip per check). Every check counts two limits
// (environment and address), as a client request does; no limit is reached.
//
// Settings: BENCH_CHECKS (20000), BENCH_CONCURRENCY (200).
import { randomBytes } from 'node:crypto';
import Type from 'typebox';
import { loadConfig } from '../src/config.ts';
import { ensureLocalServices } from '../src/local-services.ts';
import { createLogger } from '../src/logger.ts';
import { connected, createRedis, type Redis } from '../src/redis.ts';
import { redisRateLimiter, type Limit } from '../src/edge/rate-limit.ts';
import { loadSettings } from './settings.ts';

const settings = loadSettings(
  Type.Object({
    BENCH_CHECKS: Type.Integer({ default: 20_000, minimum: 100 }),
    BENCH_CONCURRENCY: Type.Integer({ default: 200, minimum: 1 }),
  }),
);
const logger = createLogger('warn', process.stderr);
const config = loadConfig();
const local = await ensureLocalServices(config, logger);
const prefix = `bench:${randomBytes(4).toString('hex')}:`;

async function measure(name: string, redis: Redis, addresses: number, addressLimit: number) {
  await connected(redis);
  const limiter = redisRateLimiter({ redis, keyPrefix: prefix, windowSeconds: 60, timeoutMs: 1000, logger });
  // 1,000 environments and `addresses` client addresses, spread as real traffic spreads them.
  const limits = (n: number): Limit[] => [
    { key: `env:e${n % 1000}`, max: 1e9 },
    { key: `addr:${name}:a${n % addresses}`, max: addressLimit },
  ];
  for (let n = 0; n < 500; n++) await limiter.check(limits(n)); // warm-up (loads the script)

  const sequential = Math.min(5000, settings.BENCH_CHECKS);
  const latencies: number[] = [];
  for (let n = 0; n < sequential; n++) {
    const start = process.hrtime.bigint();
    const decision = await limiter.check(limits(n));
    latencies.push(Number(process.hrtime.bigint() - start) / 1000);
    if (decision.outcome !== 'allowed') throw new Error(`check ${n}: ${decision.outcome}`);
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.floor(q * (latencies.length - 1))]!.toFixed(0);

  let next = 0;
  let unavailable = 0;
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: settings.BENCH_CONCURRENCY }, async () => {
      while (next < settings.BENCH_CHECKS) {
        const decision = await limiter.check(limits(next++));
        if (decision.outcome === 'unavailable') unavailable++;
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  console.log(
    [
      name.padEnd(22),
      `p50 ${at(0.5)} µs, p99 ${at(0.99)} µs one at a time;`,
      `${Math.round(settings.BENCH_CHECKS / seconds)} checks/s with ${settings.BENCH_CONCURRENCY} in flight,`,
      `${((cpu.user + cpu.system) / settings.BENCH_CHECKS).toFixed(1)} µs of edge CPU per check`,
      unavailable > 0 ? `(${unavailable} over the wait: let through)` : '',
    ].join(' '),
  );
  await new Promise((resolve) => setTimeout(resolve, 200)); // the last flush of local counts
  redis.disconnect();
}

try {
  // The edge's client: ioredis with auto-pipelining (the commands of one event-loop tick share one
  // write).
  const client = () => createRedis(config.redis.url).duplicate({ enableAutoPipelining: true });
  // 100 busy addresses far below their limits: local budgets, a round trip per key every FLUSH_MS.
  await measure('far below the limits', client(), 100, 1e9);
  // An address limit of 15 per window gives no local budget (nor does an address not seen in the
  // last second): every check is a round trip.
  await measure('near a limit', client(), 100_000, 15);
  console.log(
    `(${settings.BENCH_CHECKS} checks, 2 limits each; Redis ${config.redis.url}; ${new Date().toISOString()})`,
  );
} finally {
  await local.stop();
}
