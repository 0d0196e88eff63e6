// The document as it is committed: valid OpenAPI 3.1, and what the route table generates. Apart
// from document.test.ts because the OpenAPI parser is slow to load. The file's formatting is
// `prettier --check`'s (npm run lint); here its content is compared.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { validate } from '@readme/openapi-parser';
import { apiDocument, DOCUMENT } from '../../../scripts/openapi-docs.ts';

test('the document is valid OpenAPI 3.1', async () => {
  const document = await apiDocument();
  assert.equal(document.openapi, '3.1.0');
  // The parser's own type of a document is a union of every OpenAPI version's.
  const result = await validate(structuredClone(document) as Parameters<typeof validate>[0]);
  assert.ok(result.valid, JSON.stringify(result, null, 2));
});

test('docs/openapi.json is what the route table generates', async () => {
  const expected = await apiDocument();
  const written = JSON.parse(await readFile(DOCUMENT, 'utf8').catch(() => '{}')) as typeof expected;
  if (isDeepStrictEqual(written, expected)) return;
  // Where they differ, by section and path (`paths./api/v1/…`), not as a diff of 5,000 lines.
  const sections = (document: Record<string, unknown>) =>
    Object.entries(document).flatMap(([key, value]) =>
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? Object.entries(value).map(([inner, v]) => [`${key}.${inner}`, v] as const)
        : [[key, value] as const],
    );
  const before = new Map(sections(written));
  const after = new Map(sections(expected));
  const differing = [...new Set([...before.keys(), ...after.keys()])].filter(
    (key) => !isDeepStrictEqual(before.get(key), after.get(key)),
  );
  assert.fail(
    `docs/openapi.json is stale: run \`npm run docs:openapi\`. It differs in ${differing.join(', ')}`,
  );
});
