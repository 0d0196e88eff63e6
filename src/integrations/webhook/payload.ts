// What a webhook receives, as Formbricks sends it: `{webhookId, event, data}`, `data` being the
// response after the change, and `event` the trigger (`responseCreated`, `responseUpdated`,
// `responseFinished`), one per fact of the public `response-events` topic. Pure.
import type { WebhookTrigger } from '../../store/entities.ts';

const TRIGGER_OF_FACT: ReadonlyMap<string, WebhookTrigger> = new Map([
  ['response.created', 'responseCreated'],
  ['response.updated', 'responseUpdated'],
  ['response.finished', 'responseFinished'],
]);

/** The trigger a response fact fires, if any (a fact type this version does not know fires none). */
export function triggerOf(factType: string): WebhookTrigger | undefined {
  return TRIGGER_OF_FACT.get(factType);
}

/**
 * The body of one delivery, the same bytes on every attempt (the signature covers them). `response`
 * is the response as `response-events` carried it (ids, answers, ttc, meta, dates as ISO strings).
 */
export function webhookBody(input: {
  webhookId: string;
  event: WebhookTrigger;
  response: Readonly<Record<string, unknown>>;
}): string {
  return JSON.stringify({ webhookId: input.webhookId, event: input.event, data: input.response });
}
