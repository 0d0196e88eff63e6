// Segments as the management API reads and writes them (docs/segments.md). Every write that
// changes filters recomputes the environment's stored membership in its own transaction
// (segment-members.ts), so the user route never reads membership older than the definitions.
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ChorusError, invalidInput } from '../errors.ts';
import { newId } from '../ids.ts';
import { MAX_NESTING } from '../segments/evaluate.ts';
import { leavesOf, type Filters, type InteractionLeaf } from '../segments/filters.ts';
import { Environment, Segment, Survey } from './entities.ts';
import { lockSegments, refreshEnvironmentMembership } from './segment-members.ts';
import type { PageRequest } from './pages.ts';

/** A segment in Formbricks' API shape: `surveys` are the ids of the surveys that use it. */
export interface SegmentRecord {
  id: string;
  createdAt: string;
  updatedAt: string;
  environmentId: string;
  title: string;
  description: string | null;
  isPrivate: boolean;
  filters: Filters;
  surveys: string[];
}

export function segmentRecord(row: Segment, surveys: readonly string[]): SegmentRecord {
  return {
    id: row.id,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    environmentId: row.environment.id,
    title: row.title,
    description: row.description ?? null,
    isPrivate: row.isPrivate,
    filters: row.filters,
    surveys: [...surveys],
  };
}

/** The ids of the surveys using each of `segmentIds`, in id order. */
export async function surveysOfSegments(
  em: EntityManager,
  segmentIds: readonly string[],
): Promise<Map<string, string[]>> {
  const bySegment = new Map<string, string[]>(segmentIds.map((id) => [id, []]));
  if (segmentIds.length === 0) return bySegment;
  const rows = await em.execute<{ id: string; segment_id: string }[]>(
    `select id, segment_id from surveys where segment_id in (${segmentIds.map(() => '?').join(', ')}) order by id`,
    [...segmentIds],
  );
  for (const row of rows) bySegment.get(row.segment_id)?.push(row.id);
  return bySegment;
}

export async function recordsOf(em: EntityManager, rows: readonly Segment[]): Promise<SegmentRecord[]> {
  const surveys = await surveysOfSegments(
    em,
    rows.map((r) => r.id),
  );
  return rows.map((row) => segmentRecord(row, surveys.get(row.id) ?? []));
}

/** The public segments of `environmentIds`, in id order (private ones are read through their survey). */
export async function listPublicSegments(em: EntityManager, environmentIds: string[], page: PageRequest) {
  const fork = em.fork();
  const [rows, total] = await fork.findAndCount(
    Segment,
    { environment: { $in: environmentIds }, isPrivate: false },
    { orderBy: { id: 'asc' }, limit: page.limit, offset: page.offset },
  );
  return { items: await recordsOf(fork, rows), total };
}

export interface SegmentInput {
  environmentId: string;
  title: string;
  description?: string | null;
  filters: Filters;
  /** Surveys to point at the segment (their private segments go). */
  surveys?: string[];
}

/**
 * Checks what the filters name against the environment: nested segments exist there, are public,
 * do not lead back to `selfId` (directly or through others) nor nest deeper than MAX_NESTING, and
 * `specific` interaction surveys are its. Holds the environment's segment lock, exclusive, from
 * then on: call it in the transaction that writes the filters.
 */
export async function checkFilterReferences(
  em: EntityManager,
  environmentId: string,
  filters: Filters,
  selfId?: string,
): Promise<void> {
  // Taken before anything is read, for the rest of the write's transaction: two writes that each
  // nest the other's segment would otherwise both pass the cycle check.
  await lockSegments(em, [environmentId], 'exclusive');
  const problems: Record<string, string> = {};
  const rows = await em.execute<{ id: string; filters: Filters; is_private: boolean }[]>(
    'select id, filters, is_private from segments where environment_id = ?',
    [environmentId],
  );
  const segments = new Map(rows.map((s) => [s.id, s.filters]));
  const privateIds = new Set(rows.filter((s) => s.is_private).map((s) => s.id));
  const surveyIds = new Set(
    (
      await em.execute<{ id: string }[]>('select id from surveys where environment_id = ?', [environmentId])
    ).map((s) => s.id),
  );
  const leaves = [...leavesOf(filters)];
  // The deepest chain once these filters are written: one that runs through this segment counts
  // the segments nesting it too.
  const after = new Map(segments);
  if (selfId) after.set(selfId, filters);
  const depthOf = nestingDepths(after);
  const depth = Math.max(depthOf(filters), ...[...after.values()].map(depthOf));
  if (depth > MAX_NESTING)
    problems.filters = `Segments may nest at most ${MAX_NESTING} deep; these filters reach ${depth} levels`;
  for (const leaf of leaves) {
    if (leaf.root.type === 'segment') {
      const id = leaf.root.segmentId;
      if (id === selfId) problems.filters = `A segment cannot contain itself (${id})`;
      else if (!segments.has(id)) problems.filters = `Segment ${id} is not in the environment`;
      // A survey's private segment goes with its survey: only public ones are nested (as Formbricks' picker offers).
      else if (privateIds.has(id))
        problems.filters = `Segment ${id} is a survey's private segment: nest public segments`;
      else if (selfId && reaches(segments, id, selfId))
        problems.filters = `Segment ${id} contains this segment: the filters would form a cycle`;
    } else if (leaf.root.type === 'surveyInteraction') {
      const { surveyScope, surveyIds: named } = (leaf as InteractionLeaf).value;
      const unknown = surveyScope === 'specific' ? named.filter((id) => !surveyIds.has(id)) : [];
      if (unknown.length > 0) problems.filters = `Surveys not in the environment: ${unknown.join(', ')}`;
    }
  }
  if (Object.keys(problems).length > 0) throw invalidInput(problems, 'Invalid segment filters');
}

