import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResponseChangeFact } from '../../events/response-events.ts';
import type { DeliveryTargets, FiredWebhook } from '../../store/delivery-targets.ts';
import { deliveryId } from '../../store/integrations.ts';
import { responseFact } from '../../../test/helpers/events.ts';
import { deliveriesOf, type AnnouncedFact } from './enqueue-deliveries.ts';

const ENV = 'env_a';
const SURVEY = 'srv_a';
const trace = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };

const fact = (type: ResponseChangeFact['type'], fields: { surveyId?: string; environmentId?: string } = {}) =>
  responseFact(type, { environmentId: ENV, surveyId: SURVEY, responseId: 'rsp_1', ...fields });
const announced = (...facts: ResponseChangeFact[]): AnnouncedFact[] =>
  facts.map((f) => ({ fact: f, trace, replayed: false }));

const link = (id: string, surveyId = SURVEY) => ({ id, surveyId, integrationId: `int_${id}` });
const webhook = (id: string, fields: Partial<FiredWebhook> = {}): FiredWebhook => ({
  id,
  environmentId: ENV,
  triggers: ['responseCreated', 'responseUpdated', 'responseFinished'],
  surveyIds: [],
  ...fields,
});
const targets = (fields: Partial<DeliveryTargets>): DeliveryTargets => ({
  links: [],
  webhooks: [],
  ...fields,
});

test('a finished response makes one delivery per link of its survey, with its snapshot and trace', () => {
  const finished = fact('response.finished');
  const { links, webhooks } = deliveriesOf(
    announced(fact('response.created'), finished),
    targets({ links: [link('lnk_1'), link('lnk_2'), link('lnk_other', 'srv_other')] }),
  );
  const made = { madeAt: new Date(finished.occurredAt), rank: 2, replayed: false };
  assert.deepEqual(links, [
    { responseId: 'rsp_1', link: link('lnk_1'), response: finished.response, trace, ...made },
    { responseId: 'rsp_1', link: link('lnk_2'), response: finished.response, trace, ...made },
  ]);
  assert.deepEqual(webhooks, []);
});

test('created and updated responses go to no link', () => {
  const { links } = deliveriesOf(
    announced(fact('response.created'), fact('response.updated')),
    targets({ links: [link('lnk_1')] }),
  );
  assert.deepEqual(links, []);
});

test("each fact fires the webhook trigger of Formbricks' name, once per webhook that listens to it", () => {
  const facts = [fact('response.created'), fact('response.updated'), fact('response.finished')];
  const { webhooks } = deliveriesOf(
    announced(...facts),
    targets({ webhooks: [webhook('whk_all'), webhook('whk_finish', { triggers: ['responseFinished'] })] }),
  );
  assert.deepEqual(
    webhooks.map((w) => [w.webhookId, w.event, w.eventId]),
    [
      ['whk_all', 'responseCreated', facts[0]!.eventId],
      ['whk_all', 'responseUpdated', facts[1]!.eventId],
      ['whk_all', 'responseFinished', facts[2]!.eventId],
      ['whk_finish', 'responseFinished', facts[2]!.eventId],
    ],
  );
  assert.ok(webhooks.every((w) => w.trace === trace && w.responseId === 'rsp_1'));
  assert.equal(webhooks[2]!.response, facts[2]!.response);
  const [created, updated, finished] = webhooks.map((w) => deliveryId(w, w.webhookId, w.eventId));
  assert.ok(created! < updated! && updated! < finished!, 'ids in the order of the facts, of one time');
});

test('a webhook fires for its own environment and, when it names surveys, only for those', () => {
  const { webhooks } = deliveriesOf(
    announced(fact('response.created'), fact('response.created', { surveyId: 'srv_b' })),
    targets({
      webhooks: [
        webhook('whk_survey_b', { surveyIds: ['srv_b'] }),
        webhook('whk_elsewhere', { environmentId: 'env_b' }),
      ],
    }),
  );
  assert.deepEqual(
    webhooks.map((w) => w.webhookId),
    ['whk_survey_b'],
  );
});

test('each delivery carries the time its command was made, and whether a replay made it again', () => {
  const finished = fact('response.finished');
  const { links, webhooks } = deliveriesOf(
    [{ fact: finished, trace, replayed: true }],
    targets({ links: [link('lnk_1')], webhooks: [webhook('whk_all')] }),
  );
  const madeAt = new Date(finished.occurredAt);
  assert.deepEqual(
    [...links, ...webhooks].map((d) => [d.madeAt, d.replayed]),
    [
      [madeAt, true],
      [madeAt, true],
    ],
  );
  assert.equal(
    deliveriesOf(announced(finished), targets({ links: [link('lnk_1')] })).links[0]!.replayed,
    false,
  );
});

test('without targets nothing is delivered', () => {
  assert.deepEqual(deliveriesOf(announced(fact('response.finished')), targets({})), {
    links: [],
    webhooks: [],
  });
});
