// Webhooks as a destination: one signed POST per delivery to the webhook's URL. Unlike Slack and
// Notion there is no OAuth, no token and no link: a webhook belongs to an environment, has its own
// signing secret and names the surveys and triggers it wants (store/webhooks.ts), so it is not a
// Provider of config.ts and the deliverer calls it directly (README.md, "Webhooks").
import type { Config } from '../../config.ts';
import { invalidInput } from '../../errors.ts';
import type { WebhookTrigger } from '../../store/entities.ts';
import { postOnce, resolveTarget, UrlRefused } from './http-client.ts';
import { webhookBody } from './payload.ts';
import { signWebhook } from './signature.ts';

export type WebhookConfig = Config['integrations']['webhooks'];

/** One delivery to send: what the row and its webhook hold, the secret decrypted. */
export interface WebhookSend {
  /** The delivery's id: the `webhook-id` of every attempt, which receivers deduplicate on. */
  deliveryId: string;
  webhookId: string;
  url: string;
  secret: string;
  event: WebhookTrigger;
  response: Readonly<Record<string, unknown>>;
}

export interface WebhookDestination {
  /** Refuses (400, `url`) a URL that could not be sent to: its scheme, its host, its addresses. */
  checkUrl(url: string): Promise<void>;
  /** Sends one attempt; resolves to the receiver's status, or throws a ProviderError. */
  send(delivery: WebhookSend, now?: Date): Promise<string>;
}

export function createWebhookDestination(config: WebhookConfig): WebhookDestination {
  return {
    async checkUrl(url) {
      try {
        await resolveTarget(url, config);
      } catch (error) {
        const reason =
          error instanceof UrlRefused
            ? error.message
            : `The host of the URL does not resolve (${String(error)})`;
        throw invalidInput({ url: reason }, 'The webhook URL is refused');
      }
    },
    async send(delivery, now = new Date()) {
      const body = webhookBody(delivery);
      const signed = signWebhook(delivery.secret, { id: delivery.deliveryId, timestamp: now, body });
      const status = await postOnce(delivery.url, body, { ...signed }, config);
      return `HTTP ${status}`;
    },
  };
}
