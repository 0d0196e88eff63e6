// `GET /api/v2/me`: what the API key may do, in Formbricks' v2 shape.
import Type from 'typebox';
import { Environment } from '../../../store/entities.ts';
import { data } from '../../openapi/route-doc.ts';
import { Id } from '../../openapi/replies.ts';
import type { Route } from '../../router.ts';
import { authenticate } from '../auth.ts';
import type { ManagementContext } from '../context.ts';
import { v2Route } from './shared.ts';

export function v2MeRoute(ctx: ManagementContext): Route {
  return v2Route({
    method: 'GET',
    path: '/api/v2/me',
    doc: {
      summary: 'What the API key may do (Formbricks v2): its environments and permissions',
      auth: 'apiKey',
      replies: {
        200: data(
          Type.Object({
            organizationId: Id,
            environmentPermissions: Type.Array(
              Type.Object({
                environmentId: Id,
                environmentType: Type.Literal('production'),
                permissions: Type.Enum(['read', 'write', 'manage']),
                projectId: Id,
                projectName: Type.String(),
              }),
            ),
          }),
          'The key’s organization and permissions',
        ),
      },
      errors: [503],
    },
    handler: async (request) => {
      const grant = await authenticate(request, ctx.keys);
      const environments = await ctx.orm.em
        .fork()
        .find(Environment, { id: [...grant.environments.keys()] }, { orderBy: { id: 'asc' } });
      return {
        status: 200,
        body: {
          data: {
            organizationId: grant.organizationId,
            // Chorus has no projects: each environment is its own, as Formbricks' legacy shape has it.
            environmentPermissions: environments.map((e) => ({
              environmentId: e.id,
              environmentType: 'production',
              permissions: grant.environments.get(e.id),
              projectId: e.id,
              projectName: e.name,
            })),
          },
        },
      };
    },
  });
}
