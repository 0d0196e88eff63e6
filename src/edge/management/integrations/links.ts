// The links of an integration (which survey's finished responses go to which channel or database)
// and its deliveries, through the management API.
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import { notFound } from '../../../errors.ts';
import { ID_PATTERN } from '../../../ids.ts';
import { IntegrationLink, Survey } from '../../../store/entities.ts';
import { createLink, linkRecord } from '../../../store/integrations.ts';
import { questionsOf } from '../../../surveys/definition.ts';
import type { Route, RouteRequest } from '../../router.ts';
import { parseJsonBody, requireId, validateBody } from '../../validation.ts';
import { deliveriesRoute } from '../deliveries.ts';
import { data } from '../../openapi/route-doc.ts';
import { LinkRecord } from '../../openapi/replies.ts';
import {
  accessible,
  INTEGRATIONS_PATH,
  providerCall,
  requireConfigured,
  tokenOf,
  type IntegrationsContext,
} from './context.ts';

const LinkBody = Compile(
  Type.Object({
    surveyId: Type.String({ pattern: ID_PATTERN }),
    targetId: Type.String({ minLength: 1, maxLength: 255 }),
    targetName: Type.Optional(Type.String({ maxLength: 255 })),
    questionIds: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })),
    mapping: Type.Optional(
      Type.Array(
        Type.Object({ questionId: Type.String({ minLength: 1 }), property: Type.String({ minLength: 1 }) }),
        { minItems: 1 },
      ),
    ),
  }),
);

export function linkRoutes(ctx: IntegrationsContext): Route[] {
  const base = INTEGRATIONS_PATH;
  return [
    {
      method: 'GET',
      path: `${base}/:integrationId/links`,
      doc: {
        summary: "An integration's links, in id order",
        auth: 'apiKey',
        replies: { 200: data(Type.Array(LinkRecord), 'Every link of the integration') },
        errors: [400, 404, 503],
      },
      handler: async (r) => {
        const { em, integration } = await accessible(ctx, r);
        const links = await em.find(
          IntegrationLink,
          { integration: integration.id },
          { orderBy: { id: 'asc' } },
        );
        return { status: 200, body: { data: links.map(linkRecord) } };
      },
    },
    {
      method: 'POST',
      path: `${base}/:integrationId/links`,
      doc: {
        summary: "Send a survey's finished responses to a channel (Slack) or a database (Notion)",
        description:
          'Slack takes `questionIds` (every question by default); Notion needs a `mapping` of questions to properties, checked against the database.',
        auth: 'apiKey',
        body: LinkBody.Type(),
        replies: { 201: data(LinkRecord, 'The link created') },
        errors: [400, 404, 503],
      },
      handler: (r) => createLinkRoute(ctx, r),
    },
    {
      method: 'DELETE',
      path: `${base}/:integrationId/links/:linkId`,
      doc: {
        summary: 'Delete a link with its deliveries',
        auth: 'apiKey',
        replies: { 200: data(LinkRecord, 'The link deleted') },
        errors: [400, 404, 503],
      },
      handler: async (r) => {
        const { em, integration } = await accessible(ctx, r);
        const id = requireId('linkId', r.params.linkId);
        const link = await em.findOne(IntegrationLink, { id, integration: integration.id });
        if (!link) throw notFound('IntegrationLink', id);
        const record = linkRecord(link);
        await em.remove(link).flush();
        return { status: 200, body: { data: record } };
      },
    },
    deliveriesRoute({
      path: `${base}/:integrationId/deliveries`,
      summary: "An integration's deliveries, newest first",
      ctx,
      owner: async (r) => ({ integrationId: (await accessible(ctx, r)).integration.id }),
    }),
  ];
}

async function createLinkRoute(ctx: IntegrationsContext, request: RouteRequest) {
  const { em, integration } = await accessible(ctx, request);
  const body = validateBody(LinkBody, parseJsonBody(request.body));
  const survey = await em.findOne(Survey, { id: body.surveyId });
  if (!survey || survey.environment.id !== integration.environment.id)
    throw notFound('Survey', body.surveyId);
  const questions = questionsOf({ blocks: survey.blocks });
  const token = tokenOf(ctx, integration);
  const { api } = requireConfigured(ctx, integration.provider);
  const mapping = await providerCall(() => api.linkMapping(token, questions, body));
  const link = await createLink(ctx.orm.em, {
    integrationId: integration.id,
    surveyId: survey.id,
    targetId: body.targetId,
    targetName: body.targetName,
    mapping,
  });
  return { status: 201, body: { data: linkRecord(link) } };
}
