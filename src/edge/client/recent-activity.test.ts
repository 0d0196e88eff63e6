import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_PER_CONTACT, RecentContactActivity, withRecentWrites } from './recent-activity.ts';

const stored = {
  responses: [],
  membership: { digest: 'd', segmentIds: ['seg_a'] },
  displays: [{ id: 'dsp_1', surveyId: 'srv_a', createdAt: '2026-11-20T08:00:00.000Z' }],
  respondedSurveyIds: ['srv_a'],
};

test('recent writes are added to the stored activity: a display once by its id, a responded survey once', () => {
  const merged = withRecentWrites(stored, {
    displays: [
      { id: 'dsp_1', surveyId: 'srv_a', createdAt: '2026-11-20T08:00:00.000Z' },
      { id: 'dsp_2', surveyId: 'srv_b', createdAt: '2026-11-24T10:00:00.000Z' },
    ],
    respondedSurveyIds: ['srv_a', 'srv_b'],
  });
  assert.deepEqual(merged, {
    responses: [],
    membership: { digest: 'd', segmentIds: ['seg_a'] },
    displays: [
      { id: 'dsp_1', surveyId: 'srv_a', createdAt: '2026-11-20T08:00:00.000Z' },
      { id: 'dsp_2', surveyId: 'srv_b', createdAt: '2026-11-24T10:00:00.000Z' },
    ],
    respondedSurveyIds: ['srv_a', 'srv_b'],
  });
});

test('without recent writes the stored activity is answered as it is', () => {
  assert.equal(withRecentWrites(stored, { displays: [], respondedSurveyIds: [] }), stored);
});

test("a contact's writes are remembered for the time-to-live, and other contacts' are not mixed in", () => {
  let now = 1_000_000;
  const recent = new RecentContactActivity({ maxContacts: 100, ttlMs: 60_000 }, () => now);
  recent.recordDisplay('ctc_1', { id: 'dsp_1', surveyId: 'srv_a', createdAt: 'a' });
  recent.recordResponse('ctc_1', 'srv_a');
  recent.recordResponse('ctc_2', 'srv_b');
  now += 30_000;
  recent.recordDisplay('ctc_1', { id: 'dsp_2', surveyId: 'srv_b', createdAt: 'b' });
  assert.deepEqual(recent.of('ctc_1'), {
    displays: [
      { id: 'dsp_1', surveyId: 'srv_a', createdAt: 'a' },
      { id: 'dsp_2', surveyId: 'srv_b', createdAt: 'b' },
    ],
    respondedSurveyIds: ['srv_a'],
  });
  now += 40_000; // the first writes are 70 s old, the last 40 s
  assert.deepEqual(recent.of('ctc_1'), {
    displays: [{ id: 'dsp_2', surveyId: 'srv_b', createdAt: 'b' }],
    respondedSurveyIds: [],
  });
  assert.deepEqual(recent.of('ctc_unknown'), { displays: [], respondedSurveyIds: [] });
});

test('the memory is bounded: the newest writes per contact, and the contacts of the last two generations', () => {
  const recent = new RecentContactActivity({ maxContacts: 4, ttlMs: 60_000 });
  for (let i = 0; i < MAX_PER_CONTACT + 5; i++) recent.recordResponse('ctc_busy', `srv_${i}`);
  const kept = recent.of('ctc_busy').respondedSurveyIds;
  assert.equal(kept.length, MAX_PER_CONTACT);
  assert.equal(kept.at(-1), `srv_${MAX_PER_CONTACT + 4}`);
  assert.equal(kept[0], 'srv_5');

  // Generations of maxContacts / 2 = 2 contacts: the oldest generation is dropped whole.
  for (const contact of ['ctc_1', 'ctc_2', 'ctc_3', 'ctc_4', 'ctc_5'])
    recent.recordResponse(contact, 'srv_x');
  assert.deepEqual(recent.of('ctc_1').respondedSurveyIds, []);
  assert.deepEqual(recent.of('ctc_5').respondedSurveyIds, ['srv_x']);
  assert.deepEqual(recent.of('ctc_4').respondedSurveyIds, ['srv_x']);
});
