// Surveys as the store keeps them, and the snapshot the edge and the processors act on.
import type { EntityManager } from '@mikro-orm/postgresql';
import { pageOf, type PageRequest } from './pages.ts';
import { newId } from '../ids.ts';
import { questionsOf, type Block, type Element, type Ending, type Quota } from '../surveys/definition.ts';
import { blocksFromQuestions, legacyQuestions } from '../surveys/blocks.ts';
import { hasLogicJumps } from '../surveys/logic.ts';
import { Environment, Segment, Survey, type SurveyStatus } from './entities.ts';
import { invalidInput, notFound } from '../errors.ts';
import type { Filters } from '../segments/filters.ts';
import { countedShape, surveyShape, type SurveyShape } from '../summaries/survey-shape.ts';
import { query } from './orm.ts';
import { lockSummaries } from './locks.ts';
import { requestRecount } from './summary-counts.ts';
import {
  attachSurveys,
  checkFilterReferences,
  conflictOnTitle,
  pointSurveyAt,
  privateSegmentIdOf,
  recordsOf,
  type SegmentRecord,
} from './segments.ts';
import { refreshEnvironmentMembership } from './segment-members.ts';

export interface SurveySnapshot {
  id: string;
  environmentId: string;
  status: SurveyStatus;
  questions: Element[];
  endingIds: string[];
  quotas: Quota[];
  /** Quotas whose count has reached their limit. */
  fullQuotaIds: string[];
  isCaptureIpEnabled: boolean;
  /** Its blocks carry logic jumps: a finished response may skip required questions (surveys/logic.ts). */
  hasLogic: boolean;
}

export interface NewSurvey {
  environmentId: string;
  name?: string;
  type?: string;
  status?: SurveyStatus;
  blocks?: Block[];
  questions?: Element[];
  endings?: Ending[];
  quotas?: Quota[];
  isCaptureIpEnabled?: boolean;
  /** The widget's fields (surveys/widget-fields.ts), as stored; on update, merged into the stored ones. */
  widget?: Record<string, unknown>;
  /** Its targeting (docs/segments.md, "A survey's segment"); only app surveys have one. */
  segment?: SurveySegmentInput | null;
}

/**
 * A survey's `segment` as a create or update sends it: Formbricks' segment object. `id` names the
 * segment to use (the survey's own private one when left out); the other fields sent are written
 * to that segment (`title` and `description` only to a public one), and `surveys` are pointed at
 * it too.
 */
export interface SurveySegmentInput {
  id?: string;
  title?: string;
  description?: string | null;
  filters?: Filters;
  surveys?: string[];
}

export async function createSurvey(em: EntityManager, input: NewSurvey): Promise<Survey> {
  return em.transactional(async (tx) => {
    const survey = tx.create(Survey, {
      id: newId('srv'),
      environment: tx.getReference(Environment, input.environmentId),
      name: input.name ?? 'Untitled survey',
      type: input.type ?? 'link',
      status: input.status ?? 'draft',
      blocks: input.blocks ?? blocksFromQuestions(input.questions ?? []),
      endings: input.endings ?? [],
      quotas: input.quotas ?? [],
      isCaptureIpEnabled: input.isCaptureIpEnabled ?? false,
      widget: input.widget && Object.keys(input.widget).length > 0 ? input.widget : null,
    });
    // An app survey always starts on a new private segment, with the filters sent (Formbricks
    // ignores a `segment.id` here too).
    if (survey.type === 'app') {
      const filters = input.segment?.filters ?? [];
      if (filters.length > 0) await checkFilterReferences(tx, input.environmentId, filters);
      survey.segment = tx.create(Segment, {
        id: privateSegmentIdOf(survey.id),
        environment: tx.getReference(Environment, input.environmentId),
        title: survey.id,
        description: null,
        isPrivate: true,
        filters,
      });
      await tx.flush();
      if (filters.length > 0) await refreshEnvironmentMembership(tx, input.environmentId);
    }
    await tx.flush();
    return survey;
  });
}

