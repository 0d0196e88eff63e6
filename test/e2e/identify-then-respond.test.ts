// Read your writes across topics (issue 37): a response created after an identify of its user was
// acknowledged carries that identify's attributes in its stored snapshot, though the identify went
// to the `contacts` topic and the response to `responses`, through different edges, and the
// processor that applies them started only afterwards (so whichever of its consumers gets there
// first). Attributes identified after the response stay out of its snapshot, as in Formbricks,
// which keeps the contact's attributes as they are when the response is created.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../src/logger.ts';
import { startChorus, type Chorus } from '../../src/roles/start.ts';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { storedResponse } from '../helpers/store.ts';
import { waitFor } from '../helpers/wait.ts';

const PAIRS = 40;

describe('identify, then respond at another edge', () => {
  let first: RunningChorus;
  let second: Chorus | undefined;
  let processor: Chorus | undefined;

  before(async () => {
    first = await startTestChorus('e2e_identify_then_respond', { role: 'edge' });
    second = await startChorus({
      role: 'edge',
      env: first.world.env,
      localServices: false,
      logger: createLogger('fatal', process.stderr),
    });
  });
  after(async () => {
    await processor?.stop();
    await second?.stop();
    await first?.stop();
  });

  test('each response carries the attributes identified before it at the other edge, none identified after, whenever the processor applies them', async () => {
    const { environmentId } = await first.createEnvironment('enterprise');
    const surveyId = await first.createSurvey({ environmentId });
    const other = `http://127.0.0.1:${second!.port}`;
    const user = `/api/v1/client/${environmentId}/user`;
    const responses: { id: string; userId: string; company: string }[] = [];
    for (let i = 0; i < PAIRS; i++) {
      const userId = `visitor-${i}`;
      const company = `Company ${i}`;
      // Two edges, taken in turn for the identify: one of them holds the contact in its cache.
      const [identifyAt, respondAt] = i % 2 === 0 ? [first.baseUrl, other] : [other, first.baseUrl];
      const identified = await call(identifyAt, 'POST', user, {
        userId,
        attributes: { plan: 'pro', company },
      });
      assert.equal(identified.status, 200, JSON.stringify(identified.body));
      const created = await call(respondAt, 'POST', `/api/v1/client/${environmentId}/responses`, {
        surveyId,
        userId,
        finished: true,
        data: { q: 'answered' },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      responses.push({ id: created.body.data.id, userId, company });
      // After the response: neither the new attribute nor the new plan belongs to its snapshot.
      const later = await call(identifyAt, 'POST', user, {
        userId,
        attributes: { plan: 'enterprise', later: 'yes' },
      });
      assert.equal(later.status, 200);
    }

    // The processor starts now: its response and contact consumers each find a backlog.
    processor = await startChorus({
      role: 'processor',
      env: first.world.env,
      localServices: false,
      logger: createLogger('fatal', process.stderr),
    });
    const stored = await waitFor(
      async () => {
        const rows = await Promise.all(responses.map((r) => storedResponse(first.chorus.orm, r.id)));
        return rows.every((row) => row !== undefined) ? rows : undefined;
      },
      { what: 'every response to be stored', timeoutMs: 60_000 },
    );
    for (const [i, row] of stored.entries()) {
      const { userId, company } = responses[i]!;
      assert.deepEqual(row?.contactAttributes, { userId, plan: 'pro', company }, `response of ${userId}`);
    }
  });

  test('a stored user identified at an edge that never saw them is answered with the stored attributes merged', async () => {
    const { environmentId } = await first.createEnvironment('enterprise');
    const user = `/api/v1/client/${environmentId}/user`;
    const identified = await call(first.baseUrl, 'POST', user, {
      userId: 'u1',
      attributes: { company: 'Acme' },
    });
    assert.equal(identified.status, 200, JSON.stringify(identified.body));
    const contactId = identified.body.data.id as string;
    await waitFor(
      async () =>
        (
          await first.chorus.orm.em
            .fork()
            .getConnection()
            .execute<{ n: string }[]>('select count(*) as n from contacts where id = ?', [contactId])
        )[0]!.n === '1' || undefined,
      { what: 'the contact to be stored', timeoutMs: 30_000 },
    );
    // The second edge has not seen u1: it reads the contact from the store.
    const again = await call(`http://127.0.0.1:${second!.port}`, 'POST', user, {
      userId: 'u1',
      attributes: { plan: 'pro' },
    });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.deepEqual(again.body.data.attributes, { userId: 'u1', company: 'Acme', plan: 'pro' });
    assert.equal(again.body.data.createdAt, identified.body.data.createdAt, 'created when first identified');
  });
});
