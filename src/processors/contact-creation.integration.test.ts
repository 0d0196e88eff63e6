// Who creates a contact, against a real PostgreSQL. A visitor's display and response name the
// contact its identify created; the three travel on three topics, applied by three consumers in no
// fixed order. A contact the edge knew (stored, or identified by an acknowledged identify) is left to
// its identify: written once, announced once. A user the edge did not know (v1's `userId`, never
// identified) gets the contact from the display or response, as in Formbricks.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { contactIdFor, newId } from '../ids.ts';
import { findContact } from '../store/contacts.ts';
import { exportedResponses } from '../store/response-export.ts';
import { createEnvironment } from '../store/environments.ts';
import { query, type EntityManager } from '../store/orm.ts';
import { storedResponse } from '../../test/helpers/store.ts';
import { createSurvey } from '../store/surveys.ts';
import {
  createProcessorWorld,
  ignoreEffects,
  type ProcessorWorld,
} from '../../test/helpers/processor-world.ts';
import * as events from '../../test/helpers/events.ts';
import { unitOfWork } from '../pipeline/batch-handler.ts';
import { contactProcessor } from './contacts/contact-processor.ts';
import { displayProcessor } from './displays/display-processor.ts';
import { responseProcessor } from './responses/response-processor.ts';

describe('the contact a display or response names', () => {
  let world: ProcessorWorld;
  let environmentId: string;
  let surveyId: string;
  const em = (): EntityManager => world.orm.em.fork();

  before(async () => {
    world = await createProcessorWorld('contact_creation');
    ({ environmentId } = await createEnvironment(em(), { plan: 'enterprise', name: 'contact creation' }));
    surveyId = (await createSurvey(em(), { environmentId, status: 'inProgress' })).id;
  });
  after(() => world.close());

  /** The facts the store announced for a contact on contact-events, oldest first. */
  const contactFacts = (contactId: string) =>
    query<{ type: string; payload: { attributes: Record<string, string> } }>(
      em(),
      `select type, payload from fact_outbox where topic = 'contact-events' and key = ? order by seq`,
      [contactId],
    );

  /** A visitor's identify, display and response, as the widget's calls make them. */
  function session(userId: string, known: boolean) {
    const contactId = contactIdFor(environmentId, userId);
    const identify = events.contactIdentified({
      environmentId,
      userId,
      attributes: { userId, plan: 'pro', company: 'Acme' },
    });
    const on = { environmentId, surveyId, userId, contactId, ...(known && { contactKnown: true as const }) };
    const display = events.displayCreated(on);
    const responseId = newId('rsp');
    const response = events.responseCreated({
      ...on,
      responseId,
      displayId: display.displayId,
      finished: true,
      ...(known && { contactAttributes: { userId, plan: 'pro', company: 'Acme' } }),
    });
    return { contactId, responseId, identify, display, response };
  }

  test('a display and a response of a contact the edge knew, applied before its identify, leave the contact to the identify: written once, announced once', async () => {
    const visit = session('known-visitor', true);
    await unitOfWork(displayProcessor, world.orm.em, [visit.display], ignoreEffects);
    await unitOfWork(responseProcessor, world.orm.em, [visit.response], ignoreEffects);
    assert.equal(
      await findContact(world.orm.em, visit.contactId),
      undefined,
      'not created before its identify',
    );
    const stored = await storedResponse(world.orm, visit.responseId);
    assert.equal(stored?.contactId, visit.contactId);
    assert.deepEqual(stored?.contactAttributes, { userId: 'known-visitor', plan: 'pro', company: 'Acme' });
    const exported = [];
    for await (const page of exportedResponses(em(), { surveyId })) exported.push(...page);
    assert.equal(
      exported.find((r) => r.id === visit.responseId)?.userId,
      'known-visitor',
      "the export names the user while the contact's identify is on its way",
    );

    await unitOfWork(contactProcessor, world.orm.em, [visit.identify], ignoreEffects);
    const contact = await findContact(world.orm.em, visit.contactId);
    assert.deepEqual(contact?.attributes, { userId: 'known-visitor', plan: 'pro', company: 'Acme' });
    assert.deepEqual(await contactFacts(visit.contactId), [
      {
        type: 'contact.identified',
        payload: {
          userId: 'known-visitor',
          attributes: { userId: 'known-visitor', plan: 'pro', company: 'Acme' },
        },
      },
    ]);
  });

  test('a display and a response naming a user the edge did not know create the contact, which a later identify updates', async () => {
    const visit = session('unknown-visitor', false);
    await unitOfWork(displayProcessor, world.orm.em, [visit.display], ignoreEffects);
    assert.deepEqual((await findContact(world.orm.em, visit.contactId))?.attributes, {
      userId: 'unknown-visitor',
    });
    await unitOfWork(responseProcessor, world.orm.em, [visit.response], ignoreEffects);
    assert.deepEqual((await storedResponse(world.orm, visit.responseId))?.contactAttributes, {
      userId: 'unknown-visitor',
    });

    await unitOfWork(contactProcessor, world.orm.em, [visit.identify], ignoreEffects);
    assert.deepEqual(
      (await contactFacts(visit.contactId)).map((f) => f.type),
      ['contact.identified', 'contact.updated'],
    );
  });
});
