// The topics Chorus writes, each as a typed output that knows its key and its serialisation: a
// handler hands over an event and never chooses a topic, a key or an encoding itself. The key of
// each topic is what keeps order where the design needs it (all commands of one response, all
// changes of one contact, in one partition).
import type { ContactCommand } from '../events/contacts.ts';
import { contactKey } from '../events/contacts.ts';
import type { DeadLetterRecord } from '../events/dead-letters.ts';
import type { DisplayCreated } from '../events/displays.ts';
import type { DisplayCreatedFact } from '../events/display-events.ts';
import type { ContactFact } from '../events/contact-events.ts';
import type { SurveyFact } from '../events/survey-events.ts';
import type { StoreChange } from '../events/store-changes.ts';
import { responseFactJson, type ResponseFact } from '../events/response-events.ts';
import type { ResponseCommand } from '../events/responses.ts';
import type { TraceHeaders } from '../observability/tracing.ts';
import type { Topics } from './kafka.ts';
import type { Publisher } from './publisher.ts';

export interface PublishOptions {
  /** The trace the event continues; by default the active span's. */
  trace?: TraceHeaders;
  /** Headers carried over (a dead letter keeps its original message's). */
  headers?: Record<string, string>;
}

export interface Output<E> {
  readonly topic: string;
  /** The key the event is written with (what decides its partition). */
  keyOf(event: E): string;
  /** Resolves once Kafka acknowledged the event (acks=all); rejects with `unavailable` otherwise. */
  publish(event: E, options?: PublishOptions): Promise<void>;
}

export interface Outputs {
  /** Commands for the response processor, keyed by response id. */
  responses: Output<ResponseCommand>;
  /** Displays, keyed by display id. */
  displays: Output<DisplayCreated>;
  /** Contact changes, keyed by environment id and user id. */
  contacts: Output<ContactCommand>;
  /** Public facts (docs/events.md): responses after each change, keyed by response id. */
  responseEvents: Output<ResponseFact>;
  /** Public facts: displays stored, keyed by display id. */
  displayEvents: Output<DisplayCreatedFact>;
  /** Public facts: contacts identified, updated, deleted, keyed by contact id. */
  contactEvents: Output<ContactFact>;
  /** Public facts: surveys created, updated, status changed, deleted, keyed by survey id. */
  surveyEvents: Output<SurveyFact>;
  /** The store's direct changes (events/store-changes.ts), keyed by environment id. */
  storeChanges: Output<StoreChange>;
  /** What could not be applied or delivered; keyed by the original key (see events/dead-letters.ts). */
  deadLetters: Output<DeadLetterRecord>;
}

/** Only `publish` is used: tests hand in a recorder instead of a Kafka producer. */
type Writer = Pick<Publisher, 'publish'>;

function output<E>(
  publisher: Writer,
  topic: string,
  keyOf: (event: E) => string,
  json: (event: E) => string = JSON.stringify,
): Output<E> {
  return {
    topic,
    keyOf,
    publish: (event, options) =>
      publisher.publish({ topic, key: keyOf(event), value: json(event), ...options }),
  };
}

export function createOutputs(publisher: Writer, topics: Topics): Outputs {
  return {
    responses: output(publisher, topics.responses, (c) => c.responseId),
    displays: output(publisher, topics.displays, (d) => d.displayId),
    contacts: output(publisher, topics.contacts, (c) => contactKey(c.environmentId, c.userId)),
    responseEvents: output(publisher, topics['response-events'], (e) => e.responseId, responseFactJson),
    displayEvents: output(publisher, topics['display-events'], (e) => e.displayId),
    contactEvents: output(publisher, topics['contact-events'], (e) => e.contactId),
    surveyEvents: output(publisher, topics['survey-events'], (e) => e.surveyId),
    storeChanges: output(publisher, topics['store-changes'], (c) => c.environmentId),
    deadLetters: output(publisher, topics['dead-letter'], (r) =>
      r.type === 'delivery.failed' ? r.responseId : r.key,
    ),
  };
}
