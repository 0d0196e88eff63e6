// The OpenAPI 3.1 document of the edge, built from the route table the edge serves: each route's
// method and path, and what its `doc` says (route-doc.ts). A route without a `doc` is refused, so
// no route is served undescribed. The errors come from the one mapping of errors to HTTP
// (http-errors.ts). Deterministic: the same routes give the same document, byte for byte.
import Type, { type TSchema } from 'typebox';
import { ERROR_ANSWERS } from '../http-errors.ts';
import { isClientPath } from '../client/cors.ts';
import type { Route } from '../router.ts';
import { ErrorBody, Id, NAMED_SCHEMAS } from './replies.ts';
import type { Parameter, Reply, RouteDoc } from './route-doc.ts';

export type OpenApiDocument = Record<string, unknown>;

/** What the document needs of a route: not its handler. */
export type DescribedRoute = Pick<Route, 'method' | 'path' | 'doc' | 'errors'>;

/** Sections of the document, and the paths in each (the first prefix that matches). */
const TAGS: { name: string; description: string; prefixes: string[] }[] = [
  {
    name: 'client',
    description:
      'What the widget and the SDKs call: no key; every answer, errors included, carries `Access-Control-Allow-Origin: *`.',
    prefixes: ['/api/v1/client/', '/api/v2/client/'],
  },
  {
    name: 'integrations',
    description: 'Slack and Notion: connecting a workspace over OAuth, and which surveys go where.',
    prefixes: ['/api/v1/management/integrations', '/api/v1/integrations/'],
  },
  {
    name: 'webhooks',
    description:
      "Signed POSTs of response changes to a URL, as Formbricks' webhooks, retried and replayable (see docs/integrations.md).",
    prefixes: ['/api/v1/webhooks'],
  },
  {
    name: 'management',
    description:
      'Surveys, responses, contacts, attribute keys, action classes and widget settings, with an API key: GET needs `read` on the environment, POST and PUT `write`, DELETE `manage`.',
    prefixes: ['/api/v1/management/', '/api/v1/environments/'],
  },
  {
    name: 'management-v2',
    description:
      "Formbricks' v2 management API, with the same keys and permissions: its answers `{data}` and `{data, meta}`, and its errors as `{error: {code, message, details: [{field, issue}]}}` (a key without the permission: 401).",
    prefixes: ['/api/v2/management/', '/api/v2/me'],
  },
  { name: 'health', description: 'Liveness and readiness.', prefixes: ['/health', '/api/v2/health'] },
  { name: 'meta', description: 'This document.', prefixes: ['/api/openapi.json'] },
];

/** What each error code means, in the words of docs/api.md ("Errors"). */
const ERROR_MEANINGS: Record<string, string> = {
  bad_request:
    'The request is malformed or fails validation (`details` names the fields), or what it asks cannot be done in this state.',
  not_authenticated: 'No API key, or an unknown one.',
  forbidden:
    'The key has no access to the environment, the survey is not accepting submissions, or the plan does not allow it.',
  not_found: 'An unknown record (`details` names it), or an unknown route.',
  method_not_allowed: 'A known path with another method.',
  conflict:
    'Already done: a single-use id used, a key or name that exists, an `Idempotency-Key` still in flight.',
  payload_too_large: 'A body over 2 MiB.',
  unprocessable_entity: 'An `Idempotency-Key` sent again with a different request.',
  too_many_requests: 'A rate limit was reached: try again after `Retry-After` seconds.',
  internal_server_error: 'An unexpected error; the details are only in the log.',
  not_implemented: 'A feature this server has not set up (file uploads without a store).',
  service_unavailable: 'A dependency cannot take the request now: try again after `Retry-After` seconds.',
};

const RETRY_AFTER: Record<string, Parameter> = {
  'Retry-After': { schema: Type.Integer({ minimum: 0 }), description: 'Seconds to wait before trying again' },
};

const SECURITY = [{ apiKey: [] }, { bearer: [] }];

export function openApiDocument(routes: readonly DescribedRoute[], version: string): OpenApiDocument {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (!route.doc) {
      throw new Error(`${route.method} ${route.path} has no doc: every route the edge serves is described`);
    }
    const path = route.path.replace(/:(\w+)/g, '{$1}');
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route, route.doc);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Chorus API',
      version,
      description:
        'Formbricks-compatible survey feedback ingestion. A success answer is `{"data": …}`, an error `{"code", "message", "details"}`. Generated from the routes the edge serves (`npm run docs:openapi`); docs/api.md tells the rules in prose. The widget bundles under `/js/` are files, not described here.',
      license: { name: 'AGPL-3.0-only', identifier: 'AGPL-3.0-only' },
    },
    tags: TAGS.map(({ name, description }) => ({ name, description })),
    paths,
    components: {
      schemas: Object.fromEntries(
        Object.entries(NAMED_SCHEMAS).map(([name, schema]) => [name, withRefs(schema, name)]),
      ),
      responses: Object.fromEntries(
        ERROR_ANSWERS.flatMap(([status, code]): [string, unknown][] => [
          [code, errorResponse(status, code)],
          [`v2_${code}`, v2ErrorResponse(status, code)],
        ]),
      ),
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        bearer: { type: 'http', scheme: 'bearer', description: 'The same API key, as a bearer token' },
      },
    },
  };
}

