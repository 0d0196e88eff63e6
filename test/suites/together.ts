// Test files run together in one process (test/suites/unit.ts, integration.ts): each loads in a
// fraction of a second what a process of its own spends a second or two starting (node, tsx, the
// modules it imports). The files share nothing but the process: each imports what it tests and
// makes its own database, topics and groups.
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { root } from '../test-files.ts';

/**
 * A suite named `name` of every test of `files`. They are loaded inside it, so that all are
 * registered before any runs, and the suite ends only once every one of them has (`exitWhenDone`
 * exits after that end).
 */
export function together(
  name: string,
  files: readonly string[],
  { exitWhenDone = false }: { exitWhenDone?: boolean } = {},
): void {
  describe(name, async () => {
    // What a client library left behind (a reconnect timer) would keep the process up to the
    // runner's timeout: once every test is done and reported, it exits.
    if (exitWhenDone) after(() => void setTimeout(() => process.exit(), 5_000).unref());
    for (const file of files) {
      // A file that cannot load fails as a test of its own, and the others still run.
      await import(pathToFileURL(path.join(root, file)).href).catch((error: unknown) =>
        test(`${file} loads`, () => {
          throw error;
        }),
      );
    }
  });
}
