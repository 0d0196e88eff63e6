// The state of a stored response and why a command on it can be refused: the domain shape that the
// processor folds commands into (responses/merge.ts) and the store persists
// (store/response-rows.ts), so that neither has to import the other.
export interface ResponseState {
  id: string;
  environmentId: string;
  surveyId: string;
  finished: boolean;
  data: Record<string, unknown>;
  ttc: Record<string, number>;
  variables: Record<string, string | number>;
  meta: Record<string, unknown>;
  language: string | null;
  endingId: string | null;
  displayId: string | null;
  singleUseId: string | null;
  contactId: string | null;
  /** The linked contact's attributes when the response was created (set when it is stored). */
  contactAttributes: Record<string, string> | null;
  createdAt: string;
  updatedAt: string;
  /** When each part was last set, by the edge's clock: what lets a late command merge as if on time. */
  clocks: ResponseClocks;
}

/**
 * The edge clocks (events/clock.ts) behind a response's state, so that a command applied after a
 * later one (as happens for a moment when partitions are added) changes only what no later command
 * set. A key without a clock of its own was set by the create. Not part of what readers see.
 */
export interface ResponseClocks {
  /** The create's clock (absent on responses stored before clocks: they count as oldest). */
  created?: number;
  /** The clock of the command that finished the response. */
  finished?: number;
  /** Per key of `data`, `ttc` and `variables` set by an update: that update's clock. */
  data?: Record<string, number>;
  ttc?: Record<string, number>;
  variables?: Record<string, number>;
  language?: number;
  endingId?: number;
}

export type RejectionReason =
  | 'response_already_exists'
  | 'response_not_found'
  | 'response_already_finished'
  | 'single_use_id_taken'
  | 'contact_deleted';
