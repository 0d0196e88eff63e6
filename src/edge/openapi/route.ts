// `GET /api/openapi.json`: the API document of the routes served beside it, itself included. No key
// (the document is public, like docs/openapi.json), and cacheable: it changes only with a release.
import { createHash } from 'node:crypto';
import Type from 'typebox';
import { matchesEtag } from '../../surveys/widget-state.ts';
import type { HttpReply } from '../http/types.ts';
import type { Route, RouteRequest } from '../router.ts';
import { openApiDocument } from './document.ts';
import type { RouteDoc } from './route-doc.ts';

export const API_DOCUMENT_PATH = '/api/openapi.json';

const CACHE_CONTROL = 'public, max-age=3600';

const DOC: RouteDoc = {
  summary: 'This document: the OpenAPI 3.1 description of every route',
  headers: {
    'If-None-Match': { schema: Type.String(), description: 'The ETag of a copy the client has' },
  },
  replies: {
    200: {
      description: 'The document (the same as docs/openapi.json of the release)',
      schema: Type.Object({ openapi: Type.String(), info: Type.Object({}), paths: Type.Object({}) }),
      headers: { ETag: { schema: Type.String(), description: 'Of this document' } },
    },
    304: { description: 'The copy named by `If-None-Match` is current' },
  },
  errors: [],
};

/**
 * The routes with the route that describes them. The document is built here, once: a route
 * without a `doc` stops the edge from starting instead of being served undescribed.
 */
export function withApiDocument(routes: readonly Route[], version: string): Route[] {
  const self = { method: 'GET', path: API_DOCUMENT_PATH, doc: DOC };
  const json = Buffer.from(JSON.stringify(openApiDocument([...routes, self], version)));
  const etag = `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`;
  const headers = { 'Cache-Control': CACHE_CONTROL, ETag: etag };
  const handler = (request: RouteRequest): HttpReply =>
    matchesEtag(request.headers['if-none-match'], etag)
      ? { status: 304, headers, body: undefined }
      : {
          status: 200,
          headers: { ...headers, 'Content-Type': 'application/json; charset=utf-8' },
          body: json,
        };
  return [...routes, { ...self, handler }];
}
