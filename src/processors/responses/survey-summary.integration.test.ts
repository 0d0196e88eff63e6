// The summaries the processors keep, against real Kafka and PostgreSQL: after a random workload —
// partial responses, updates, finishes, displays, updates that arrive before their create (as after
// partitions were added), redeliveries, batches applied twice, deletions — the kept sums equal a
// computation from scratch over the stored responses and displays, field by field.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import type { DisplayCreated } from '../../events/displays.ts';
import type { ResponseCommand } from '../../events/responses.ts';
import { newId } from '../../ids.ts';
import { runConsumer, type RunningConsumer } from '../../kafka/consumer.ts';
import { batchHandler, unitOfWork } from '../../pipeline/batch-handler.ts';
import { startParking } from '../../pipeline/parking.ts';
import { startSummaryRecounts } from '../../pipeline/summary-recounts.ts';
import type { Polling } from '../../pipeline/polling.ts';
import { parkedForDecidedResponses } from '../../store/parked-commands.ts';
import { Display, ParkedCommand, Response, SummaryRecount, Survey } from '../../store/entities.ts';
import { deleteContact, findContact } from '../../store/contacts.ts';
import { createEnvironment } from '../../store/environments.ts';
import { readSummaryBasis, recountRequested, requestRecount } from '../../store/summary-counts.ts';
import type { EntityManager } from '../../store/orm.ts';
import { createSurvey, updateSurvey } from '../../store/surveys.ts';
import { contributionOf, counterKey, type Tally } from '../../summaries/contributions.ts';
import { surveyShape } from '../../summaries/survey-shape.ts';
import { summarize } from '../../summaries/summary.ts';
import type { ResponseState } from '../../responses/state.ts';
import type { Block } from '../../surveys/definition.ts';
import {
  createProcessorWorld,
  ignoreEffects,
  type ProcessorWorld,
} from '../../../test/helpers/processor-world.ts';
import {
  displayCreated,
  responseCreated,
  responseDeleted,
  responseUpdated,
} from '../../../test/helpers/events.ts';
import { waitFor } from '../../../test/helpers/wait.ts';
import { displayProcessor } from '../displays/display-processor.ts';
import { responseProcessor } from './response-processor.ts';

const BLOCKS: Block[] = [
  {
    id: 'b1',
    elements: [
      { id: 'text', type: 'openText', headline: { default: 'Why?' } },
      { id: 'nps', type: 'nps', headline: { default: 'Recommend us?' } },
    ],
  },
  {
    id: 'b2',
    elements: [
      {
        id: 'pick',
        type: 'multipleChoiceMulti',
        headline: { default: 'Pick' },
        choices: [
          { id: 'a', label: { default: 'A', de: 'Ä' } },
          { id: 'b', label: { default: 'B', de: 'Bé' } },
          { id: 'other', label: { default: 'Other' } },
        ],
      },
    ],
  },
  { id: 'b3', elements: [{ id: 'rate', type: 'rating', range: 5, headline: { default: 'Rate' } }] },
  { id: 'b4', elements: [{ id: 'ok', type: 'consent', headline: { default: 'OK?' } }] },
];

/** What a block submit of the survey's client sends: some answers, some skips, their times. */
function blockAnswers(block: number): { data: Record<string, unknown>; ttc: Record<string, number> } {
  const time = randomInt(1, 5_000);
  const pickOne = <T>(values: T[]) => values[randomInt(values.length)]!;
  switch (block) {
    case 0:
      return {
        data: {
          ...(randomInt(3) > 0 ? { text: pickOne(['good', 'bad', '', 'fine']) } : {}),
          ...(randomInt(4) > 0 ? { nps: randomInt(11) } : {}),
        },
        ttc: { text: time, nps: time },
      };
    case 1:
      return {
        data: { pick: pickOne([['A'], ['B', 'A'], ['Ä'], ['something else'], []]) },
        ttc: { pick: time },
      };
    case 2:
      return { data: randomInt(3) > 0 ? { rate: randomInt(1, 6) } : {}, ttc: { rate: time } };
    default:
      return { data: { ok: pickOne(['accepted', '']) }, ttc: { ok: time } };
  }
}

