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
