// Formbricks' v2 management API for responses: the same writes as v1 (each a command on `responses`,
// management/responses.ts), Formbricks' v2 shapes around them: `{data}`, `{data, meta}` for a list,
// 201 for a create. Chorus' additions: the list's `meta.total` is returned (Formbricks counts it and
// leaves it out), and `meta.nextCursor` continues a list by `after`, at the same cost at any depth.
import Type from 'typebox';
import { ID_PATTERN } from '../../../ids.ts';
import {
  queryResponses,
  responseRecord,
  type ResponseCursor,
  type ResponseQuery,
} from '../../../store/responses.ts';
import { ManagementCreateBody, UpdateBody } from '../../client/response-bodies.ts';
import { data } from '../../openapi/route-doc.ts';
import { Id, ResponseRecord } from '../../openapi/replies.ts';
import type { Route } from '../../router.ts';
import { requireId } from '../../validation.ts';
import { authenticate } from '../auth.ts';
import type { ManagementContext } from '../context.ts';
import { createResponse, deleteResponse, storedResponse, updateResponse } from '../responses.ts';
import {
  LIST_QUERY,
  listAnswer,
  listReply,
  parseTimedQuery,
  readableEnvironments,
  throwProblems,
  v2Route as route,
  type Problems,
} from './shared.ts';

const BASE = '/api/v2/management/responses';

export function v2ResponseRoutes(ctx: ManagementContext): Route[] {
  return [
    route({
      method: 'GET',
      path: BASE,
      doc: {
        summary: 'List responses (Formbricks v2): filters, sort and `meta {total, limit, offset}`',
        auth: 'apiKey',
        query: {
          ...LIST_QUERY,
          surveyId: { schema: Id, description: 'One survey’s responses' },
          contactId: { schema: Id, description: 'One contact’s responses' },
          after: {
            schema: Type.String(),
            description: 'A `meta.nextCursor`: the page goes on after it, in its order (a Chorus addition)',
          },
        },
        replies: {
          200: listReply(
            ResponseRecord,
            'One page; `meta.total` counts every match, `meta.nextCursor` (null on the last page) continues the list (Chorus additions)',
            { nextCursor: Type.Union([Type.String(), Type.Null()]) },
          ),
        },
        errors: [400, 503],
      },
      handler: async (request) => {
        const grant = await authenticate(request, ctx.keys);
        const q = parseQuery(request.query, readableEnvironments(grant));
        const { items, total, next } = await queryResponses(ctx.orm.em, q);
        return listAnswer(items, total, q, { nextCursor: next ? encodeCursor(next) : null });
      },
    }),
    route({
      method: 'POST',
      path: BASE,
      doc: {
        summary: 'Create a response (Formbricks v2): as the v1 create, the environment is the survey’s',
        auth: 'apiKey',
        body: ManagementCreateBody.Type(),
        replies: { 201: data(ResponseRecord, 'The response, as the processor stores it') },
        errors: [400, 404, 409, 503],
      },
      handler: async (request) => ({ status: 201, body: { data: await createResponse(ctx, request, 'v2') } }),
    }),
    route({
      method: 'GET',
      path: `${BASE}/:responseId`,
      doc: {
        summary: 'Read a response (Formbricks v2)',
        auth: 'apiKey',
        replies: { 200: data(ResponseRecord, 'The response') },
        errors: [400, 404, 503],
      },
      handler: async (request) => ({
        status: 200,
        body: { data: responseRecord(await storedResponse(ctx, request, 'read')) },
      }),
    }),
    route({
      method: 'PUT',
      path: `${BASE}/:responseId`,
      doc: {
        summary: 'Merge a change into a response (Formbricks v2): as the v1 PUT',
        auth: 'apiKey',
        body: UpdateBody.Type(),
        replies: { 200: data(ResponseRecord, 'The response with the change merged') },
        errors: [400, 404, 503],
      },
      handler: async (request) => ({ status: 200, body: { data: await updateResponse(ctx, request) } }),
    }),
    route({
      method: 'DELETE',
      path: `${BASE}/:responseId`,
      doc: {
        summary: 'Delete a response (Formbricks v2): as the v1 DELETE',
        auth: 'apiKey',
        replies: { 200: data(ResponseRecord, 'The deleted response') },
        errors: [400, 404, 503],
      },
      handler: async (request) => ({ status: 200, body: { data: await deleteResponse(ctx, request) } }),
    }),
  ];
}

/** The list's query: Formbricks' with its defaults, and Chorus' cursor; `invalid_input` names each bad parameter. */
function parseQuery(query: URLSearchParams, environmentIds: string[]): ResponseQuery {
  const problems: Problems = {};
  const optionalId = (name: string) => {
    const raw = query.get(name);
    return raw ? requireId(name, raw) : undefined;
  };
  const q: ResponseQuery = {
    ...parseTimedQuery(query, environmentIds, problems),
    surveyId: optionalId('surveyId'),
    contactId: optionalId('contactId'),
  };
  const after = query.get('after');
  if (after) {
    q.after = decodeCursor(after);
    if (!q.after) problems.after = 'must be a meta.nextCursor of this list';
    else if (q.after.sortBy !== q.sortBy) problems.after = `continues a list sorted by ${q.after.sortBy}`;
    if (q.skip > 0) problems.skip = 'cannot be combined with after';
  }
  throwProblems(problems);
  return q;
}

/** A cursor is opaque to clients: base64url of the sort field, the time as PostgreSQL wrote it, and the id. */
function encodeCursor(cursor: ResponseCursor): string {
  return Buffer.from(JSON.stringify([cursor.sortBy, cursor.time, cursor.id])).toString('base64url');
}

const CURSOR_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/;
const ID = new RegExp(ID_PATTERN);

function decodeCursor(text: string): ResponseCursor | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 3) return undefined;
    const [sortBy, time, id] = value as unknown[];
    if (sortBy !== 'createdAt' && sortBy !== 'updatedAt') return undefined;
    if (typeof time !== 'string' || !CURSOR_TIME.test(time) || typeof id !== 'string' || !ID.test(id))
      return undefined;
    return { sortBy, time, id };
  } catch {
    return undefined;
  }
}