/** The sums from scratch: every stored response's contribution and every stored display. */
async function recount(
  world: ProcessorWorld,
  surveyId: string,
  blocks: Block[],
): Promise<Map<string, Tally>> {
  const em = world.orm.em.fork();
  const shape = surveyShape({ blocks, widget: null });
  const sums = new Map<string, Tally>();
  for (const row of await em.find(Response, { surveyId })) {
    const state = { ...row, createdAt: row.createdAt.toISOString() } as unknown as ResponseState;
    for (const [key, { n, total }] of contributionOf(state, shape)) {
      const sum = sums.get(key) ?? { n: 0, total: 0 };
      sums.set(key, { n: sum.n + n, total: sum.total + total });
    }
  }
  const displays = await em.count(Display, { surveyId });
  if (displays > 0) sums.set(counterKey('displays'), { n: displays, total: 0 });
  return sums;
}

/** Counters that are all zero are the same as absent ones. */
const nonZero = (sums: Map<string, Tally>) =>
  new Map([...sums].filter(([, t]) => t.n !== 0 || t.total !== 0).sort(([a], [b]) => (a < b ? -1 : 1)));

describe('survey summaries kept by the processors', () => {
  let world: ProcessorWorld;
  let consumers: RunningConsumer[];
  let parking: Polling;
  let environmentId: string;
  let surveyId: string;

  before(async () => {
    world = await createProcessorWorld('summaries');
    const em = world.orm.em.fork();
    ({ environmentId } = await createEnvironment(em, { plan: 'enterprise', name: 'summaries' }));
    surveyId = (await createSurvey(em, { environmentId, status: 'inProgress', blocks: BLOCKS })).id;
    const effects = { orm: world.orm, deadLetters: world.outputs.deadLetters, logger: world.logger };
    const consume = (
      topic: 'responses' | 'displays',
      handler: Parameters<typeof runConsumer>[1]['handler'],
    ) =>
      runConsumer(
        world.kafka,
        {
          groupId: `${world.config.kafka.groupPrefix}.${topic}`,
          topic: world.topics[topic],
          concurrency: 4,
          handler,
        },
        world.logger,
      );
    const responses = batchHandler(responseProcessor, { ...effects, output: world.outputs.responseEvents });
    parking = startParking({
      ...effects,
      topic: world.topics.responses,
      handler: responses,
      ready: parkedForDecidedResponses,
      expiry: { seconds: 300, reason: 'response_not_found' },
      idleMs: 100,
    });
    consumers = await Promise.all([
      consume('responses', responses),
      consume(
        'displays',
        batchHandler(displayProcessor, { ...effects, output: world.outputs.displayEvents }),
      ),
    ]);
  });
  after(async () => {
    await parking.stop();
    await Promise.all(consumers.map((c) => c.stop()));
    await world.close();
  });

  test('after a random workload with early updates, redeliveries and deletions, the kept sums equal a recount of the stored responses', async () => {
    const commands: ResponseCommand[] = [];
    const displays: DisplayCreated[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 120; i++) {
      const responseId = newId('rsp');
      const displayId = newId('dsp');
      if (randomInt(5) > 0) displays.push(displayCreated({ environmentId, surveyId, displayId }));
      if (randomInt(6) === 0) continue; // a display that never became a response
      ids.push(responseId);
      const blocks = randomInt(1, 5);
      const first = blockAnswers(0);
      commands.push(
        responseCreated({
          environmentId,
          surveyId,
          responseId,
          displayId,
          language: randomInt(4) === 0 ? 'de' : 'default',
          ...first,
          finished: blocks === 1 && randomInt(2) === 0,
        }),
      );
      for (let b = 1; b < blocks; b++)
        commands.push(
          responseUpdated({
            environmentId,
            responseId,
            ...blockAnswers(b),
            finished: b === blocks - 1 && randomInt(3) > 0,
          }),
        );
    }
    // Every fifth command is delivered twice, the second time later. A response in five arrives as
    // for a moment after partitions were added: its updates through its new partition before its
    // create, applied from the old partition a moment later (the updates wait for it).
    const redelivered = commands.filter((_, i) => i % 5 === 0);
    const late = new Set(ids.filter(() => randomInt(5) === 0));
    const isLate = (c: ResponseCommand) => c.type === 'response.created' && late.has(c.responseId);
    const publish = (topic: string, key: string, value: unknown) =>
      world.publisher.publish({ topic, key, value: JSON.stringify(value) });
    await Promise.all([
      ...[...commands.filter((c) => !isLate(c)), ...redelivered.filter((c) => !isLate(c))].map((c) =>
        publish(world.topics.responses, c.responseId, c),
      ),
      ...[...displays, ...displays.slice(0, 10)].map((d) => publish(world.topics.displays, d.displayId, d)),
    ]);
    const early = commands.some((c) => c.type === 'response.updated' && late.has(c.responseId));
    await waitFor(async () => !early || (await world.orm.em.fork().count(ParkedCommand, {})) > 0, {
      what: 'early updates waiting',
    });
    await unitOfWork(responseProcessor, world.orm.em, commands.filter(isLate), ignoreEffects);
    const lastUpdates = new Map(commands.map((c) => [c.responseId, c]));
    await waitFor(
      async () => {
        const em = world.orm.em.fork();
        const [stored, shown] = await Promise.all([
          em.count(Response, { surveyId }),
          em.count(Display, { surveyId }),
        ]);
        if (stored < ids.length || shown < displays.length) return false;
        // Every response's last command applied: its update time is that command's.
        const rows = await em.find(Response, { surveyId });
        return rows.every((r) => r.updatedAt.toISOString() >= lastUpdates.get(r.id)!.occurredAt);
      },
      { what: 'every response and display stored', timeoutMs: 60_000 },
    );

    // A batch applied again (a crash after the commit, before the offset commit) changes nothing.
    await unitOfWork(responseProcessor, world.orm.em, commands.slice(0, 20), ignoreEffects);

    const { meta } = await assertKeptEqualsRecount();
    assert.equal(meta.totalResponses, ids.length);
    assert.equal(meta.displayCount, displays.length);

    // A response in four is deleted (some twice, as two management requests may), and some get an
    // update after their deletion: none of it may count again.
    const gone = ids.filter(() => randomInt(4) === 0);
    const deletions = gone.map((responseId) => responseDeleted({ environmentId, responseId }));
    const after = [
      ...deletions,
      ...deletions.slice(0, 5),
      ...gone.slice(0, 5).map((responseId) => responseDeleted({ environmentId, responseId })),
      ...gone
        .slice(5, 10)
        .map((responseId) => responseUpdated({ environmentId, responseId, data: { nps: 1 } })),
    ];
    await Promise.all(after.map((c) => publish(world.topics.responses, c.responseId, c)));
    await waitFor(async () => (await world.orm.em.fork().count(Response, { id: { $in: gone } })) === 0, {
      what: 'the deleted responses gone',
      timeoutMs: 30_000,
    });
    const afterDeletions = await assertKeptEqualsRecount();
    assert.equal(afterDeletions.meta.totalResponses, ids.length - gone.length);
    assert.equal(afterDeletions.meta.displayCount, displays.length, 'the displays stay');
  });

  test("a deleted contact's responses and displays leave the summary as if they had never been there", async () => {
    const { meta: before } = await assertKeptEqualsRecount();
    const userId = `leaver_${newId('evt')}`;
    const responseId = newId('rsp');
    const display = displayCreated({ environmentId, surveyId, userId });
    const create = responseCreated({
      environmentId,
      surveyId,
      responseId,
      userId,
      displayId: display.displayId,
      ...blockAnswers(0),
    });
    await Promise.all([
      world.publisher.publish({
        topic: world.topics.displays,
        key: display.displayId,
        value: JSON.stringify(display),
      }),
      world.publisher.publish({
        topic: world.topics.responses,
        key: responseId,
        value: JSON.stringify(create),
      }),
    ]);
    const contactId = await waitFor(
      async () => {
        const em = world.orm.em.fork();
        const [response, shown] = await Promise.all([
          em.findOne(Response, { id: responseId }),
          em.count(Display, { id: display.displayId }),
        ]);
        return response?.contactId && shown === 1 ? response.contactId : undefined;
      },
      { what: "the contact's response and display", timeoutMs: 30_000 },
    );
    const { meta: during } = await assertKeptEqualsRecount();
    assert.deepEqual(
      [during.totalResponses, during.displayCount],
      [before.totalResponses + 1, before.displayCount + 1],
    );

    await deleteContact(world.orm.em, (await findContact(world.orm.em, contactId))!);
    const { meta: after } = await assertKeptEqualsRecount();
    assert.deepEqual(after, before);
  });

  test('an edit that reorders blocks and removes an element counts the survey again; changes meanwhile count once, by the new definition', async () => {
    const recounts = startSummaryRecounts({ orm: world.orm, logger: world.logger, idleMs: 50 });
    try {
      // The last block first; the NPS element leaves the first block; the rest as they were.
      const [first, ...rest] = BLOCKS;
      const edited: Block[] = [
        rest.at(-1)!,
        { ...first!, elements: first!.elements.filter((e) => e.id !== 'nps') },
        ...rest.slice(0, -1),
      ];
      const editing = world.orm.em.fork();
      const survey = await editing.findOneOrFail(Survey, { id: surveyId });
      // Responses go on arriving while the survey is edited and counted again.
      const more: ResponseCommand[] = [];
      for (let i = 0; i < 30; i++) {
        const responseId = newId('rsp');
        more.push(responseCreated({ environmentId, surveyId, responseId, ...blockAnswers(0) }));
        more.push(responseUpdated({ environmentId, responseId, ...blockAnswers(3), finished: i % 2 === 0 }));
      }
      const sending = Promise.all(
        more.map((c) =>
          world.publisher.publish({
            topic: world.topics.responses,
            key: c.responseId,
            value: JSON.stringify(c),
          }),
        ),
      );
      await updateSurvey(editing, survey, { blocks: edited });
      await sending;
      const lastOf = new Map(more.map((c) => [c.responseId, c.occurredAt]));
      await waitFor(
        async () => {
          const em = world.orm.em.fork();
          const [requests, rows] = await Promise.all([
            em.count(SummaryRecount, {}),
            em.find(Response, { id: { $in: [...lastOf.keys()] } }),
          ]);
          return (
            requests === 0 &&
            rows.length === lastOf.size &&
            rows.every((r) => r.updatedAt.toISOString() >= lastOf.get(r.id)!)
          );
        },
        { what: 'the recount done and the new responses stored', timeoutMs: 30_000 },
      );
      const { dropOff } = await assertKeptEqualsRecount(edited);
      assert.deepEqual(
        dropOff.map((row) => row.elementId),
        ['ok', 'text', 'pick', 'rate'],
      );
    } finally {
      await recounts.stop();
    }
  });

  test('a survey edited again while it is counted keeps no difference from that count, and the next count does the job', async () => {
    const em = world.orm.em;
    // The count's read-only snapshot first lets an edit ask again, as one made then would.
    const editedMeanwhile = new Proxy(em, {
      get(target, property) {
        if (property !== 'fork') return Reflect.get(target, property, target) as unknown;
        return () => {
          const fork = target.fork();
          return new Proxy(fork, {
            get(f, name) {
              if (name !== 'transactional') return Reflect.get(f, name, f) as unknown;
              return async (
                work: (tx: EntityManager) => Promise<unknown>,
                options?: { readOnly?: boolean },
              ) => {
                if (options?.readOnly === true)
                  await target.fork().transactional((tx) => requestRecount(tx, surveyId));
                return f.transactional(work, options);
              };
            },
          });
        };
      },
    });
    await em.fork().transactional((tx) => requestRecount(tx, surveyId));
    const first = await recountRequested(editedMeanwhile);
    assert.deepEqual([first?.surveyId, first?.kept], [surveyId, false]);
    const request = await em.fork().findOneOrFail(SummaryRecount, { surveyId });
    assert.equal(request.claimedAt, null, 'asked again, unclaimed');
    const second = await recountRequested(em);
    assert.deepEqual([second?.surveyId, second?.kept], [surveyId, true]);
    assert.equal(await recountRequested(em), undefined, 'nothing left to count');
  });

  /** The kept sums equal the recount, and so do the summaries read from them. */
  async function assertKeptEqualsRecount(blocks = BLOCKS) {
    const kept = nonZero((await readSummaryBasis(world.orm.em.fork(), surveyId))!.counts);
    const recounted = nonZero(await recount(world, surveyId, blocks));
    assert.deepEqual(kept, recounted);
    const shape = surveyShape({ blocks, widget: null });
    const read = (counts: Map<string, Tally>) => summarize({ shape, counts, samples: new Map(), quotas: [] });
    assert.deepEqual(read(kept), read(recounted));
    return read(kept);
  }
});
