// `npm run bench:profile`: where a Chorus process spends its CPU under the bench's load. Chorus runs
// (`chorus start --role BENCH_ROLE`, from dist/) under `node --cpu-prof`, inherited by its child
// processes, is loaded as `npm run bench` loads it, and stopped; each process's profile is written
// to bench/results/profiles/ (open it in Chrome DevTools) and summarised here: self time by
// function and by module.
//
// Settings: BENCH_ROLE (edge or all); BENCH_DURATION_S (15), BENCH_CONNECTIONS (50),
// BENCH_LOG_LEVEL (warn); BENCH_RATE (unset): a fixed rate from the paced generator instead.
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import Type from 'typebox';
import { createLogger } from '../src/logger.ts';
import { freePort } from '../test/helpers/local-kafka.ts';
import { runLoad, type LoadOptions } from './load.ts';
import { runPacedLoad } from './paced-load.ts';
import { runSessionLoad } from './session-load.ts';
import { runWrk } from './wrk.ts';
import { startChorusProcess } from './processes.ts';
import { loadSettings, LogLevel } from './settings.ts';
import { prepareResponseBench } from './world.ts';

const PROFILES = fileURLToPath(new URL('./results/profiles/', import.meta.url));
const TOP = 25;

const Settings = Type.Object({
  BENCH_ROLE: Type.Union([Type.Literal('edge'), Type.Literal('all')], { default: 'edge' }),
  BENCH_DURATION_S: Type.Integer({ default: 15, minimum: 1 }),
  BENCH_CONNECTIONS: Type.Integer({ default: 50, minimum: 1 }),
  BENCH_LOG_LEVEL: LogLevel,
  /**
   * What is sent: response creates, identifies of a new user each time (loaded by wrk), or visitors'
   * whole sessions (session-load.ts, BENCH_CONNECTIONS visitors at once; BENCH_RATE does not apply),
   * or nothing for BENCH_DURATION_S (`idle`: what Chorus costs with no traffic).
   */
  BENCH_REQUEST: Type.Union(
    [Type.Literal('responses'), Type.Literal('identify'), Type.Literal('sessions'), Type.Literal('idle')],
    { default: 'responses' },
  ),
  /** Requests/s from the paced (open-loop) generator instead of wrk's (or autocannon's) as-fast-as-answered. */
  BENCH_RATE: Type.Optional(Type.Number({ minimum: 1 })),
});

const settings = loadSettings(Settings);
const logger = createLogger(settings.BENCH_LOG_LEVEL, process.stderr);
const bench = await prepareResponseBench(logger);
try {
  await rm(PROFILES, { recursive: true, force: true });
  await mkdir(PROFILES, { recursive: true });
  const port = await freePort();
  const chorus = startChorusProcess(settings.BENCH_ROLE, bench.world.env, port, [
    '--cpu-prof',
    `--cpu-prof-dir=${PROFILES}`,
  ]);
  try {
    await chorus.ready(120_000);
    if (settings.BENCH_REQUEST === 'idle') {
      await new Promise((resolve) => setTimeout(resolve, settings.BENCH_DURATION_S * 1000));
      console.log(`${settings.BENCH_ROLE}: idle for ${settings.BENCH_DURATION_S} s`);
    } else if (settings.BENCH_REQUEST === 'sessions') {
      const sessions = await runSessionLoad({
        origin: `http://127.0.0.1:${port}`,
        environmentId: bench.environmentId,
        surveyId: bench.surveyId,
        connections: settings.BENCH_CONNECTIONS,
        durationS: settings.BENCH_DURATION_S,
        users: 5_000,
      });
      console.log(
        `${settings.BENCH_ROLE}: ${Math.round(sessions.sessionsPerSecond)} sessions/s, p99 ${Math.round(sessions.sessionP99Ms)} ms, ` +
          `${sessions.failedSessions} failed`,
      );
    } else {
      const identify = settings.BENCH_REQUEST === 'identify';
      const load = {
        url: `http://127.0.0.1:${port}${identify ? bench.identify.path : bench.path}`,
        body: identify ? bench.identify.body : bench.body,
        connections: settings.BENCH_CONNECTIONS,
      };
      const result = await loadOf({ ...load, durationS: settings.BENCH_DURATION_S }, identify);
      console.log(
        `${settings.BENCH_ROLE}: ${Math.round(result.requestsPerSecond)} req/s, p99 ${result.latencyP99Ms} ms, ` +
          `${result.non2xx} non-2xx, ${result.errors} errors`,
      );
    }
  } finally {
    await chorus.stop();
  }
  for (const file of (await readdir(PROFILES)).filter((f) => f.endsWith('.cpuprofile'))) {
    console.log(`\n${file}\n${summarise(JSON.parse(await readFile(PROFILES + file, 'utf8')) as Profile)}`);
  }
} catch (error) {
  logger.fatal({ err: error }, 'profile failed');
  process.exitCode = 1;
} finally {
  await bench.stop();
}
process.exit(process.exitCode ?? 0);

/**
 * Paced at BENCH_RATE, or as fast as answered: by wrk when it is installed (autocannon, JavaScript
 * on the same two cores, held the edge to about 5,900 requests a second where wrk reached 9,400).
 */
async function loadOf(load: LoadOptions & { body: string }, identify: boolean) {
  if (settings.BENCH_RATE !== undefined) return runPacedLoad({ ...load, rate: settings.BENCH_RATE });
  const wrk = await runWrk(load);
  if (wrk) return wrk;
  if (identify) throw new Error('identifies are sent by wrk (a new user id in each): install it');
  return runLoad({ ...load, durationS: 2 }).then(() => runLoad(load));
}

/** The parts of V8's .cpuprofile format read here. */
interface Profile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
}

function summarise(profile: Profile): string {
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const byFunction = new Map<string, number>();
  const byModule = new Map<string, number>();
  for (const id of profile.samples) {
    const frame = frames.get(id)!;
    const where = moduleOf(frame.url);
    const name = `${frame.functionName || '(anonymous)'} ${where}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + 1);
    byModule.set(where || frame.functionName, (byModule.get(where || frame.functionName) ?? 0) + 1);
  }
  const total = profile.samples.length;
  const top = (counts: Map<string, number>) =>
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP)
      .map(([name, n]) => `  ${((100 * n) / total).toFixed(1).padStart(5)}%  ${name}`)
      .join('\n');
  return `self time by module:\n${top(byModule)}\nself time by function:\n${top(byFunction)}`;
}

/** A package name, a file of Chorus, `node:…` for Node's own modules, or '' for V8 and natives. */
function moduleOf(url: string): string {
  if (!url) return '';
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inPackage) return inPackage[1]!;
  const inChorus = /\/(dist|src)\/(.+)$/.exec(url);
  if (inChorus) return inChorus[2]!;
  return url.startsWith('node:') ? url : url.replace(/^.*\//, '');
}
