// Surveys as the store keeps them, and the snapshot the edge and the processors act on.
import type { EntityManager } from '@mikro-orm/postgresql';
import { pageOf, type PageRequest } from './pages.ts';
import { newId } from '../ids.ts';
import { questionsOf, type Block, type Element, type Ending, type Quota } from '../surveys/definition.ts';
import { blocksFromQuestions, legacyQuestions } from '../surveys/blocks.ts';
import { hasLogicJumps } from '../surveys/logic.ts';
import { Environment, Survey, type SurveyStatus } from './entities.ts';

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
}

export async function createSurvey(em: EntityManager, input: NewSurvey): Promise<Survey> {
  const survey = em.create(Survey, {
    id: newId('srv'),
    environment: em.getReference(Environment, input.environmentId),
    name: input.name ?? 'Untitled survey',
    type: input.type ?? 'link',
    status: input.status ?? 'draft',
    blocks: input.blocks ?? blocksFromQuestions(input.questions ?? []),
    endings: input.endings ?? [],
    quotas: input.quotas ?? [],
    isCaptureIpEnabled: input.isCaptureIpEnabled ?? false,
    widget: input.widget && Object.keys(input.widget).length > 0 ? input.widget : null,
  });
  await em.flush();
  return survey;
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

/**
 * The surveys among `surveyIds` that have quotas, with their quotas and the questions their
 * conditions name choices of, read in the caller's transaction in one round trip (a survey without
 * quotas sends neither, however large its blocks).
 */
export async function findSurveyQuotas(
  tx: EntityManager,
  surveyIds: readonly string[],
): Promise<{ surveyId: string; quotas: Quota[]; questions: Element[] }[]> {
  if (surveyIds.length === 0) return [];
  const rows = await tx.execute<{ id: string; quotas: Quota[]; blocks: unknown[] }[]>(
    `select id, quotas, blocks from surveys where id in (${surveyIds.map(() => '?').join(', ')}) and quotas <> '[]'::jsonb`,
    [...surveyIds],
  );
  return rows.map((s) => ({
    surveyId: s.id,
    quotas: s.quotas,
    questions: questionsOf({ blocks: s.blocks }),
  }));
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
export function surveyRecord(survey: Survey) {
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
  };
}

export type SurveyChanges = Omit<NewSurvey, 'environmentId'>;

/** Changes only the fields given; legacy `questions` replace the blocks. */
export async function updateSurvey(
  em: EntityManager,
  survey: Survey,
  changes: SurveyChanges,
): Promise<Survey> {
  const { questions, widget, ...fields } = changes;
  em.assign(survey, {
    ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)),
    ...(questions ? { blocks: blocksFromQuestions(questions) } : {}),
    // A new object, so the ORM sees the JSON change.
    ...(widget && Object.keys(widget).length > 0 ? { widget: { ...survey.widget, ...widget } } : {}),
    updatedAt: new Date(),
  });
  await em.flush();
  return survey;
}

export function listSurveys(em: EntityManager, environmentIds: string[], page: PageRequest) {
  return pageOf(em, Survey, { environment: { $in: environmentIds } }, page, surveyRecord, {
    total: { counted: 'surveys', environmentIds },
  });
}
