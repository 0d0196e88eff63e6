#!/usr/bin/env node
// The `chorus` command. It runs the compiled JavaScript in dist/ (`npm run build`, which `npm start`
// and `npm test` run) when that build is newer than every source file; otherwise, as while
// developing, the TypeScript sources through tsx's loader, so that a stale build never runs. The
// container image holds dist/ without the sources: there dist/ is what runs.
import { existsSync, readdirSync, statSync } from 'node:fs';

const source = new URL('../src/', import.meta.url);
const built = statSync(new URL('../dist/.built', import.meta.url), { throwIfNoEntry: false });

/** The newest modification time of the sources below `dir` (tests excluded). */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(new URL(`${entry.name}/`, dir)));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
      newest = Math.max(newest, statSync(new URL(entry.name, dir)).mtimeMs);
  }
  return newest;
}

const fresh = built && (!existsSync(source) || built.mtimeMs >= newestSource(source));
if (!fresh) (await import('tsx/esm/api')).register();
const [dir, ext] = fresh ? ['../dist/', 'js'] : ['../src/', 'ts'];
// Before the CLI: MikroORM's first load, with contexts that are off between transactions. Only a
// module loaded on its own comes first: the CLI's imports are loaded before any of its code runs.
await import(`${dir}store/transient-contexts.${ext}`);
const cli = await import(`${dir}cli.${ext}`);
process.exitCode = await cli.main(process.argv.slice(2));
