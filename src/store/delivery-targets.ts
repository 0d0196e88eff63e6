// Where the changes of responses are delivered: a finished response to every link of its survey
// (Slack, Notion), and every change (created, updated, finished) to every webhook of its
// environment that the change fires. The response processor asks once per batch, in the
// transaction that applies it, and records the deliveries there (processors/responses/
// enqueue-deliveries.ts).
import type { ResponseChangeFact } from '../events/response-events.ts';
import type { WebhookTrigger } from './entities.ts';
import type { SurveyLink } from './integrations.ts';
import { query, type EntityManager } from './orm.ts';

export interface FiredWebhook {
  id: string;
  environmentId: string;
  triggers: WebhookTrigger[];
  /** Empty: every survey of the environment. */
  surveyIds: string[];
}

export interface DeliveryTargets {
  links: SurveyLink[];
  webhooks: FiredWebhook[];
}

const NO_TARGETS: DeliveryTargets = Object.freeze({ links: [], webhooks: [] });

// One statement for both: a round trip per batch, whose answer is almost always empty (most surveys
// have no link, most environments no webhook). Its text is constant and its lists are parameters.
const TARGETS = `select 'link' as kind, id, survey_id, integration_id,
    null::varchar as environment_id, null::jsonb as triggers, null::jsonb as survey_ids
  from integration_links where survey_id = any(?)
  union all
  select 'webhook', id, null, null, environment_id, triggers, survey_ids
  from webhooks where environment_id = any(?)`;

interface TargetRow {
  kind: 'link' | 'webhook';
  id: string;
  survey_id: string | null;
  integration_id: string | null;
  environment_id: string | null;
  triggers: WebhookTrigger[] | null;
  survey_ids: string[] | null;
}

/**
 * The links of the surveys `linkedSurveys` and the webhooks of the environments `environments`.
 * Nothing is asked when both lists are empty.
 */
export async function deliveryTargets(
  tx: EntityManager,
  ask: { linkedSurveys: readonly string[]; environments: readonly string[] },
): Promise<DeliveryTargets> {
  if (ask.linkedSurveys.length === 0 && ask.environments.length === 0) return NO_TARGETS;
  const rows = await query<TargetRow>(tx, TARGETS, [[...ask.linkedSurveys], [...ask.environments]]);
  const targets: DeliveryTargets = { links: [], webhooks: [] };
  for (const row of rows) {
    if (row.kind === 'link')
      targets.links.push({ id: row.id, surveyId: row.survey_id!, integrationId: row.integration_id! });
    else
      targets.webhooks.push({
        id: row.id,
        environmentId: row.environment_id!,
        triggers: row.triggers!,
        surveyIds: row.survey_ids!,
      });
  }
  return targets;
}

const TRIGGER_OF_FACT: Readonly<Record<ResponseChangeFact['type'], WebhookTrigger>> = {
  'response.created': 'responseCreated',
  'response.updated': 'responseUpdated',
  'response.finished': 'responseFinished',
};

/** The webhook trigger a response fact fires, by Formbricks' names. */
export function triggerOf(factType: ResponseChangeFact['type']): WebhookTrigger {
  return TRIGGER_OF_FACT[factType];
}

/** Whether a change of a response of `surveyId` in `environmentId` by `trigger` goes to `webhook`. */
export function fires(
  webhook: FiredWebhook,
  fact: { environmentId: string; surveyId: string; trigger: WebhookTrigger },
): boolean {
  return (
    webhook.environmentId === fact.environmentId &&
    webhook.triggers.includes(fact.trigger) &&
    (webhook.surveyIds.length === 0 || webhook.surveyIds.includes(fact.surveyId))
  );
}
