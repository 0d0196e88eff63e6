// Writes schemas/: one JSON Schema file per public event type and version, and schemas/index.json,
// from the registry in src/events/public-events.ts (`npm run schemas`). It refuses, writing
// nothing, while the committed files show a problem the registry must solve first: above all a
// change to a version's schema that its readers can't take, which needs the next version instead
// (docs/events-compatibility.md). src/events/public-schemas.test.ts fails while schemas/ differs
// from what this would write, or while such a problem stands.
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { PUBLIC_EVENTS, type PublicEvent } from '../src/events/public-events.ts';
import {
  INDEX_FILE,
  contractProblems,
  schemaDocument,
  schemaFile,
  schemaIndex,
} from '../src/events/public-schemas.ts';

export const SCHEMAS_DIR = fileURLToPath(new URL('../schemas/', import.meta.url));

async function formatted(value: unknown, file: string): Promise<string> {
  const filepath = path.join(SCHEMAS_DIR, file);
  const options = await prettier.resolveConfig(filepath);
  return prettier.format(JSON.stringify(value, null, 2), { ...options, filepath });
}

/** What `npm run schemas` writes: path relative to schemas/ → content, the index included. */
export async function generatedSchemas(
  events: readonly PublicEvent[] = PUBLIC_EVENTS,
): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const event of events) {
    const file = schemaFile(event);
    files.set(file, await formatted(schemaDocument(event), file));
  }
  files.set(INDEX_FILE, await formatted(schemaIndex(events), INDEX_FILE));
  return files;
}

/** The schema files on disk (every `<folder>/*.json` of schemas/), path relative to schemas/ → content. */
export async function committedSchemas(): Promise<Map<string, string>> {
  const entries = await readdir(SCHEMAS_DIR, { withFileTypes: true }).catch(() => []);
  const files = new Map<string, string>();
  for (const folder of entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()) {
    for (const name of (await readdir(path.join(SCHEMAS_DIR, folder))).sort()) {
      if (!name.endsWith('.json')) continue;
      const file = `${folder}/${name}`;
      files.set(file, await readFile(path.join(SCHEMAS_DIR, file), 'utf8'));
    }
  }
  return files;
}

/** The committed schema files parsed, for contractProblems. */
export function parsed(files: ReadonlyMap<string, string>): Map<string, unknown> {
  return new Map(
    [...files].map(([file, text]) => {
      try {
        return [file, JSON.parse(text) as unknown];
      } catch (error) {
        throw new Error(`schemas/${file} is not JSON: ${(error as Error).message}`, { cause: error });
      }
    }),
  );
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const problems = contractProblems(parsed(await committedSchemas()), PUBLIC_EVENTS);
  if (problems.length > 0) {
    console.error(`schemas/ left as it is:\n\n${problems.join('\n\n')}`);
    process.exit(1);
  }
  let written = 0;
  for (const [file, content] of await generatedSchemas()) {
    const target = path.join(SCHEMAS_DIR, file);
    if ((await readFile(target, 'utf8').catch(() => undefined)) === content) continue;
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, content);
    console.log(`wrote ${path.relative(process.cwd(), target)}`);
    written += 1;
  }
  if (written === 0) console.log('schemas/ is current');
}
