// The stored records the widget's environment state is built from (surveys/widget-state.ts), read
// once per cache miss of an edge, and the environment's widget settings.
import type { EntityManager } from '@mikro-orm/postgresql';
import { MAX_STATE_SURVEYS, type EnvironmentStateInput } from '../surveys/widget-state.ts';
import { ActionClass, Environment, Segment, Survey } from './entities.ts';
import { interactionRefreshOf } from '../segments/interaction-refresh.ts';
import { hasFilters } from '../segments/evaluate.ts';

/** What the state of `environmentId` is built from; undefined for an unknown environment. */
export async function findEnvironmentStateInput(
  em: EntityManager,
  environmentId: string,
): Promise<EnvironmentStateInput | undefined> {
  const fork = em.fork();
  const environment = await fork.findOne(Environment, { id: environmentId });
  if (!environment) return undefined;
  const [surveys, actionClasses, segments] = await Promise.all([
    fork.find(
      Survey,
      { environment: environmentId, type: 'app', status: 'inProgress' },
      { orderBy: { createdAt: 'desc', id: 'desc' }, limit: MAX_STATE_SURVEYS, populate: ['segment'] },
    ),
    fork.find(ActionClass, { environment: environmentId }, { orderBy: { createdAt: 'asc', id: 'asc' } }),
    // The segments the delivered surveys' segments may nest.
    fork.find(Segment, { environment: environmentId }, { fields: ['id', 'filters'] }),
  ]);
  const filtersOf = new Map(segments.map((s) => [s.id, s.filters]));
  const refresh = interactionRefreshOf(
    surveys.map((s) => ({ id: s.id, filters: s.segment?.filters ?? null })),
    (id) => filtersOf.get(id),
  );
  return {
    environmentId,
    settings: environment.widgetSettings ?? null,
    surveys: surveys.map((s) => ({
      id: s.id,
      type: s.type,
      status: s.status,
      blocks: s.blocks,
      endings: s.endings,
      widget: s.widget ?? null,
      segment: s.segment ? { id: s.segment.id, hasFilters: hasFilters(s.segment) } : null,
      ...(refresh ? { interactionRefresh: refresh.get(s.id)! } : {}),
      createdAt: s.createdAt,
    })),
    actionClasses: actionClasses.map((a) => ({
      id: a.id,
      name: a.name,
      type: a.type,
      key: a.key ?? null,
      noCodeConfig: a.noCodeConfig ?? null,
    })),
  };
}

/** The widget settings stored for an environment ({} when none); undefined for an unknown one. */
export async function findWidgetSettings(
  em: EntityManager,
  environmentId: string,
): Promise<Record<string, unknown> | undefined> {
  const environment = await em.fork().findOne(Environment, { id: environmentId });
  return environment ? (environment.widgetSettings ?? {}) : undefined;
}

/** Merges `changes` into the stored settings in one statement (no lost update between two PUTs). */
export async function updateWidgetSettings(
  em: EntityManager,
  environmentId: string,
  changes: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  const rows = await em.fork().execute<{ widget_settings: Record<string, unknown> }[]>(
    `update environments set widget_settings = coalesce(widget_settings, '{}'::jsonb) || ?::jsonb, updated_at = now()
       where id = ? returning widget_settings`,
    [JSON.stringify(changes), environmentId],
  );
  return rows[0]?.widget_settings;
}
