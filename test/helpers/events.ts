// Builders of the Kafka events that tests feed to processors or write to topics. Each fills in the
// envelope and the contract's empty defaults, so that a test names only the fields it is about.
// Every event gets a fresh id, and event times move one second forward per event built: an event
// built later is later, as the merge (last writer wins by time) expects of commands sent in order.
// Pure: no service is reached, so unit tests may use them too.
import type { ContactIdentified } from '../../src/events/contacts.ts';
import type { DisplayCreated } from '../../src/events/displays.ts';
import {
  responseFactId,
  type ResponseChangeFact,
  type ResponseFinished,
  type ResponseSnapshot,
} from '../../src/events/response-events.ts';
import type { ResponseCreated, ResponseDeleted, ResponseUpdated } from '../../src/events/responses.ts';
import { contactIdFor, newId } from '../../src/ids.ts';

export const TEST_ENVIRONMENT = 'env_test';
export const TEST_SURVEY = 'srv_test';
export const TEST_RESPONSE = 'rsp_test';

/** A fixed instant plus `seconds`, as an event time. */
export const testTime = (seconds: number) => new Date(Date.UTC(2026, 10, 22) + seconds * 1000).toISOString();

let clock = 0;

function envelope() {
  return {
    version: 1 as const,
    eventId: newId('evt'),
    occurredAt: testTime(++clock),
    environmentId: TEST_ENVIRONMENT,
  };
}

/** The contact id the edge derives for a userId, when the event names a user and no contact. */
function contactOf(fields: { environmentId?: string; userId?: string }) {
  if (fields.userId === undefined) return {};
  return { contactId: contactIdFor(fields.environmentId ?? TEST_ENVIRONMENT, fields.userId) };
}

export function responseCreated(fields: Partial<ResponseCreated> = {}): ResponseCreated {
  return {
    type: 'response.created',
    ...envelope(),
    responseId: TEST_RESPONSE,
    surveyId: TEST_SURVEY,
    finished: false,
    data: {},
    ttc: {},
    variables: {},
    meta: {},
    ...contactOf(fields),
    ...fields,
  };
}

export function responseUpdated(fields: Partial<ResponseUpdated> = {}): ResponseUpdated {
  return { type: 'response.updated', ...envelope(), responseId: TEST_RESPONSE, ...fields };
}

export function responseDeleted(fields: Partial<ResponseDeleted> = {}): ResponseDeleted {
  return { type: 'response.deleted', ...envelope(), responseId: TEST_RESPONSE, ...fields };
}

export function displayCreated(fields: Partial<DisplayCreated> = {}): DisplayCreated {
  return {
    type: 'display.created',
    ...envelope(),
    displayId: newId('dsp'),
    surveyId: TEST_SURVEY,
    ...contactOf(fields),
    ...fields,
  };
}

export function contactIdentified(
  fields: Partial<ContactIdentified> & { userId: string },
): ContactIdentified {
  return {
    type: 'contact.identified',
    ...envelope(),
    contactId: contactIdFor(fields.environmentId ?? TEST_ENVIRONMENT, fields.userId),
    attributes: {},
    ...fields,
  };
}

/** A fact as the response processor announces it: its id is derived from the response's. */
export function responseFact<T extends ResponseChangeFact['type']>(
  type: T,
  fields: Partial<Omit<ResponseChangeFact, 'type' | 'response'>> & {
    response?: Partial<ResponseSnapshot>;
  } = {},
): Extract<ResponseChangeFact, { type: T }> {
  const responseId = fields.responseId ?? TEST_RESPONSE;
  const base = envelope();
  const environmentId = fields.environmentId ?? base.environmentId;
  const surveyId = fields.surveyId ?? TEST_SURVEY;
  const fact: ResponseChangeFact = {
    type,
    ...base,
    appliedAt: base.occurredAt,
    eventId: responseFactId(type, responseId, base.eventId),
    responseId,
    surveyId,
    ...fields,
    response: {
      id: responseId,
      environmentId,
      surveyId,
      finished: type === 'response.finished',
      data: {},
      ttc: {},
      variables: {},
      meta: {},
      language: null,
      endingId: null,
      displayId: null,
      singleUseId: null,
      contactId: null,
      createdAt: base.occurredAt,
      updatedAt: base.occurredAt,
      ...fields.response,
    },
  };
  return fact as Extract<ResponseChangeFact, { type: T }>;
}

/** A finish as the response processor announces it. */
export function responseFinished(
  fields: Partial<Omit<ResponseFinished, 'response'>> & { response?: Partial<ResponseSnapshot> } = {},
): ResponseFinished {
  return responseFact('response.finished', fields);
}
