// The Formbricks widget bundles at `/js/*` (widget contract §1): the loader and the snippet fetch
// `{appUrl}/js/formbricks.umd.cjs`, which preloads `{appUrl}/js/surveys.umd.cjs`, so one `appUrl`
// serves both the script and the API. The files come from the directory the operator sets
// (WIDGET_ASSETS_DIR): they ship inside each Formbricks release, and Chorus does not vendor them.
//
// Served outside the router, whose routes have a fixed number of segments: a release may put
// files in subfolders (`/js/mobile/v1/…`). Only a regular file below the directory is ever read:
// each decoded segment must be a plain name (no `.`/`..`, no hidden file, no separator or encoded
// one, no NUL; see SAFE_NAME), and the file's real path, symlinks resolved, must still be below the
// directory's real path. Anything else is a 404, as is every path when no directory is set.
import { readFile, realpath, stat } from 'node:fs/promises';
import { extname, join, resolve, sep } from 'node:path';
import { ChorusError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { errorReply } from './http-errors.ts';
import type { HttpHandler, HttpReply, HttpRequest } from './http/types.ts';

const PREFIX = '/js';
/** The route of every answer here (the metrics' `http_route`). */
const ROUTE = '/js/*';

/**
 * A file or folder name that can only mean itself: it starts with a letter, digit or `_` (so never
 * `.`, `..` or a hidden file) and has no separator, `%`, `:` or control character.
 */
const SAFE_NAME = /^[A-Za-z0-9_][A-Za-z0-9._+-]{0,254}$/;
const MAX_DEPTH = 8;
/** Larger files are not served (the bundles are well under a megabyte each). */
const MAX_FILE_BYTES = 16 * 1024 * 1024;

/** Formbricks' headers for `/js/(.*)` (apps/web/next.config.mjs), beside the type. */
const ASSET_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Cache-Control':
    'public, max-age=3600, s-maxage=2592000, stale-while-revalidate=3600, stale-if-error=86400',
  'X-Content-Type-Options': 'nosniff',
} as const;

const TYPES: Record<string, string> = {
  '.js': 'application/javascript; charset=UTF-8',
  '.cjs': 'application/javascript; charset=UTF-8',
  '.mjs': 'application/javascript; charset=UTF-8',
  '.css': 'text/css; charset=UTF-8',
  '.map': 'application/json; charset=UTF-8',
  '.json': 'application/json; charset=UTF-8',
};

/** Whether `path` (as sent, percent-encoded) is one this module answers. */
function isAssetPath(path: string): boolean {
  return path === PREFIX || path.startsWith(`${PREFIX}/`);
}

/**
 * The decoded names of a `/js/…` path below the directory, or undefined when the path cannot name
 * a file there: empty segments (`/js//x`, a trailing `/`), dot segments, hidden files, encoded
 * separators or dots (`%2f`, `%2e%2e`), malformed percent-encoding, or more than MAX_DEPTH levels.
 */
export function assetNames(path: string): string[] | undefined {
  if (!path.startsWith(`${PREFIX}/`)) return undefined;
  const segments = path.slice(PREFIX.length + 1).split('/');
  if (segments.length > MAX_DEPTH) return undefined;
  const names: string[] = [];
  for (const segment of segments) {
    let name: string;
    try {
      name = decodeURIComponent(segment);
    } catch {
      return undefined;
    }
    if (!SAFE_NAME.test(name)) return undefined;
    names.push(name);
  }
  return names;
}

export function contentTypeOf(name: string): string {
  return TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream';
}

interface CachedFile {
  mtimeMs: number;
  size: number;
  body: Buffer;
}

/**
 * Reads files below `dir`, refusing any that resolves (through symlinks) outside it. A file is read
 * once and kept while its size and modification time stay the same (one `stat` per request), so a
 * replaced bundle is served at once. A file that cannot be read (gone meanwhile, no permission)
 * counts as absent: the operator learns of it from checkWidgetAssets at start.
 */
export function assetDirectory(dir: string) {
  const cache = new Map<string, CachedFile>();
  const absent = () => undefined;
  return async function read(names: readonly string[]): Promise<Buffer | undefined> {
    const root = await realpath(resolve(dir)).catch(absent);
    if (root === undefined) return undefined;
    const file = await realpath(join(root, ...names)).catch(absent);
    if (file === undefined || !file.startsWith(root + sep)) return undefined;
    const stats = await stat(file).catch(absent);
    if (!stats?.isFile() || stats.size > MAX_FILE_BYTES) return undefined;
    const cached = cache.get(file);
    if (cached && cached.mtimeMs === stats.mtimeMs && cached.size === stats.size) return cached.body;
    const body = await readFile(file).catch(absent);
    if (body === undefined) return undefined;
    if (cache.size >= 64) cache.clear(); // a handful of bundles in practice: bounded all the same
    cache.set(file, { mtimeMs: stats.mtimeMs, size: stats.size, body });
    return body;
  };
}

/**
 * Answers `/js/*` from `dir` (undefined: not configured) and hands every other request to `next`.
 * GET and HEAD serve a file; OPTIONS answers like a preflight; other methods get 405. Every answer
 * carries `Access-Control-Allow-Origin: *`, errors (JSON, through errorReply) included.
 */
export function withWidgetAssets(next: HttpHandler, dir: string | undefined, logger: Logger): HttpHandler {
  const read = dir === undefined ? undefined : assetDirectory(dir);
  const serve = async (request: HttpRequest): Promise<HttpReply> => {
    if (request.method === 'OPTIONS') {
      return {
        status: 200,
        headers: { 'Access-Control-Allow-Methods': ALLOWED_METHODS, 'Access-Control-Max-Age': '3600' },
        body: { data: {} },
      };
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      throw new ChorusError('method_not_allowed', 'Method Not Allowed', { method: request.method });
    }
    const names = assetNames(request.path);
    const body = read && names ? await read(names) : undefined;
    if (!names || body === undefined) throw fileNotFound(request.path, read !== undefined);
    return { status: 200, headers: { 'Content-Type': contentTypeOf(names.at(-1)!), ...ASSET_HEADERS }, body };
  };
  return async (request) => {
    if (!isAssetPath(request.path)) return next(request);
    let reply: HttpReply;
    try {
      reply = await serve(request);
    } catch (error) {
      reply = errorReply(error, logger);
      if (reply.status === 405) reply.headers = { ...reply.headers, Allow: ALLOWED_METHODS };
    }
    return { ...reply, route: ROUTE, headers: { ...reply.headers, 'Access-Control-Allow-Origin': '*' } };
  };
}

const ALLOWED_METHODS = 'GET, HEAD, OPTIONS';

function fileNotFound(path: string, configured: boolean): ChorusError {
  const details: Record<string, string> = { resource_id: path, resource_type: 'File' };
  if (!configured) details.reason = 'no widget assets directory is configured (WIDGET_ASSETS_DIR)';
  return new ChorusError('not_found', 'File not found', details);
}

/** Logs, at start, what an operator would otherwise find out from a widget that does not load. */
export async function checkWidgetAssets(dir: string | undefined, logger: Logger): Promise<void> {
  if (dir === undefined) return;
  const read = assetDirectory(dir);
  for (const bundle of ['formbricks.umd.cjs', 'surveys.umd.cjs']) {
    if ((await read([bundle])) === undefined) {
      logger.warn(
        { dir, bundle },
        'a widget bundle is missing from WIDGET_ASSETS_DIR: /js/ answers 404 for it',
      );
    }
  }
}
