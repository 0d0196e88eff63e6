// The providers Chorus delivers to, as the descriptors their folders export: the one list the rest
// of the code reads them from. The process's destinations are built once from config (only the
// configured providers), and the routes name each provider's link targets after its descriptor.
import type { Config, Provider } from '../config.ts';
import type { Destinations, ProviderDescriptor } from './destination.ts';
import { notionProvider } from './notion/destination.ts';
import { slackProvider } from './slack/destination.ts';

/** One entry per provider of config.ts's PROVIDERS, under its name: the type refuses a missing one. */
export const PROVIDER_DESCRIPTORS: { readonly [P in Provider]: ProviderDescriptor<P> } = {
  slack: slackProvider,
  notion: notionProvider,
};

const descriptors: readonly ProviderDescriptor[] = Object.values(PROVIDER_DESCRIPTORS);

export function createDestinations(config: Config['integrations']): Destinations {
  const destinations: Destinations = {};
  for (const provider of descriptors) {
    const destination = provider.createDestination(config);
    if (destination) destinations[provider.name] = destination;
  }
  return destinations;
}

/** Where the targets a link can choose from are listed under an integration of each provider. */
export const LINK_TARGETS: Readonly<Record<Provider, string>> = Object.fromEntries(
  descriptors.map((d) => [d.name, d.linkTargets]),
) as Record<Provider, string>;
