import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { PAGE, configurationPage } from '../scripts/config-docs.ts';

test('docs/configuration.md is what the catalogue of variables in src/config.ts generates', async () => {
  const expected = await configurationPage();
  const written = await readFile(PAGE, 'utf8').catch(() => '');
  if (written === expected) return;
  const a = written.split('\n');
  const b = expected.split('\n');
  let line = 0;
  while (a[line] === b[line]) line += 1;
  assert.fail(
    `docs/configuration.md is stale: run \`npm run docs:config\`.\n` +
      `First difference at line ${line + 1}:\n  on disk:   ${a[line] ?? '(missing)'}\n  generated: ${b[line] ?? '(missing)'}`,
  );
});
