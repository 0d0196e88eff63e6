import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildUserState, USER_STATE_TTL_MS } from './user-state.ts';

const contact = { id: 'ctc_1', userId: 'u1', attributes: { userId: 'u1', plan: 'pro' } };
const now = new Date('2026-11-24T10:00:00.000Z');

test('a new contact gets an empty history, the segments given and a state valid for 30 minutes', () => {
  const state = buildUserState(
    contact,
    { displays: [], respondedSurveyIds: [] },
    ['seg_srv_a', 'seg_srv_b'],
    now,
  );
  assert.deepEqual(state, {
    data: {
      userId: 'u1',
      contactId: 'ctc_1',
      segments: ['seg_srv_a', 'seg_srv_b'],
      displays: [],
      responses: [],
      lastDisplayAt: null,
    },
    expiresAt: new Date(now.getTime() + USER_STATE_TTL_MS).toISOString(),
  });
  assert.equal(state.expiresAt, '2026-11-24T10:30:00.000Z');
});

test('displays are listed newest first with lastDisplayAt the newest; responses name each survey once', () => {
  const state = buildUserState(
    contact,
    {
      displays: [
        { id: 'dsp_1', surveyId: 'srv_a', createdAt: '2026-11-20T08:00:00.000Z' },
        { id: 'dsp_2', surveyId: 'srv_b', createdAt: '2026-11-23T08:00:00.000Z' },
        { id: 'dsp_3', surveyId: 'srv_a', createdAt: '2026-11-21T08:00:00.000Z' },
      ],
      respondedSurveyIds: ['srv_a', 'srv_b', 'srv_a'],
    },
    [],
    now,
  );
  assert.deepEqual(
    state.data.displays.map((d) => d.createdAt),
    ['2026-11-23T08:00:00.000Z', '2026-11-21T08:00:00.000Z', '2026-11-20T08:00:00.000Z'],
  );
  assert.deepEqual(state.data.displays[0], { surveyId: 'srv_b', createdAt: '2026-11-23T08:00:00.000Z' });
  assert.equal(state.data.lastDisplayAt, '2026-11-23T08:00:00.000Z');
  assert.deepEqual(state.data.responses, ['srv_a', 'srv_b']);
});

test("the contact's language attribute is passed on for the widget's survey language, and left out when unset", () => {
  const empty = { displays: [], respondedSurveyIds: [] };
  const withLanguage = { ...contact, attributes: { ...contact.attributes, language: 'de' } };
  assert.equal(buildUserState(withLanguage, empty, [], now).data.language, 'de');
  assert.equal('language' in buildUserState(contact, empty, [], now).data, false);
});
