// Writes docs/configuration.md from the catalogue of environment variables in src/config.ts
// (`npm run docs:config`). src/config-docs.test.ts fails while the page on disk differs from what
// this would write, so the page cannot fall behind the parser.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { VARIABLES, type Variable } from '../src/config.ts';

export const PAGE = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));

const INTRO = `# Configuration

Chorus is configured through environment variables. Every variable is read by
[src/config.ts](../src/config.ts), once, when a process starts. An empty value counts as unset. A
process that finds a problem refuses to start, and lists every problem at once, naming the variable.

This page is generated from the catalogue of variables in \`src/config.ts\` (\`VARIABLES\`): change
the catalogue, then run \`npm run docs:config\`.
`;

const NOTES = `The local Kafka scripts have their own overrides (\`CHORUS_KAFKA_HOME\`, \`CHORUS_KAFKA_PORT\`,
\`CHORUS_KAFKA_CONTROLLER_PORT\`, \`CHORUS_KAFKA_LIBS\`, \`CHORUS_KAFKA_START_TIMEOUT_S\`), described in
[deploy/kafka/README.md](../deploy/kafka/README.md). Two more variables are read only by the tests:
\`CHORUS_TEST_DATABASE_URL\`, set by the test runner, and \`TEST_LOG_LEVEL\`, which defaults to \`fatal\`.
`;

/** The default as a reader should see it: the schema's own, unless the entry says otherwise. */
function shownDefault(variable: Variable): string {
  if (variable.shown !== undefined) return variable.shown;
  const value = (variable.schema as { default?: string | number | boolean }).default;
  if (value === undefined) return 'unset';
  if (value === '') return 'empty';
  return `\`${String(value)}\``;
}

const cell = (markdown: string) => markdown.replaceAll('|', '\\|');

/** One row per variable; neighbours that share default and meaning (a pair of credentials) share a row. */
function rows(): string[] {
  const groups: { names: string[]; shown: string; meaning: string }[] = [];
  for (const [name, variable] of Object.entries(VARIABLES) as [string, Variable][]) {
    const shown = shownDefault(variable);
    const last = groups.at(-1);
    if (last && last.shown === shown && last.meaning === variable.meaning) last.names.push(name);
    else groups.push({ names: [name], shown, meaning: variable.meaning });
  }
  return groups.map(
    (g) => `| ${g.names.map((n) => `\`${n}\``).join(', ')} | ${cell(g.shown)} | ${cell(g.meaning)} |`,
  );
}

/** The page as `npm run docs:config` writes it, formatted as `prettier --check` expects. */
export async function configurationPage(): Promise<string> {
  const table = ['| variable | default | meaning |', '| --- | --- | --- |', ...rows()].join('\n');
  const markdown = `${INTRO}\n${table}\n\n${NOTES}`;
  const options = await prettier.resolveConfig(PAGE);
  return prettier.format(markdown, { ...options, filepath: PAGE });
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await writeFile(PAGE, await configurationPage());
  console.log(`wrote ${path.relative(process.cwd(), PAGE)}`);
}
