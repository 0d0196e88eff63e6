// The deliveries of a response are recorded in the transaction that applies it, against a real
// PostgreSQL: they commit with the response or not at all, and a batch redone after a failure
// records each of them once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResponseCommand, ResponseCreated, ResponseUpdated } from '../../events/responses.ts';
import type { ResponseFact } from '../../events/response-events.ts';
import { newId } from '../../ids.ts';
import { unitOfWork, type Effects } from '../../pipeline/batch-handler.ts';
import { AppliedEvent, Delivery, Response } from '../../store/entities.ts';
import { createEnvironment } from '../../store/environments.ts';
import { createLink, saveIntegration } from '../../store/integrations.ts';
import type { EntityManager } from '../../store/orm.ts';
import { createSurvey } from '../../store/surveys.ts';
import { createWebhook } from '../../store/webhooks.ts';
import {
  createProcessorWorld,
  ignoreEffects,
  type ProcessorWorld,
} from '../../../test/helpers/processor-world.ts';
import * as events from '../../../test/helpers/events.ts';
import { responseProcessor } from './response-processor.ts';

const TRACE = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' };

/**
 * `em`, except that every transaction fails after its work is done, as a failed commit would;
 * `last` sees the transaction just before.
 */
function failingCommits(em: EntityManager, last: (tx: EntityManager) => Promise<void>): EntityManager {
  return new Proxy(em, {
    get(target, property) {
      if (property === 'fork')
        return (...args: Parameters<EntityManager['fork']>) => failingCommits(target.fork(...args), last);
      if (property === 'transactional')
        return (work: (tx: EntityManager) => Promise<unknown>) =>
          target.transactional(async (tx) => {
            await work(tx);
            await last(tx);
            throw new Error('the commit failed');
          });
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe('deliveries are enqueued in the transaction of the response', () => {
  let world: ProcessorWorld;
  let environmentId: string;
  let surveyId: string;
  let linkId: string;
  let webhookId: string;
  const em = () => world.orm.em.fork();

  before(async () => {
    world = await createProcessorWorld('enqueue_deliveries');
    ({ environmentId } = await createEnvironment(em(), { plan: 'enterprise', name: 'deliveries' }));
    surveyId = (await createSurvey(em(), { environmentId, status: 'inProgress' })).id;
    const integration = await saveIntegration(em(), {
      environmentId,
      provider: 'slack',
      tokenCiphertext: 'never read: no deliverer runs here',
      account: {},
    });
    linkId = (
      await createLink(em(), { integrationId: integration.id, surveyId, targetId: 'C1', mapping: [] })
    ).id;
    webhookId = (
      await createWebhook(em(), {
        environmentId,
        name: null,
        url: 'https://example.com/hook',
        source: 'user',
        triggers: ['responseCreated', 'responseFinished'],
        surveyIds: [],
        secretCiphertext: 'never read',
      })
    ).id;
  });
  after(() => world.close());

  const created = (responseId: string, fields: Partial<ResponseCreated> = {}) =>
    events.responseCreated({ environmentId, surveyId, responseId, ...fields });
  const updated = (responseId: string, fields: Partial<ResponseUpdated> = {}) =>
    events.responseUpdated({ environmentId, responseId, ...fields });

  /** Applies `commands` as the pipeline does; the facts it announced. */
  async function apply(
    commands: ResponseCommand[],
    on: EntityManager = world.orm.em,
  ): Promise<ResponseFact[]> {
    const announced: ResponseFact[] = [];
    const effects: Effects<ResponseCommand, ResponseFact> = {
      ...ignoreEffects,
      publish: async (facts) => void announced.push(...facts),
      traceOf: () => TRACE,
    };
    await unitOfWork(responseProcessor, on, commands, effects);
    return announced;
  }

  const deliveriesOf = (responseId: string) =>
    em().find(Delivery, { responseId }, { orderBy: { eventId: 'asc' }, populate: ['link', 'webhook'] });

  test('a batch whose commit fails leaves no delivery, and the batch redone enqueues each exactly once', async () => {
    const responseId = newId('rsp');
    const batch = [created(responseId, { data: { q1: 'hi' } }), updated(responseId, { finished: true })];

    let enqueued = 0;
    const failing = failingCommits(world.orm.em, async (tx) => {
      enqueued = await tx.count(Delivery, { responseId });
    });
    await assert.rejects(apply(batch, failing), /the commit failed/);
    assert.equal(enqueued, 3, 'the batch had enqueued its deliveries when its commit failed');
    assert.equal(await em().count(Response, { id: responseId }), 0, 'the response was not stored');
    assert.equal(await em().count(Delivery, { responseId }), 0, 'nor any delivery of it');
    assert.equal(
      await em().count(AppliedEvent, { eventId: { $in: batch.map((c) => c.eventId) } }),
      0,
      'nor the claims: the batch is redone',
    );

    const facts = await apply(batch);
    const finished = facts.find((f) => f.type === 'response.finished')!;
    const createdFact = facts.find((f) => f.type === 'response.created')!;
    const rows = await deliveriesOf(responseId);
    assert.deepEqual(
      rows.map((d) => [d.link?.id ?? null, d.webhook?.id ?? null, d.event ?? null, d.eventId ?? null]).sort(),
      [
        [linkId, null, null, null], // the finish, to the Slack link
        [null, webhookId, 'responseCreated', createdFact.eventId],
        [null, webhookId, 'responseFinished', finished.eventId],
        // The update fired `responseUpdated`, which this webhook does not listen to.
      ].sort(),
    );
    const toSlack = rows.find((d) => d.link)!;
    assert.deepEqual(toSlack.response, JSON.parse(JSON.stringify(finished.response)), 'the fact’s snapshot');
    assert.deepEqual(toSlack.traceContext, TRACE, 'the trace of the command behind the fact');
    assert.equal(toSlack.status, 'pending');

    // Delivered again after the commit (the offset commit was lost): skipped, nothing added.
    assert.deepEqual(await apply(batch), []);
    assert.equal(await em().count(Delivery, { responseId }), 3);
  });

  test('a response refused in its batch (single-use id taken) is delivered nowhere', async () => {
    const [kept, refused] = [newId('rsp'), newId('rsp')];
    const singleUseId = `single-use-${kept}`;
    const facts = await apply([
      created(kept, { finished: true, singleUseId }),
      created(refused, { finished: true, singleUseId }),
    ]);
    assert.ok(facts.every((f) => f.responseId === kept));
    assert.equal(await em().count(Delivery, { responseId: kept }), 3, 'link, created and finished');
    assert.equal(await em().count(Delivery, { responseId: refused }), 0);
  });

  test('changes of a survey without links, in an environment without webhooks, enqueue nothing', async () => {
    const { environmentId: quiet } = await createEnvironment(em(), { plan: 'free', name: 'quiet' });
    const quietSurvey = (await createSurvey(em(), { environmentId: quiet, status: 'inProgress' })).id;
    const responseId = newId('rsp');
    const facts = await apply([
      events.responseCreated({ environmentId: quiet, surveyId: quietSurvey, responseId, finished: true }),
    ]);
    assert.equal(facts.length, 2, 'created and finished are announced all the same');
    assert.equal(await em().count(Delivery, { responseId }), 0);
  });
});
