// The registry of providers: the destinations of this process, built once from config (only the
// configured providers), and what the routes name after each provider.
import type { Config } from '../config.ts';
import type { Provider } from '../store/entities.ts';
import type { Destinations } from './destination.ts';
import { notionDestination } from './notion/destination.ts';
import { slackDestination } from './slack/destination.ts';

export function createDestinations(config: Config['integrations']): Destinations {
  const { slack, notion } = config;
  return {
    ...(slack && { slack: slackDestination(slack) }),
    ...(notion && { notion: notionDestination(notion) }),
  };
}

/** Where the targets a link can choose from are listed under an integration of each provider. */
export const LINK_TARGETS: Readonly<Record<Provider, string>> = { slack: 'channels', notion: 'databases' };
