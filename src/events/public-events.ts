// The public event contract in one place: every topic an analyst may read and every event type on
// it, with its schema and version. `npm run schemas` writes a JSON Schema file per type from here
// (schemas/), and the tests hold those files to this list and to backward compatibility.
import type Type from 'typebox';
import { ContactDeletedFact, ContactIdentifiedFact, ContactUpdatedFact } from './contact-events.ts';
import { DisplayCreatedFact } from './display-events.ts';
import {
  ResponseCreatedFact,
  ResponseDeletedFact,
  ResponseFinished,
  ResponseUpdatedFact,
} from './response-events.ts';
import {
  SurveyCreatedFact,
  SurveyDeletedFact,
  SurveyStatusChangedFact,
  SurveyUpdatedFact,
} from './survey-events.ts';

/** The public topics (facts), by their name without the configured prefix, and what keys them. */
export const PUBLIC_TOPICS = {
  'response-events': 'response id',
  'display-events': 'display id',
  'contact-events': 'contact id',
  'survey-events': 'survey id',
} as const;
export type PublicTopic = keyof typeof PUBLIC_TOPICS;

export interface PublicEvent {
  readonly topic: PublicTopic;
  readonly type: string;
  /** The value of the event's `version` field; a change readers can't take bumps it. */
  readonly version: number;
  readonly schema: Type.TSchema;
}

const event = (topic: PublicTopic, type: string, schema: Type.TSchema): PublicEvent => ({
  topic,
  type,
  version: 1,
  schema,
});

export const PUBLIC_EVENTS: readonly PublicEvent[] = [
  event('response-events', 'response.created', ResponseCreatedFact),
  event('response-events', 'response.updated', ResponseUpdatedFact),
  event('response-events', 'response.finished', ResponseFinished),
  event('response-events', 'response.deleted', ResponseDeletedFact),
  event('display-events', 'display.created', DisplayCreatedFact),
  event('contact-events', 'contact.identified', ContactIdentifiedFact),
  event('contact-events', 'contact.updated', ContactUpdatedFact),
  event('contact-events', 'contact.deleted', ContactDeletedFact),
  event('survey-events', 'survey.created', SurveyCreatedFact),
  event('survey-events', 'survey.updated', SurveyUpdatedFact),
  event('survey-events', 'survey.status_changed', SurveyStatusChangedFact),
  event('survey-events', 'survey.deleted', SurveyDeletedFact),
];
