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
}

export type RejectionReason =
  | 'response_already_exists'
  | 'response_not_found'
  | 'response_already_finished'
  | 'single_use_id_taken'
  | 'contact_deleted';
