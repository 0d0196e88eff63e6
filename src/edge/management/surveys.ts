// Management API: surveys. Writes go straight to PostgreSQL; a trigger announces each change, so
// every edge's survey cache drops it at once.
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { ChorusError, invalidInput, notFound } from '../../errors.ts';
import { ID_PATTERN } from '../../ids.ts';
import { Survey, SURVEY_STATUSES } from '../../store/entities.ts';
import { createSurvey, listSurveys, surveyRecord, updateSurvey } from '../../store/surveys.ts';
import { Block, DEFINITION_LIMITS, Element, Ending, Quota } from '../../surveys/definition.ts';
import { questionsOf } from '../../surveys/definition.ts';
import { SurveyWidgetFields, widgetFieldsOf } from '../../surveys/widget-fields.ts';
import type { Route, RouteRequest } from '../router.ts';
import { parseJsonBody, requireId, validateBody } from '../validation.ts';
import { authenticate, permissionFor, requireAccess } from './auth.ts';
import type { ManagementContext } from './context.ts';
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
        const { survey } = await accessibleSurvey(ctx, request);
        return { status: 200, body: { data: surveyRecord(survey) } };
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
        const survey = await createSurvey(ctx.orm.em.fork(), { ...body, widget: widgetFieldsOf(body) });
        ctx.environmentStates?.delete(body.environmentId);
        return { status: 201, body: { data: surveyRecord(survey) } };
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
        });
        // Other edges hear of the change through PostgreSQL; this one forgets it before answering,
        // so the caller's very next request sees it.
        ctx.client.surveys.delete(survey.id);
        ctx.environmentStates?.delete(survey.environment.id);
        return { status: 200, body: { data: surveyRecord(updated) } };
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
        const record = surveyRecord(survey);
        // Its responses stay: they reference the survey by id, not by a foreign key.
        await em.remove(survey).flush();
        ctx.client.surveys.delete(survey.id);
        ctx.environmentStates?.delete(survey.environment.id);
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
