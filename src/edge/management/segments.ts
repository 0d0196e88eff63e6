// Management API: reusable public segments (docs/segments.md). Formbricks edits them only in its
// dashboard; Chorus has none, so this is the door. Writes go straight to PostgreSQL, recompute the
// environment's stored membership in the same transaction, and are announced to every edge by a
// trigger (`chorus_environment_changed`), like survey writes.
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { invalidInput, notFound } from '../../errors.ts';
import { ID_PATTERN } from '../../ids.ts';
import { parseFilters } from '../../segments/filters.ts';
import { Segment } from '../../store/entities.ts';
import {
  createSegment,
  deleteSegment,
  listPublicSegments,
  recordsOf,
  updateSegment,
} from '../../store/segments.ts';
import type { Route, RouteRequest } from '../router.ts';
import { nullable, parseJsonBody, requireId, validateBody } from '../validation.ts';
import { authenticate, permissionFor, requireAccess, writableEnvironment } from './auth.ts';
import { forgetEnvironmentCaches, requireContactsFeature, type ManagementContext } from './context.ts';
import { listRoute } from './paging.ts';
import { data } from '../openapi/route-doc.ts';
import { SegmentFilterItem, SegmentRecord } from '../openapi/replies.ts';

/** Formbricks' cap on the surveys a client may link in one write (MAX_SEGMENT_SURVEYS). */
const MAX_SEGMENT_SURVEYS = 500;
const Title = Type.String({ minLength: 1, maxLength: 255 });
const SurveyIds = Type.Array(Type.String({ pattern: ID_PATTERN }), { maxItems: MAX_SEGMENT_SURVEYS });
/** Checked item by item by parseFilters, which names the path of a bad field. */
const FilterList = Type.Array(SegmentFilterItem);
/** A public segment is what this route manages: `isPrivate` may be sent, as `false`. */
const Public = Type.Optional(Type.Literal(false));

const CreateBody = Compile(
  Type.Object({
    environmentId: Type.Optional(Type.String({ pattern: ID_PATTERN })),
    title: Title,
    description: nullable(Type.String({ maxLength: 2000 })),
    isPrivate: Public,
    filters: Type.Array(Type.Unknown()),
    surveys: Type.Optional(SurveyIds),
  }),
);
const UpdateBody = Compile(
  Type.Object({
    title: Type.Optional(Title),
    description: nullable(Type.String({ maxLength: 2000 })),
    isPrivate: Public,
    filters: Type.Optional(Type.Array(Type.Unknown())),
    surveys: Type.Optional(SurveyIds),
  }),
);
/** The documented bodies: the filters in their item shape. */
const createDoc = Type.Object({ ...CreateBody.Type().properties, filters: FilterList });
const updateDoc = Type.Object({ ...UpdateBody.Type().properties, filters: Type.Optional(FilterList) });

export function managementSegmentRoutes(ctx: ManagementContext): Route[] {
  const base = '/api/v1/management/segments';
  return [
    listRoute(base, ctx, { summary: 'List public segments', item: SegmentRecord }, (environmentIds, page) =>
      listPublicSegments(ctx.orm.em, environmentIds, page),
    ),
    {
      method: 'GET',
      path: `${base}/:segmentId`,
      doc: {
        summary: 'Read a segment (a survey’s private one too)',
        auth: 'apiKey',
        replies: { 200: data(SegmentRecord, 'The segment') },
        errors: [400, 404, 503],
      },
      handler: async (request) => {
        const { em, segment } = await accessibleSegment(ctx, request);
        return { status: 200, body: { data: (await recordsOf(em, [segment]))[0] } };
      },
    },
    {
      method: 'POST',
      path: base,
      doc: {
        summary: 'Create a public segment: a title unique in the environment and at least one filter',
        description:
          '`environmentId` may be left out when the API key can write to exactly one environment. ' +
          '`surveys` (app surveys of the environment) are pointed at the segment; their private segments go. ' +
          'Segments need the enterprise plan (Formbricks’ Contacts feature): 403 on any other, for changes and deletions too.',
        auth: 'apiKey',
        body: createDoc,
        replies: { 201: data(SegmentRecord, 'The segment created') },
        errors: [400, 409, 503],
      },
      handler: async (request) => {
        const grant = await authenticate(request, ctx.keys);
        const body = validateBody(CreateBody, parseJsonBody(request.body));
        const environmentId = writableEnvironment(grant, body.environmentId);
        await requireAdvancedTargeting(ctx, environmentId);
        const filters = parseFilters(body.filters, 'filters', { required: true });
        const record = await createSegment(ctx.orm.em, {
          environmentId,
          title: body.title,
          description: body.description ?? null,
          filters,
          surveys: body.surveys,
        });
        forgetEnvironmentCaches(ctx, environmentId);
        return { status: 201, body: { data: record } };
      },
    },
    {
      method: 'PUT',
      path: `${base}/:segmentId`,
      doc: {
        summary: 'Change the fields sent of a segment; `surveys` are added to it, never removed',
        description: 'A change of filters applies to every survey using the segment.',
        auth: 'apiKey',
        body: updateDoc,
        replies: { 200: data(SegmentRecord, 'The segment changed') },
        errors: [400, 404, 409, 503],
      },
      handler: async (request) => {
        const { segment } = await accessibleSegment(ctx, request);
        const body = validateBody(UpdateBody, parseJsonBody(request.body));
        await requireAdvancedTargeting(ctx, segment.environment.id);
        if (segment.isPrivate && (body.title !== undefined || body.surveys !== undefined))
          throw invalidInput({ segment: 'A private segment belongs to its survey: only its filters change' });
        const record = await updateSegment(ctx.orm.em, segment.id, {
          title: body.title,
          description: body.description,
          filters:
            body.filters === undefined
              ? undefined
              : parseFilters(body.filters, 'filters', { required: !segment.isPrivate }),
          surveys: body.surveys,
        });
        forgetEnvironmentCaches(ctx, segment.environment.id);
        return { status: 200, body: { data: record } };
      },
    },
    {
      method: 'DELETE',
      path: `${base}/:segmentId`,
      doc: {
        summary: 'Delete a segment no survey uses (409 while one does)',
        auth: 'apiKey',
        replies: { 200: data(SegmentRecord, 'The segment deleted') },
        errors: [400, 404, 409, 503],
      },
      handler: async (request) => {
        const { segment } = await accessibleSegment(ctx, request);
        await requireAdvancedTargeting(ctx, segment.environment.id);
        const record = await deleteSegment(ctx.orm.em, segment.id);
        forgetEnvironmentCaches(ctx, segment.environment.id);
        return { status: 200, body: { data: record } };
      },
    },
  ];
}

/** Segments are Formbricks' Contacts feature (shared/spec/segments.md §4.1): read on any plan, written on enterprise. */
const requireAdvancedTargeting = (ctx: ManagementContext, environmentId: string) =>
  requireContactsFeature(ctx, environmentId, 'Advanced targeting is not allowed for this organization');

/** The segment of the path, if the key may act on its environment (GET read, PUT write, DELETE manage). */
async function accessibleSegment(ctx: ManagementContext, request: RouteRequest) {
  const grant = await authenticate(request, ctx.keys);
  const id = requireId('segmentId', request.params.segmentId);
  const em = ctx.orm.em.fork();
  const segment = await em.findOne(Segment, { id });
  if (!segment) throw notFound('Segment', id);
  requireAccess(grant, segment.environment.id, permissionFor(request.method));
  return { em, segment };
}