/**
 * How many segments deep a filter tree reaches, itself counted, against `segments` (each segment
 * measured once across calls; cycle-guarded).
 */
function nestingDepths(segments: ReadonlyMap<string, Filters>): (filters: Filters) => number {
  const depths = new Map<string, number>();
  const depthOf = (items: Filters): number => {
    let deepest = 0;
    for (const leaf of leavesOf(items)) {
      if (leaf.root.type !== 'segment') continue;
      const id = leaf.root.segmentId;
      let depth = depths.get(id);
      if (depth === undefined) {
        depths.set(id, 0); // while it is being measured: a cycle adds nothing
        depth = depthOf(segments.get(id) ?? []);
        depths.set(id, depth);
      }
      deepest = Math.max(deepest, depth);
    }
    return deepest + 1;
  };
  return depthOf;
}

/** Whether segment `from` names `target` through its filters, at any depth (cycle-guarded). */
function reaches(segments: ReadonlyMap<string, Filters>, from: string, target: string): boolean {
  const seen = new Set<string>();
  const stack = [from];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    seen.add(id);
    for (const leaf of leavesOf(segments.get(id) ?? [])) {
      if (leaf.root.type !== 'segment') continue;
      if (leaf.root.segmentId === target) return true;
      stack.push(leaf.root.segmentId);
    }
  }
  return false;
}

/** Surveys of the environment to point at a segment: app surveys of it only (400 otherwise). */
export async function attachSurveys(
  tx: EntityManager,
  segment: Segment,
  surveyIds: readonly string[],
): Promise<void> {
  if (surveyIds.length === 0) return;
  const surveys = await tx.find(Survey, { id: { $in: [...surveyIds] } });
  const bad = surveyIds.filter(
    (id) =>
      !surveys.some((s) => s.id === id && s.environment.id === segment.environment.id && s.type === 'app'),
  );
  if (bad.length > 0)
    throw invalidInput({ surveys: `Not app surveys of the segment's environment: ${bad.join(', ')}` });
  for (const survey of surveys) await pointSurveyAt(tx, survey, segment);
}

/**
 * Points `survey` at `segment`; its former private segment goes (it belonged to the survey alone).
 * A public one it leaves stays, shared.
 */
export async function pointSurveyAt(
  tx: EntityManager,
  survey: Survey,
  segment: Segment | null,
): Promise<void> {
  const before = survey.segment ? await tx.findOne(Segment, { id: survey.segment.id }) : null;
  if (before?.id === segment?.id) return;
  survey.segment = segment;
  survey.updatedAt = new Date();
  await tx.flush();
  if (before?.isPrivate) {
    tx.remove(before);
    await tx.flush();
  }
}

/** A segment title already used in the environment (a unique index) as a 409. */
export function conflictOnTitle(error: unknown, title: string): never {
  if (error instanceof UniqueConstraintViolationException)
    throw new ChorusError('conflict', 'A segment with this title already exists', { title });
  throw error;
}

export async function createSegment(em: EntityManager, input: SegmentInput): Promise<SegmentRecord> {
  return em.fork().transactional(async (tx) => {
    await checkFilterReferences(tx, input.environmentId, input.filters);
    const row = tx.create(Segment, {
      id: newId('seg'),
      environment: tx.getReference(Environment, input.environmentId),
      title: input.title,
      description: input.description ?? null,
      isPrivate: false,
      filters: input.filters,
    });
    await tx.flush().catch((e: unknown) => conflictOnTitle(e, input.title));
    await attachSurveys(tx, row, input.surveys ?? []);
    await refreshEnvironmentMembership(tx, input.environmentId);
    return (await recordsOf(tx, [row]))[0]!;
  });
}

export interface SegmentChanges {
  title?: string;
  description?: string | null;
  filters?: Filters;
  surveys?: string[];
}

/** Changes the fields given; `surveys` only adds surveys (as Formbricks' update connects them). */
export async function updateSegment(em: EntityManager, id: string, changes: SegmentChanges) {
  return em.fork().transactional(async (tx) => {
    const row = await tx.findOneOrFail(Segment, { id });
    if (changes.filters) await checkFilterReferences(tx, row.environment.id, changes.filters, row.id);
    tx.assign(row, {
      ...(changes.title !== undefined ? { title: changes.title } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(changes.filters !== undefined ? { filters: changes.filters } : {}),
      updatedAt: new Date(),
    });
    await tx.flush().catch((e: unknown) => conflictOnTitle(e, changes.title ?? row.title));
    await attachSurveys(tx, row, changes.surveys ?? []);
    if (changes.filters) await refreshEnvironmentMembership(tx, row.environment.id);
    return (await recordsOf(tx, [row]))[0]!;
  });
}

/** Deletes a segment no survey uses (409 otherwise). Segments nesting it then ignore that filter. */
export async function deleteSegment(em: EntityManager, id: string): Promise<SegmentRecord> {
  return em.fork().transactional(async (tx) => {
    const row = await tx.findOneOrFail(Segment, { id });
    const [record] = await recordsOf(tx, [row]);
    if (record!.surveys.length > 0)
      throw new ChorusError('conflict', 'Cannot delete a segment that is associated with a survey', {
        surveys: record!.surveys,
      });
    tx.remove(row);
    await tx.flush();
    // Its rows went with it; segments that nested it evaluate differently now.
    await refreshEnvironmentMembership(tx, row.environment.id);
    return record!;
  });
}

/** The id of a survey's private segment: derived, so the widget's segment id never changes. */
export function privateSegmentIdOf(surveyId: string): string {
  return `seg_${surveyId}`;
}
