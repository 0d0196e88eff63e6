// Deleting a contact while a consumer is applying an event for it, against a real PostgreSQL. The
// race is driven deterministically: the consumer's transaction is stopped just before it writes
// (after it has read the tombstones), the deletion is started, and the consumer is let go once the
// deletion has either finished or is waiting for the consumer's contact lock. Either way, nothing
// may be left of the contact afterwards.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ContactIdentified } from '../events/contacts.ts';
import type { DisplayCreated } from '../events/displays.ts';
import type { ResponseCreated, ResponseUpdated } from '../events/responses.ts';
import type { ResponseFact } from '../events/response-events.ts';
import { contactIdFor, newId } from '../ids.ts';
import { deleteContact, findContact, type ContactRecord } from '../store/contacts.ts';
import { Contact, Delivery, Display, Response } from '../store/entities.ts';
import { createEnvironment } from '../store/environments.ts';
import { createLink, saveIntegration } from '../store/integrations.ts';
import type { EntityManager, Knex } from '../store/orm.ts';
import { createSurvey } from '../store/surveys.ts';
import {
  createProcessorWorld,
  ignoreEffects,
  type ProcessorWorld,
} from '../../test/helpers/processor-world.ts';
import * as events from '../../test/helpers/events.ts';
import { waitFor } from '../../test/helpers/wait.ts';
import { contactProcessor } from './contacts/contact-processor.ts';
import { displayProcessor } from './displays/display-processor.ts';
import { responseProcessor } from './responses/response-processor.ts';
import { unitOfWork } from '../pipeline/batch-handler.ts';

/** Sent a moment ago: still in flight when the contact is deleted. */
const aMomentAgo = () => new Date(Date.now() - 1000).toISOString();

/**
 * `em` as it is, except that the first statement (in any fork or transaction of it) matching
 * `pattern` waits until `resume` is called: a breakpoint inside a consumer's transaction.
 */
function breakBefore(em: EntityManager, pattern: RegExp) {
  let reach!: () => void;
  let resume!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const resumed = new Promise<void>((resolve) => (resume = resolve));
  let hit = false;
  const stopsAt = (sql: unknown) => {
    if (hit || typeof sql !== 'string' || !pattern.test(sql)) return false;
    hit = true;
    reach();
    return true;
  };
  // Statements sent through store/orm.ts' `query`: on the connection of the transaction's client.
  const pausingConnection = (connection: Connection): Connection =>
    new Proxy(connection, {
      get(c, property) {
        if (property !== 'query') return bound(c, property);
        return async (config: { text: string }) => {
          if (stopsAt(config.text)) await resumed;
          return c.query(config);
        };
      },
    });
  const pausingKnex = (knex: Knex.Transaction): Knex.Transaction =>
    new Proxy(knex, {
      get(k, property) {
        if (property !== 'client') return bound(k, property);
        const client = k.client as { acquireConnection(): Promise<Connection> };
        return new Proxy(client, {
          get(c, name) {
            if (name !== 'acquireConnection') return bound(c, name);
            return async () => pausingConnection(await c.acquireConnection());
          },
        });
      },
    });
  const wrap = (target: EntityManager): EntityManager =>
    new Proxy(target, {
      get(t, property) {
        if (property === 'fork') return (...args: Parameters<EntityManager['fork']>) => wrap(t.fork(...args));
        if (property === 'transactional')
          return <T>(work: (tx: EntityManager) => Promise<T>) => t.transactional((tx) => work(wrap(tx)));
        if (property === 'getTransactionContext')
          return () => {
            const knex = t.getTransactionContext<Knex.Transaction>();
            return knex && pausingKnex(knex);
          };
        if (property === 'execute')
          return async (...args: Parameters<EntityManager['execute']>) => {
            if (stopsAt(args[0])) await resumed;
            return t.execute(...args);
          };
        return bound(t, property);
      },
    });
  return { em: wrap(em), reached, resume };
}

/** What store/orm.ts' `query` uses of a pg connection. */
interface Connection {
  query(config: { text: string }): Promise<unknown>;
}

/** A property of `target`, a method bound to it. */
function bound(target: object, property: string | symbol): unknown {
  const value: unknown = Reflect.get(target, property, target);
  return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
}

