// Which files are tests, and of which tier: `*.test.ts` is a test, `*.integration.test.ts` one that
// needs real Kafka, PostgreSQL or Redis (conventions.md, "Tests").
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('..', import.meta.url));

/** Every `*.test.ts` under `dir` (relative to the root), as paths relative to the root. */
export function testFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir)).flatMap((name) => {
    const relative = path.join(dir, name);
    if (statSync(path.join(root, relative)).isDirectory()) return testFiles(relative);
    return name.endsWith('.test.ts') ? [relative] : [];
  });
}

export const isIntegrationTest = (file: string) => file.endsWith('.integration.test.ts');

/** The files that run the tests of src/ together, one process per tier (test/suites/together.ts). */
export const UNIT_SUITE = 'test/suites/unit.ts';
export const INTEGRATION_SUITE = 'test/suites/integration.ts';

/**
 * Integration tests that need a process of their own: MikroORM loaded first, as bin/chorus.js
 * loads it.
 */
export const RUNS_ALONE = ['src/store/transient-contexts.integration.test.ts'];
