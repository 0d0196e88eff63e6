// What a provider's failure means for a delivery, decided in one place per provider and acted on
// in one place (the deliverer): try again later, give up (dead letter, visible, replayable), or
// give up and mark the integration as needing a reconnect (expired or revoked token).
export type ProviderFailure =
  | { kind: 'retry'; reason: string; retryAfterMs?: number }
  | { kind: 'permanent'; reason: string }
  | { kind: 'reconnect'; reason: string };

export class ProviderError extends Error {
  constructor(readonly failure: ProviderFailure) {
    super(failure.reason);
    this.name = 'ProviderError';
  }
}

/** HTTP status → failure, for errors that carry only a status. */
export function failureForStatus(status: number, reason: string, retryAfterMs?: number): ProviderFailure {
  if (status === 429 || status >= 500) return { kind: 'retry', reason, retryAfterMs };
  if (status === 401) return { kind: 'reconnect', reason };
  return { kind: 'permanent', reason };
}

/** What an OAuth code exchange yields, whichever the provider. */
export interface ExchangedToken {
  accessToken: string;
  account: Record<string, unknown>;
}