function operation(route: DescribedRoute, doc: RouteDoc): Record<string, unknown> {
  const pathParams = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  const unknown = Object.keys(doc.params ?? {}).filter((name) => !pathParams.includes(name));
  if (unknown.length > 0)
    throw new Error(`${route.method} ${route.path}: no path parameter ${unknown.join(', ')}`);
  const parameters = [
    ...pathParams.map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: withRefs(doc.params?.[name] ?? Id),
    })),
    ...parametersIn('query', doc.query),
    ...parametersIn('header', doc.headers),
  ];
  return {
    operationId: operationId(route),
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: [tagOf(route.path)],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(doc.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: withRefs(doc.body) } } } }
      : {}),
    responses: {
      ...Object.fromEntries(Object.entries(doc.replies).map(([status, reply]) => [status, response(reply)])),
      ...Object.fromEntries(
        errorStatuses(route, doc).map((status) => [
          String(status),
          {
            $ref: `#/components/responses/${route.errors === 'formbricks-v2' ? 'v2_' : ''}${codeOf(status)}`,
          },
        ]),
      ),
    },
    ...(doc.auth === 'apiKey' ? { security: SECURITY } : {}),
  };
}

/** The route's own errors and those that come from around it. */
function errorStatuses(route: DescribedRoute, doc: RouteDoc): number[] {
  const around = [500];
  if (doc.body) around.push(413);
  if (doc.auth === 'apiKey') around.push(401, 403);
  // request-limits.ts: the client API but its preflights, and every request with a key.
  if ((isClientPath(route.path) && route.method !== 'OPTIONS') || doc.auth === 'apiKey') around.push(429);
  return [...new Set([...doc.errors, ...around])].sort((a, b) => a - b);
}

function codeOf(status: number): string {
  const answer = ERROR_ANSWERS.find(([s]) => s === status);
  if (!answer) throw new Error(`no error of the edge answers ${status} (http-errors.ts)`);
  return answer[1];
}

function errorResponse(status: number, code: string) {
  const meaning = ERROR_MEANINGS[code];
  if (meaning === undefined) throw new Error(`error code ${code} has no meaning in ERROR_MEANINGS`);
  const retry = status === 429 || status === 503;
  return response({
    description: `\`${code}\`: ${meaning}`,
    schema: Type.Object({ ...ErrorBody.properties, code: Type.Literal(code) }),
    ...(retry ? { headers: RETRY_AFTER } : {}),
  });
}

/** The same error in Formbricks' v2 envelope (http-errors.ts, errorReplyIn). */
function v2ErrorResponse(status: number, code: string) {
  const chorus = errorResponse(status, code);
  return {
    ...chorus,
    content: {
      'application/json': {
        schema: withRefs(
          Type.Object({
            error: Type.Object({
              code: Type.Literal(status),
              message: Type.String(),
              details: Type.Array(Type.Object({ field: Type.String(), issue: Type.String() })),
            }),
          }),
        ),
      },
    },
  };
}

function response(reply: Reply) {
  return {
    description: reply.description,
    ...(reply.headers
      ? {
          headers: Object.fromEntries(
            Object.entries(reply.headers).map(([name, h]) => [
              name,
              { description: h.description, schema: withRefs(h.schema) },
            ]),
          ),
        }
      : {}),
    ...(reply.schema ? { content: { 'application/json': { schema: withRefs(reply.schema) } } } : {}),
  };
}

function parametersIn(place: 'query' | 'header', parameters: Record<string, Parameter> = {}) {
  return Object.entries(parameters).map(([name, p]) => ({
    name,
    in: place,
    description: p.description,
    required: p.required ?? false,
    schema: withRefs(p.schema),
  }));
}

function tagOf(path: string): string {
  const tag = TAGS.find((t) => t.prefixes.some((prefix) => path.startsWith(prefix)));
  if (!tag) throw new Error(`${path} is in no section of the document: add its prefix to TAGS`);
  return tag.name;
}

/** `POST /api/v1/client/:environmentId/responses` → `postV1ClientByEnvironmentIdResponses`. */
function operationId(route: DescribedRoute): string {
  const words = route.path
    .split('/')
    .filter((segment) => segment !== '' && segment !== 'api')
    .map((segment) => (segment.startsWith(':') ? `by-${segment.slice(1)}` : segment))
    .flatMap((segment) => segment.split(/[^A-Za-z0-9]+/))
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1));
  return route.method.toLowerCase() + words.join('');
}

/** Named schemas, by their JSON, so that any copy of one is found (typebox copies optional fields). */
const NAMES = new Map(Object.entries(NAMED_SCHEMAS).map(([name, schema]) => [JSON.stringify(schema), name]));

/** A plain JSON copy of `schema`, with every named schema in it but `self` as a `$ref`. */
function withRefs(schema: TSchema, self?: string): unknown {
  const walk = (node: unknown, root: boolean): unknown => {
    if (typeof node !== 'object' || node === null) return node;
    if (Array.isArray(node)) return node.map((item) => walk(item, false));
    // Every named schema is an object type: other nodes are not stringified to be looked up.
    const name = (node as { type?: unknown }).type === 'object' ? NAMES.get(JSON.stringify(node)) : undefined;
    if (name !== undefined && !(root && name === self)) return { $ref: `#/components/schemas/${name}` };
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, walk(value, false)]));
  };
  return walk(JSON.parse(JSON.stringify(schema)), true);
}
