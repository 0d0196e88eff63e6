// Writes docs/openapi.json, the API document of the edge's route table (`npm run docs:openapi`).
// src/edge/openapi/committed-document.test.ts fails while the file on disk differs from what this
// would write, and test/e2e/openapi.test.ts checks that a running edge serves the same document.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { edgeRoutes, type RouteContexts } from '../src/edge/routes.ts';
import { openApiDocument, type OpenApiDocument } from '../src/edge/openapi/document.ts';

export const DOCUMENT = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));

/**
 * A stand-in for a context the routes close over. Describing the routes runs no handler, so none
 * is read; a read throws, so a route factory that starts reading one at build time is noticed.
 */
function unread<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get: (_, key) => {
      throw new Error(`${name}.${String(key)} was read while describing the routes`);
    },
  });
}

/** The route table the edge serves, built without a database, Redis or Kafka behind it. */
export function describedRoutes(version: string) {
  const contexts: RouteContexts = {
    readiness: unread('readiness'),
    client: unread('client'),
    idempotency: unread('idempotency'),
    activityOf: unread('activityOf'),
    uploads: undefined,
    environmentStates: unread('environmentStates'),
    management: unread('management'),
    integrations: unread('integrations'),
    webhooks: unread('webhooks'),
  };
  return edgeRoutes(contexts, version);
}

export async function releaseVersion(): Promise<string> {
  const manifest = await readFile(new URL('../package.json', import.meta.url), 'utf8');
  return (JSON.parse(manifest) as { version: string }).version;
}

export async function apiDocument(): Promise<OpenApiDocument> {
  const version = await releaseVersion();
  return openApiDocument(describedRoutes(version), version);
}

/** The file as `npm run docs:openapi` writes it, formatted as `prettier --check` expects. */
export async function apiDocumentFile(): Promise<string> {
  // Loaded only to write: the tests that import this module compare content, not formatting.
  const prettier = await import('prettier');
  const options = await prettier.resolveConfig(DOCUMENT);
  return prettier.format(JSON.stringify(await apiDocument()), { ...options, filepath: DOCUMENT });
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await writeFile(DOCUMENT, await apiDocumentFile());
  console.log(`wrote ${path.relative(process.cwd(), DOCUMENT)}`);
}
