// Where finished responses go: one interface that each provider's folder implements (slack/,
// notion/), so that the OAuth routes, the link routes and the deliverer never ask which provider
// they hold, and a new OAuth destination is one new folder with its descriptor, listed in
// providers.ts (README.md, "A new destination"). Webhooks, which have no OAuth, token or link, are
// sent by the deliverer through webhook/destination.ts instead (README.md, "Webhooks").
import type { Config, Provider } from '../config.ts';
import type { Element } from '../surveys/definition.ts';
import type { ExchangedToken } from './failure.ts';

/** A link's stored mapping: which questions go, and (Notion) into which property of what type. */
export type LinkMapping = { questionId: string; property?: string; propertyType?: string }[];

/** What a management client asks for when it links a survey to a target. */
export interface LinkRequest {
  targetId: string;
  questionIds?: string[];
  mapping?: { questionId: string; property: string }[];
}

/** Sends one prepared delivery with this token to this target; resolves to what the provider created. */
export type SendDelivery = (token: string, targetId: string, deliveryId: string) => Promise<string>;

export interface Destination {
  readonly provider: Provider;
  readonly clientId: string;
  /** The provider's consent page for this state, sending the user back to `redirectUri`. */
  authorizeUrl(redirectUri: string, state: string): URL;
  exchangeCode(code: string, redirectUri: string): Promise<ExchangedToken>;
  listTargets(token: string): Promise<unknown[]>;
  /** The mapping a new link stores; refuses (invalid_input) a mapping that cannot work. */
  linkMapping(token: string, questions: readonly Element[], request: LinkRequest): Promise<LinkMapping>;
  /** What one finished response becomes for this link (a message, a page), ready to send. */
  prepare(input: {
    surveyName: string;
    questions: readonly Element[];
    mapping: LinkMapping;
    data: Readonly<Record<string, unknown>>;
  }): SendDelivery;
  /**
   * The id of what an interrupted send of this delivery created since `since`, if the provider has
   * it. `taken` reads the ids recorded for other deliveries of the link, for providers that need it.
   */
  findSent(
    token: string,
    targetId: string,
    deliveryId: string,
    since: Date,
    taken: () => Promise<ReadonlySet<string>>,
  ): Promise<string | undefined>;
}

/** What a provider's folder exports for the list in providers.ts. */
export interface ProviderDescriptor<P extends Provider = Provider> {
  readonly name: P;
  /**
   * What a link's targets are called: the last segment of the route that lists them under an
   * integration (`/integrations/{id}/channels`).
   */
  readonly linkTargets: string;
  /** Its destination, built once from its config section; undefined when that is absent. */
  readonly createDestination: (config: Config['integrations']) => Destination | undefined;
}

/** The destinations this process can use: those whose provider is configured. */
export type Destinations = Partial<Record<Provider, Destination>>;