export async function findSurveySnapshot(em: EntityManager, id: string): Promise<SurveySnapshot | undefined> {
  const fork = em.fork();
  const survey = await fork.findOne(Survey, { id });
  if (!survey) return undefined;
  const quotas = survey.quotas as Quota[];
  return {
    id: survey.id,
    environmentId: survey.environment.id,
    status: survey.status,
    questions: questionsOf({ blocks: survey.blocks }),
    endingIds: (survey.endings as Ending[]).map((e) => e.id),
    quotas,
    fullQuotaIds: quotas.length === 0 ? [] : await fullQuotas(fork, survey.id, quotas),
    isCaptureIpEnabled: survey.isCaptureIpEnabled,
    hasLogic: hasLogicJumps(survey.blocks as Block[]),
  };
}

/** What the response processor reads of a survey for a batch: its quotas, and its summary's shape. */
export interface BatchSurvey {
  quotas: Quota[];
  /** The questions the quota conditions name choices of. */
  questions: Element[];
  shape: SurveyShape;
}

/**
 * The surveys among `surveyIds` that still exist, by id, read in the caller's transaction in one
 * round trip: what quota counting (processors/responses/count-quotas.ts) and the summaries
 * (summary-counts.ts) need of each. Read under their summaries' shared lock (locks.ts): a recount
 * after an edit waits for the transaction to end before it reads.
 */
export async function findBatchSurveys(
  tx: EntityManager,
  surveyIds: readonly string[],
): Promise<Map<string, BatchSurvey>> {
  if (surveyIds.length === 0) return new Map();
  // Its own statement: a statement that waited for the lock would still read from before the wait.
  await lockSummaries(tx, surveyIds, 'shared');
  const rows = await query<{ id: string; quotas: Quota[]; blocks: unknown[]; hidden_fields: unknown }>(
    tx,
    `select id, quotas, blocks, widget->'hiddenFields' as hidden_fields from surveys where id = any(?)`,
    [surveyIds],
  );
  return new Map(
    rows.map((row) => [
      row.id,
      {
        quotas: row.quotas,
        questions: questionsOf({ blocks: row.blocks }),
        shape: surveyShape({ blocks: row.blocks, widget: { hiddenFields: row.hidden_fields } }),
      },
    ]),
  );
}

/** Ids of the survey's quotas that have reached their limit. */
export async function fullQuotas(
  em: EntityManager,
  surveyId: string,
  quotas: readonly Quota[],
): Promise<string[]> {
  const counts = await em.execute<{ quota_id: string; members: string }[]>(
    'select quota_id, count(*) as members from quota_members where survey_id = ? group by quota_id',
    [surveyId],
  );
  const byId = new Map(counts.map((c) => [c.quota_id, Number(c.members)]));
  return quotas.filter((q) => (byId.get(q.id) ?? 0) >= q.limit).map((q) => q.id);
}

/** Pauses a survey in progress (a quota with the action `endSurvey` filled), in the caller's transaction. */
export async function pauseSurvey(tx: EntityManager, surveyId: string): Promise<void> {
  await tx.execute(
    `update surveys set status = 'paused', updated_at = now() where id = ? and status = 'inProgress'`,
    [surveyId],
  );
}

/**
 * A survey as the management API shows it: `questions` too when every block holds one element, and
 * the widget fields that were stored.
 */
export function surveyRecord(survey: Survey, segment: SegmentRecord | null = null) {
  const blocks = survey.blocks as Block[];
  const questions = legacyQuestions(blocks);
  return {
    id: survey.id,
    createdAt: survey.createdAt.toISOString(),
    updatedAt: survey.updatedAt.toISOString(),
    environmentId: survey.environment.id,
    name: survey.name,
    type: survey.type,
    status: survey.status,
    blocks,
    ...(questions ? { questions } : {}),
    endings: survey.endings,
    quotas: survey.quotas,
    isCaptureIpEnabled: survey.isCaptureIpEnabled,
    ...survey.widget,
    segment,
  };
}

/** The management records of `surveys`, each with its segment (one read for all). */
export async function surveyRecords(em: EntityManager, surveys: readonly Survey[]) {
  const ids = [...new Set(surveys.flatMap((s) => (s.segment ? [s.segment.id] : [])))];
  const rows = ids.length > 0 ? await em.fork().find(Segment, { id: { $in: ids } }) : [];
  const segments = new Map((await recordsOf(em, rows)).map((r) => [r.id, r]));
  return surveys.map((s) => surveyRecord(s, (s.segment && segments.get(s.segment.id)) ?? null));
}

