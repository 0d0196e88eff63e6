// GET /api/v1/client/{environmentId}/environment (the browser widget) and its v2 form (Android,
// iOS): the environment state (surveys/widget-state.ts). This is the hottest route — every page
// load of every visitor — so it is answered from the edge's cache of built states, one entry per
// environment, dropped on every change announced for the environment (survey, action class or
// widget settings: see the widget_state migration) and rebuilt at most once per time-to-live
// otherwise. The answer may be cached by browsers and CDNs for a minute, as Formbricks allows,
// and revalidated with its ETag (304). The answer is serialized once per build, not per request.
import Type from 'typebox';
import { notFound } from '../../errors.ts';
import { buildEnvironmentState, matchesEtag } from '../../surveys/widget-state.ts';
import type { EnvironmentStateInput } from '../../surveys/widget-state.ts';
import type { Directory } from '../directory.ts';
import type { HttpReply } from '../http/types.ts';
import type { Route, RouteRequest } from '../router.ts';
import { data } from '../openapi/route-doc.ts';
import { EnvironmentState } from '../openapi/replies.ts';
import { requireStorableRequest } from '../safe-json.ts';
import { requireId } from '../validation.ts';
import { CORS_HEADERS } from './context.ts';
import { preflight } from './cors.ts';

/** Formbricks' caching of the same answer. */
const ENVIRONMENT_CACHE_CONTROL =
  'public, s-maxage=60, max-age=60, stale-while-revalidate=60, stale-if-error=60';

/** A built answer as the edge caches it: its JSON body and its ETag. */
export interface CachedEnvironmentState {
  json: Buffer;
  etag: string;
}

/** A cache miss: the stored records of the environment, built into the answer once. */
export function environmentStateLoader(
  read: (environmentId: string) => Promise<EnvironmentStateInput | undefined>,
): (environmentId: string) => Promise<CachedEnvironmentState | undefined> {
  return async (environmentId) => {
    const input = await read(environmentId);
    if (!input) return undefined;
    const state = buildEnvironmentState(input, new Date());
    return { json: Buffer.from(JSON.stringify(state.body)), etag: state.etag };
  };
}

export function clientEnvironmentRoutes(states: Directory<CachedEnvironmentState>): Route[] {
  const handler = async (request: RouteRequest): Promise<HttpReply> => {
    requireStorableRequest(request);
    const environmentId = requireId('environmentId', request.params.environmentId);
    const state = await states.get(environmentId);
    if (!state) throw notFound('Environment', environmentId);
    if (matchesEtag(request.headers['if-none-match'], state.etag)) {
      return {
        status: 304,
        headers: { 'Cache-Control': ENVIRONMENT_CACHE_CONTROL, ETag: state.etag },
        body: undefined,
      };
    }
    return {
      status: 200,
      headers: {
        'Cache-Control': ENVIRONMENT_CACHE_CONTROL,
        ETag: state.etag,
        'Content-Type': 'application/json; charset=utf-8',
      },
      body: state.json,
    };
  };
  const caching = {
    'Cache-Control': { schema: Type.String(), description: ENVIRONMENT_CACHE_CONTROL },
    ETag: { schema: Type.String(), description: 'A weak ETag of the state (not of `expiresAt`)' },
  };
  const doc = {
    summary: "The widget's environment state: its app surveys, action classes and settings",
    headers: {
      'If-None-Match': { schema: Type.String(), description: 'The ETag of a state the client has' },
    },
    replies: {
      200: data(EnvironmentState, "The state, from the edge's cache", caching),
      304: { description: 'The state named by `If-None-Match` is current', headers: caching },
    },
    errors: [400, 404, 503],
  };
  return ['v1', 'v2'].flatMap((version): Route[] => {
    const path = `/api/${version}/client/:environmentId/environment`;
    return [{ method: 'GET', path, headers: CORS_HEADERS, doc, handler }, preflight(path, ['GET'])];
  });
}
