// The deliveries of one destination (an integration, a webhook), newest first, a page at a time:
// the one route both kinds share.
import Type from 'typebox';
import { invalidInput } from '../../errors.ts';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../../store/entities.ts';
import { listDeliveries } from '../../store/integrations.ts';
import type { Orm } from '../../store/orm.ts';
import type { Route, RouteRequest } from '../router.ts';
import { data } from '../openapi/route-doc.ts';
import { DeliveryRecord } from '../openapi/replies.ts';
import { PAGE_QUERY, parsePage, TOTAL_COUNT } from './paging.ts';

/** Whose deliveries a request lists. */
export type DeliveryOwner = { integrationId: string } | { webhookId: string };

export function deliveriesRoute(options: {
  path: string;
  summary: string;
  /** Read when a request comes, not when the route is made. */
  ctx: { orm: Orm };
  /** The destination the path names, once the request may read it. */
  owner: (request: RouteRequest) => Promise<DeliveryOwner>;
}): Route {
  return {
    method: 'GET',
    path: options.path,
    doc: {
      summary: options.summary,
      auth: 'apiKey',
      query: {
        status: { schema: Type.Enum([...DELIVERY_STATUSES]), description: 'Only deliveries in this state' },
        ...PAGE_QUERY,
      },
      replies: { 200: data(Type.Array(DeliveryRecord), 'One page', TOTAL_COUNT) },
      errors: [400, 404, 503],
    },
    handler: async (r) => {
      const owner = await options.owner(r);
      const status = r.query.get('status') ?? undefined;
      if (status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(status)) {
        throw invalidInput({ status: `must be one of ${DELIVERY_STATUSES.join(', ')}` });
      }
      const { items, total } = await listDeliveries(
        options.ctx.orm.em,
        { ...owner, status: status as DeliveryStatus | undefined },
        parsePage(r.query),
      );
      return { status: 200, headers: { 'X-Total-Count': String(total) }, body: { data: items } };
    },
  };
}