export type SurveyChanges = Omit<NewSurvey, 'environmentId'>;

/** Changes only the fields given; legacy `questions` replace the blocks; `segment` as its type says. */
export async function updateSurvey(
  em: EntityManager,
  survey: Survey,
  changes: SurveyChanges,
): Promise<Survey> {
  const { questions, widget, segment, ...fields } = changes;
  const counted = countedShape(surveyShape(survey));
  return em.transactional(async (tx) => {
    tx.assign(survey, {
      ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)),
      ...(questions ? { blocks: blocksFromQuestions(questions) } : {}),
      // A new object, so the ORM sees the JSON change.
      ...(widget && Object.keys(widget).length > 0 ? { widget: { ...survey.widget, ...widget } } : {}),
      updatedAt: new Date(),
    });
    await tx.flush();
    // What its responses contribute to its summary changed: they are counted again.
    if (countedShape(surveyShape(survey)) !== counted) await requestRecount(tx, survey.id);
    await applySegment(tx, survey, segment);
    return survey;
  });
}

/**
 * A survey's segment after an update (spec §1.2, §4.4): a survey that is not `app` has none (its
 * private segment is deleted, a public one left); an app survey keeps or gets its private one, or
 * is pointed at the segment `segment.id` names, which takes the fields sent.
 */
async function applySegment(tx: EntityManager, survey: Survey, input: SurveySegmentInput | null | undefined) {
  const environmentId = survey.environment.id;
  if (survey.type !== 'app') {
    if (survey.segment) await pointSurveyAt(tx, survey, null);
    return;
  }
  const privateId = privateSegmentIdOf(survey.id);
  const targetId = input?.id ?? survey.segment?.id ?? privateId;
  let target = await tx.findOne(Segment, { id: targetId });
  if (target && target.environment.id !== environmentId) target = null;
  // Another survey's own targeting: it goes when that survey does, and is not this one's to edit.
  if (target?.isPrivate && target.id !== privateId)
    throw invalidInput({ 'segment.id': `${target.id} is the private segment of another survey` });
  if (!target) {
    if (targetId !== privateId) throw notFound('Segment', targetId);
    target = tx.create(Segment, {
      id: privateId,
      environment: tx.getReference(Environment, environmentId),
      title: survey.id,
      description: null,
      isPrivate: true,
      filters: [],
    });
  }
  if (input?.filters !== undefined) await checkFilterReferences(tx, environmentId, input.filters, target.id);
  const changed =
    input?.filters !== undefined && JSON.stringify(input.filters) !== JSON.stringify(target.filters);
  tx.assign(target, {
    ...(input?.filters !== undefined ? { filters: input.filters } : {}),
    ...(!target.isPrivate && input?.title !== undefined ? { title: input.title } : {}),
    ...(!target.isPrivate && input?.description !== undefined ? { description: input.description } : {}),
    ...(input ? { updatedAt: new Date() } : {}),
  });
  await tx.flush().catch((e: unknown) => conflictOnTitle(e, target.title));
  await pointSurveyAt(tx, survey, target);
  await attachSurveys(
    tx,
    target,
    (input?.surveys ?? []).filter((id) => id !== survey.id),
  );
  if (changed) await refreshEnvironmentMembership(tx, environmentId);
}

/** Deletes a survey and its private segment (a public one stays). Its responses stay. */
export async function deleteSurvey(em: EntityManager, survey: Survey): Promise<void> {
  await em.transactional(async (tx) => {
    const segment = survey.segment ? await tx.findOne(Segment, { id: survey.segment.id }) : null;
    tx.remove(survey);
    await tx.flush();
    if (segment?.isPrivate) {
      tx.remove(segment);
      await tx.flush();
      // Segments nesting it (possible through the API) evaluate differently now.
      if (segment.filters.length > 0) await refreshEnvironmentMembership(tx, survey.environment.id);
    }
  });
}

export async function listSurveys(em: EntityManager, environmentIds: string[], page: PageRequest) {
  const { items, total } = await pageOf(
    em,
    Survey,
    { environment: { $in: environmentIds } },
    page,
    (s) => s,
    {
      total: { counted: 'surveys', environmentIds },
    },
  );
  return { items: await surveyRecords(em, items), total };
}
