// A response deleted through the log, against a real PostgreSQL: the deletion is applied in order
// after the response's changes, takes its deliveries, quota counts and summary counts with it, is
// announced with ids only, and nothing that comes after it brings the response back.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResponseCommand } from '../../events/responses.ts';
import type { ResponseFact } from '../../events/response-events.ts';
import { newId } from '../../ids.ts';
import { unitOfWork, type Effects } from '../../pipeline/batch-handler.ts';
import type { Rejected } from '../../events/dead-letters.ts';
import { Delivery, QuotaMember, Response } from '../../store/entities.ts';
import { createEnvironment } from '../../store/environments.ts';
import { readSummaryBasis } from '../../store/summary-counts.ts';
import { createSurvey } from '../../store/surveys.ts';
import { createWebhook } from '../../store/webhooks.ts';
import {
  createProcessorWorld,
  ignoreEffects,
  type ProcessorWorld,
} from '../../../test/helpers/processor-world.ts';
import * as events from '../../../test/helpers/events.ts';
import { responseProcessor } from './response-processor.ts';

describe('a response deleted through the log', () => {
  let world: ProcessorWorld;
  let environmentId: string;
  let surveyId: string;
  const em = () => world.orm.em.fork();

  before(async () => {
    world = await createProcessorWorld('response_deletion');
    ({ environmentId } = await createEnvironment(em(), { plan: 'enterprise', name: 'deletion' }));
    surveyId = (
      await createSurvey(em(), {
        environmentId,
        status: 'inProgress',
        quotas: [{ id: 'everyone', name: 'Everyone', limit: 1000, action: 'endSurvey' }],
      })
    ).id;
    await createWebhook(em(), {
      environmentId,
      name: null,
      url: 'https://example.com/hook',
      source: 'user',
      triggers: ['responseCreated', 'responseUpdated', 'responseFinished'],
      surveyIds: [],
      secretCiphertext: 'never read',
    });
  });
  after(() => world.close());

  const created = (responseId: string) =>
    events.responseCreated({ environmentId, surveyId, responseId, data: { q1: 'hi' }, finished: true });
  const updated = (responseId: string) =>
    events.responseUpdated({ environmentId, responseId, data: { q2: 'late' } });
  const deleted = (responseId: string) => events.responseDeleted({ environmentId, responseId });

  /** Applies `commands` as the pipeline does: what it announced and what it rejected. */
  async function apply(commands: ResponseCommand[]) {
    const announced: ResponseFact[] = [];
    const rejected: Rejected<ResponseCommand>[] = [];
    const parked: ResponseCommand[] = [];
    const effects: Effects<ResponseCommand, ResponseFact> = {
      ...ignoreEffects,
      publish: async (facts) => void announced.push(...facts),
      reject: async (r) => void rejected.push(...r),
      park: async (_tx, c) => void parked.push(...c),
    };
    await unitOfWork(responseProcessor, world.orm.em, commands, effects);
    return { announced, rejected: rejected.map((r) => [r.command.eventId, r.reason]), parked };
  }

  const responses = async () => (await readSummaryBasis(em(), surveyId))!.counts.get('responses')?.n ?? 0;

  test('takes its deliveries, quota membership and summary counts with it, and is announced with ids only', async () => {
    const id = newId('rsp');
    const before = await responses();
    await apply([created(id)]);
    assert.equal(await em().count(Delivery, { responseId: id }), 2, 'created and finished, to the webhook');
    assert.equal(await em().count(QuotaMember, { responseId: id }), 1);
    assert.equal(await responses(), before + 1);

    const deletion = deleted(id);
    const { announced, rejected } = await apply([deletion]);
    assert.deepEqual(rejected, []);
    assert.deepEqual(announced, [
      {
        type: 'response.deleted',
        version: 1,
        eventId: `${id}:deleted`,
        occurredAt: deletion.occurredAt,
        appliedAt: announced[0]!.appliedAt,
        environmentId,
        responseId: id,
        surveyId,
      },
    ]);
    assert.equal(await em().count(Response, { id }), 0);
    assert.equal(await em().count(Delivery, { responseId: id }), 0);
    assert.equal(await em().count(QuotaMember, { responseId: id }), 0);
    assert.equal(await responses(), before);
  });

  test('in one batch: the changes before the deletion are announced but delivered nowhere, what follows it is rejected', async () => {
    const id = newId('rsp');
    await apply([events.responseCreated({ environmentId, surveyId, responseId: id })]);
    const [change, deletion, late] = [updated(id), deleted(id), updated(id)];
    const { announced, rejected } = await apply([change, deletion, late, deleted(id)]);
    assert.deepEqual(
      announced.map((f) => f.type),
      ['response.updated', 'response.deleted'],
    );
    assert.deepEqual(rejected, [[late.eventId, 'response_not_found']], 'a second deletion has nothing to do');
    assert.equal(await em().count(Response, { id }), 0);
    assert.equal(await em().count(Delivery, { responseId: id }), 0);
  });

  test('an update or deletion that comes after it is rejected or dropped at once, not parked', async () => {
    const id = newId('rsp');
    await apply([created(id)]);
    await apply([deleted(id)]);
    const late = updated(id);
    const { announced, rejected, parked } = await apply([late, deleted(id)]);
    assert.deepEqual([announced, parked], [[], []]);
    assert.deepEqual(rejected, [[late.eventId, 'response_not_found']]);
    assert.equal(await em().count(Response, { id }), 0);
  });
});
