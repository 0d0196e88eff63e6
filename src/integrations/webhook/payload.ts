// What a webhook receives, as Formbricks sends it: `{webhookId, event, data}`, `data` being the
// response after the change, and `event` the trigger (`responseCreated`, `responseUpdated`,
// `responseFinished`) that a fact of the public `response-events` topic fired
// (store/delivery-targets.ts). Pure.
import type { WebhookTrigger } from '../../store/entities.ts';

/**
 * The body of one delivery, the same bytes on every attempt (the signature covers them). `response`
 * is the response as its `response-events` fact carries it (ids, answers, ttc, meta, dates as ISO strings).
 */
export function webhookBody(input: {
  webhookId: string;
  event: WebhookTrigger;
  response: Readonly<Record<string, unknown>>;
}): string {
  return JSON.stringify({ webhookId: input.webhookId, event: input.event, data: input.response });
}
