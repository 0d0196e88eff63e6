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
 * End-to-end files that run together in one process (test/suites/e2e.ts): each starts Chorus in
 * the test's process, only through the test helpers (startTestChorus), changes nothing of the process
 * (its environment, its signal handlers, mocks), and spawns nothing. Each saves the 3 to 5 CPU-s
 * that a process of its own spends starting (node, tsx, Chorus' modules).
 */
export const E2E_SUITE = 'test/suites/e2e.ts';
export const E2E_TOGETHER = [
  'client-contacts',
  'client-quotas-and-reads',
  'client-rules',
  'event-size',
  'identify-then-respond',
  'integrations-oauth',
  'integrations-slack-limits',
  'management-contacts',
  'management-isolation',
  'management-surveys',
  'management-v2',
  'metrics',
  'public-events',
  'responses',
  'segments',
  'store-refused-values',
  'synthetic-widget',
  'widget-environment',
  'widget-uploads',
  'widget-user-storage-assets',
].map((name) => `test/e2e/${name}.test.ts`);

/**
 * Integration tests that need a process of their own: MikroORM loaded first, as bin/chorus.js
 * loads it.
 */
export const RUNS_ALONE = ['src/store/transient-contexts.integration.test.ts'];
