// Management API: surveys. Writes go straight to PostgreSQL; a trigger announces each change, so
// every edge's survey cache drops it at once.
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { ChorusError, invalidInput, notFound } from '../../errors.ts';
import { ID_PATTERN } from '../../ids.ts';
import { Survey, SURVEY_STATUSES } from '../../store/entities.ts';
import {
  createSurvey,
  deleteSurvey,
  listSurveys,
  surveyRecords,
  updateSurvey,
  type SurveySegmentInput,
} from '../../store/surveys.ts';
import { parseFilters } from '../../segments/filters.ts';
import { Block, DEFINITION_LIMITS, Element, Ending, Quota } from '../../surveys/definition.ts';
import { questionsOf } from '../../surveys/definition.ts';
import { SurveyWidgetFields, widgetFieldsOf } from '../../surveys/widget-fields.ts';
import type { Route, RouteRequest } from '../router.ts';
import { nullable, parseJsonBody, requireId, validateBody } from '../validation.ts';
import { authenticate, permissionFor, requireAccess } from './auth.ts';
import { forgetEnvironmentCaches, type ManagementContext } from './context.ts';
import { listRoute } from './paging.ts';
import { data } from '../openapi/route-doc.ts';
import { SurveyRecord } from '../openapi/replies.ts';

// `finished` and `data` appear in the spec's sample body but are not survey fields: unknown keys
// are ignored rather than refused.
const SurveyFields = {
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  type: Type.Optional(Type.Enum(['link', 'app'])),
  status: Type.Optional(Type.Enum([...SURVEY_STATUSES])),
  blocks: Type.Optional(Type.Array(Block, { maxItems: DEFINITION_LIMITS.questions })),
  questions: Type.Optional(Type.Array(Element, { maxItems: DEFINITION_LIMITS.questions })),
  endings: Type.Optional(Type.Array(Ending, { maxItems: DEFINITION_LIMITS.endings })),
  quotas: Type.Optional(Type.Array(Quota, { maxItems: DEFINITION_LIMITS.quotas })),
  isCaptureIpEnabled: Type.Optional(Type.Boolean()),
  ...SurveyWidgetFields,
  /**
   * Formbricks' segment object (docs/segments.md): `id` names the segment to use (the survey's own
   * private one when left out); `filters` are checked by parseFilters. Read-only fields
   * (`environmentId`, `hasFilters`, timestamps …) are ignored.
   */
  segment: nullable(
    Type.Object(
      {
        id: Type.Optional(Type.String({ pattern: ID_PATTERN })),
        title: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        description: nullable(Type.String({ maxLength: 2000 })),
        isPrivate: Type.Optional(Type.Boolean()),
        filters: Type.Optional(Type.Array(Type.Unknown())),
        surveys: Type.Optional(Type.Array(Type.String({ pattern: ID_PATTERN }), { maxItems: 500 })),
      },
      { additionalProperties: true },
    ),
  ),
};
const CreateBody = Compile(
  Type.Object({ environmentId: Type.String({ pattern: ID_PATTERN }), ...SurveyFields }),
);
const UpdateBody = Compile(Type.Object({ environmentId: Type.Optional(Type.String()), ...SurveyFields }));