describe('deleting a contact while a consumer applies an event for it', () => {
  let world: ProcessorWorld;
  let environmentId: string;
  let surveyId: string;
  const em = () => world.orm.em.fork();

  before(async () => {
    world = await createProcessorWorld('contact_deletion');
    ({ environmentId } = await createEnvironment(em(), { plan: 'enterprise', name: 'contact deletion' }));
    surveyId = (await createSurvey(em(), { environmentId, status: 'inProgress' })).id;
  });
  after(() => world.close());

  /** A stored contact of the test environment. */
  async function storedContact(userId: string): Promise<ContactRecord> {
    const contactId = contactIdFor(environmentId, userId);
    await unitOfWork(
      contactProcessor,
      world.orm.em,
      [identify(contactId, userId, aMomentAgo())],
      ignoreEffects,
    );
    const contact = await findContact(world.orm.em, contactId);
    assert.ok(contact, `${userId} is stored`);
    return contact;
  }

  /** How many backends of this database wait for a lock (the consumer's, here: nothing else runs). */
  async function waitingForLocks(): Promise<number> {
    const [row] = await em().execute<[{ n: number }]>(
      `select count(*)::int as n from pg_stat_activity
       where datname = current_database() and wait_event_type = 'Lock'`,
    );
    return row.n;
  }

  /**
   * Runs `apply` (with the EntityManager it must use) until just before its first statement that
   * matches `writes`, deletes `contact` meanwhile, then lets `apply` finish.
   */
  async function deleteWhileApplying(
    contact: ContactRecord,
    writes: RegExp,
    apply: (em: EntityManager) => Promise<void>,
  ): Promise<{ deletionWaitedForTheConsumer: boolean }> {
    const breakpoint = breakBefore(world.orm.em, writes);
    const applying = apply(breakpoint.em);
    await Promise.race([
      breakpoint.reached,
      applying.then(() => {
        throw new Error(`the consumer finished without reaching ${writes}`);
      }),
    ]);
    let deleted = false;
    const deleting = deleteContact(world.orm.em, contact).finally(() => (deleted = true));
    // Without a shared lock the deletion simply finishes here; with it, it waits for the consumer.
    const waited = await waitFor(
      async () => (deleted ? 'finished' : (await waitingForLocks()) > 0 ? 'waiting' : undefined),
      { what: 'the deletion to finish or to wait for the consumer' },
    );
    breakpoint.resume();
    await Promise.all([applying, deleting]);
    return { deletionWaitedForTheConsumer: waited === 'waiting' };
  }

  test('a contact deleted while an identify for it is being applied is not brought back', async () => {
    const contact = await storedContact('ada');
    const { deletionWaitedForTheConsumer } = await deleteWhileApplying(
      contact,
      /insert into contacts/,
      (em) =>
        unitOfWork(
          contactProcessor,
          em,
          [identify(contact.id, 'ada', aMomentAgo(), { plan: 'pro' })],
          ignoreEffects,
        ),
    );
    assert.equal(await em().count(Contact, { id: contact.id }), 0, 'the contact stays deleted');
    assert.ok(deletionWaitedForTheConsumer, 'the deletion waited for the identify being applied');
  });

  test('a response created while its contact is deleted leaves neither the contact nor the response behind', async () => {
    const contact = await storedContact('bob');
    const responseId = newId('rsp');
    // Its first write: a stored contact is only read.
    await deleteWhileApplying(contact, /insert into responses/, (em) =>
      unitOfWork(responseProcessor, em, [responseCreated(responseId, contact, aMomentAgo())], ignoreEffects),
    );
    assert.equal(await em().count(Contact, { id: contact.id }), 0, 'the contact stays deleted');
    assert.equal(await em().count(Response, { contactId: contact.id }), 0, 'no response points to it');
  });

  test('a deletion racing a batch that updates one response of the contact and creates another does not deadlock', async () => {
    const contact = await storedContact('eve');
    const [first, second] = [newId('rsp'), newId('rsp')];
    await unitOfWork(
      responseProcessor,
      world.orm.em,
      [responseCreated(first, contact, aMomentAgo())],
      ignoreEffects,
    );
    // Stopped holding the row of `first` and about to take the contact's lock: had the deletion
    // taken the contact's lock first and then waited for that row, neither could go on.
    await deleteWhileApplying(contact, /pg_advisory_xact_lock/, (em) =>
      unitOfWork(
        responseProcessor,
        em,
        [
          responseUpdated(first, aMomentAgo(), { data: { q1: 'edited' } }),
          responseCreated(second, contact, aMomentAgo()),
        ],
        ignoreEffects,
      ),
    );
    assert.equal(await em().count(Contact, { id: contact.id }), 0, 'the contact stays deleted');
    assert.equal(
      await em().count(Response, { id: { $in: [first, second] } }),
      0,
      'both responses went with it',
    );
  });

  test('a display recorded while its contact is deleted leaves neither the contact nor the display behind', async () => {
    const contact = await storedContact('cleo');
    const displayId = newId('dsp');
    // Its first write: a stored contact is only read.
    await deleteWhileApplying(contact, /insert into displays/, (em) =>
      unitOfWork(displayProcessor, em, [displayCreated(displayId, contact, aMomentAgo())], ignoreEffects),
    );
    assert.equal(await em().count(Contact, { id: contact.id }), 0, 'the contact stays deleted');
    assert.equal(await em().count(Display, { contactId: contact.id }), 0, 'no display points to it');
  });

  test('a finished response whose deliveries are being enqueued while its contact is deleted leaves no delivery behind', async () => {
    await linkTheSurvey();
    const contact = await storedContact('dan');
    const responseId = newId('rsp');
    // Stopped in the response processor's transaction, holding the contact's lock, just before it
    // records the response's delivery: the deletion waits, then takes the response and the delivery.
    const { deletionWaitedForTheConsumer } = await deleteWhileApplying(
      contact,
      /insert into deliveries/,
      (em) =>
        unitOfWork(
          responseProcessor,
          em,
          [responseCreated(responseId, contact, aMomentAgo(), { finished: true })],
          ignoreEffects,
        ),
    );
    assert.ok(deletionWaitedForTheConsumer, 'the deletion waited for the response being applied');
    assert.equal(await em().count(Response, { id: responseId }), 0, 'the response went with its contact');
    assert.equal(await em().count(Delivery, { responseId }), 0, 'no delivery of it is left');
  });

  test('a finished response sent before its contact was deleted and applied after it makes no delivery', async () => {
    await linkTheSurvey();
    const contact = await storedContact('fay');
    const responseId = newId('rsp');
    const sent = aMomentAgo();
    await deleteContact(world.orm.em, contact);
    const facts: ResponseFact[] = [];
    await unitOfWork(
      responseProcessor,
      world.orm.em,
      [responseCreated(responseId, contact, sent, { finished: true })],
      {
        ...ignoreEffects,
        publish: async (events) => void facts.push(...events),
      },
    );
    assert.deepEqual(facts, [], 'the void response is not announced');
    assert.equal(await em().count(Response, { id: responseId }), 0);
    assert.equal(await em().count(Delivery, { responseId }), 0);
  });

  /** Links the test survey to a Slack channel (once): each finished response makes a delivery. */
  let linked = false;
  async function linkTheSurvey() {
    if (linked) return;
    linked = true;
    const integration = await saveIntegration(em(), {
      environmentId,
      provider: 'slack',
      tokenCiphertext: 'never read: no deliverer runs here',
      account: {},
    });
    await createLink(em(), { integrationId: integration.id, surveyId, targetId: 'C1', mapping: [] });
  }

  function identify(
    contactId: string,
    userId: string,
    occurredAt: string,
    attributes: Record<string, string> = {},
  ): ContactIdentified {
    return events.contactIdentified({ environmentId, contactId, userId, occurredAt, attributes });
  }

  function responseCreated(
    responseId: string,
    contact: ContactRecord,
    occurredAt: string,
    fields: Partial<ResponseCreated> = {},
  ): ResponseCreated {
    const { userId, id: contactId } = contact;
    return events.responseCreated({
      environmentId,
      surveyId,
      responseId,
      occurredAt,
      userId,
      contactId,
      ...fields,
    });
  }

  function responseUpdated(
    responseId: string,
    occurredAt: string,
    fields: Partial<ResponseUpdated> = {},
  ): ResponseUpdated {
    return events.responseUpdated({ environmentId, responseId, occurredAt, ...fields });
  }

  function displayCreated(displayId: string, contact: ContactRecord, occurredAt: string): DisplayCreated {
    const { userId, id: contactId } = contact;
    return events.displayCreated({ environmentId, surveyId, displayId, occurredAt, userId, contactId });
  }
});