export function managementSurveyRoutes(ctx: ManagementContext): Route[] {
  const base = '/api/v1/management/surveys';
  return [
    listRoute(base, ctx, { summary: 'List surveys', item: SurveyRecord }, (environmentIds, page) =>
      listSurveys(ctx.orm.em, environmentIds, page),
    ),
    {
      method: 'GET',
      path: `${base}/:surveyId`,
      doc: {
        summary: 'Read a survey',
        auth: 'apiKey',
        replies: { 200: data(SurveyRecord, 'The survey') },
        errors: [400, 404, 503],
      },
      handler: async (request) => {
        const { em, survey } = await accessibleSurvey(ctx, request);
        return { status: 200, body: { data: (await surveyRecords(em, [survey]))[0] } };
      },
    },
    {
      method: 'POST',
      path: base,
      doc: {
        summary: 'Create a survey: `blocks`, or legacy `questions` (stored as one block each)',
        auth: 'apiKey',
        body: CreateBody.Type(),
        replies: { 201: data(SurveyRecord, 'The survey created') },
        errors: [400, 503],
      },
      handler: async (request) => {
        const grant = await authenticate(request, ctx.keys);
        const body = validateBody(CreateBody, parseJsonBody(request.body));
        requireAccess(grant, body.environmentId, 'write');
        checkDefinition(body);
        if (!body.blocks && !body.questions) throw invalidInput({ blocks: 'Required' });
        const em = ctx.orm.em.fork();
        const survey = await createSurvey(em, {
          ...body,
          widget: widgetFieldsOf(body),
          segment: segmentInput(body.segment),
        });
        forgetEnvironmentCaches(ctx, body.environmentId);
        return { status: 201, body: { data: (await surveyRecords(em, [survey]))[0] } };
      },
    },
    {
      method: 'PUT',
      path: `${base}/:surveyId`,
      doc: {
        summary: 'Change the fields sent of a survey',
        auth: 'apiKey',
        body: UpdateBody.Type(),
        replies: { 200: data(SurveyRecord, 'The survey changed') },
        errors: [400, 404, 503],
      },
      handler: async (request) => {
        const { em, survey } = await accessibleSurvey(ctx, request);
        const body = validateBody(UpdateBody, parseJsonBody(request.body));
        if (body.environmentId !== undefined && body.environmentId !== survey.environment.id) {
          throw invalidInput({ environmentId: 'A survey cannot move to another environment' });
        }
        checkDefinition(body);
        const updated = await updateSurvey(em, survey, {
          name: body.name,
          type: body.type,
          status: body.status,
          blocks: body.blocks,
          questions: body.questions,
          endings: body.endings,
          quotas: body.quotas,
          isCaptureIpEnabled: body.isCaptureIpEnabled,
          widget: widgetFieldsOf(body),
          segment: segmentInput(body.segment),
        });
        forgetEnvironmentCaches(ctx, survey.environment.id, survey.id);
        return { status: 200, body: { data: (await surveyRecords(em, [updated]))[0] } };
      },
    },
    {
      method: 'DELETE',
      path: `${base}/:surveyId`,
      doc: {
        summary: 'Delete a survey (its responses stay)',
        auth: 'apiKey',
        replies: { 200: data(SurveyRecord, 'The survey deleted') },
        errors: [400, 404, 503],
      },
      handler: async (request) => {
        const { em, survey } = await accessibleSurvey(ctx, request);
        const [record] = await surveyRecords(em, [survey]);
        // Its responses stay: they reference the survey by id, not by a foreign key. Its private
        // segment goes with it.
        await deleteSurvey(em, survey);
        forgetEnvironmentCaches(ctx, survey.environment.id, survey.id);
        return { status: 200, body: { data: record } };
      },
    },
  ];
}

/** The survey of the path, if the key may act on its environment (GET read, PUT write, DELETE manage). */
async function accessibleSurvey(ctx: ManagementContext, request: RouteRequest) {
  const grant = await authenticate(request, ctx.keys);
  const id = requireId('surveyId', request.params.surveyId);
  const em = ctx.orm.em.fork();
  const survey = await em.findOne(Survey, { id });
  if (!survey) throw notFound('Survey', id);
  requireAccess(grant, survey.environment.id, permissionFor(request.method));
  return { em, survey };
}

/**
 * Rules the schema cannot state: one format at a time, at most DEFINITION_LIMITS.questions
 * questions in all, and question ids unique in the survey.
 */
function checkDefinition(body: { blocks?: Block[]; questions?: Element[] }): void {
  if (body.blocks && body.questions) {
    throw new ChorusError('invalid_input', 'Cannot provide both questions and blocks.');
  }
  const ids = questionsOf({ blocks: body.blocks ?? [], questions: body.questions }).map((q) => q.id);
  if (ids.length > DEFINITION_LIMITS.questions)
    throw invalidInput({ questions: `A survey has at most ${DEFINITION_LIMITS.questions} questions` });
  const seen = new Set<string>();
  const duplicates = new Set(ids.filter((id) => seen.size === seen.add(id).size));
  if (duplicates.size > 0)
    throw invalidInput({ questions: `Duplicate question ids: ${[...duplicates].join(', ')}` });
}

/** A body's `segment` as the store takes it: its filters checked, named by their path. */
function segmentInput(
  segment:
    | { id?: string; title?: string; description?: string | null; filters?: unknown[]; surveys?: string[] }
    | null
    | undefined,
): SurveySegmentInput | null | undefined {
  if (!segment) return segment;
  return {
    id: segment.id,
    title: segment.title,
    description: segment.description,
    filters: segment.filters === undefined ? undefined : parseFilters(segment.filters, 'segment.filters'),
    surveys: segment.surveys,
  };
}
