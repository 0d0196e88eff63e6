import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Element, Quota } from './definition.ts';
import { fullQuotaFor, matchesQuota, quotaAnswersOf } from './quotas.ts';

const proPlan: Quota = {
  id: 'quota_pro',
  limit: 1,
  action: 'continueSurvey',
  conditions: { connector: 'and', criteria: [{ questionId: 'plan', operator: 'equals', value: 'pro' }] },
};
const everyone: Quota = { id: 'quota_all', limit: 10, action: 'endSurvey' };

test('only the answers that quota conditions read are kept', () => {
  const data = { plan: 'pro', feedback: 'x'.repeat(10_000), score: 4 };
  assert.deepEqual(quotaAnswersOf([proPlan, everyone], data), { plan: 'pro' });
  assert.deepEqual(quotaAnswersOf([everyone], data), {}, 'a quota without conditions reads no answer');
  assert.deepEqual(quotaAnswersOf([], data), {});
});

test('a full quota matched by an earlier answer is still found after a merge with later answers', () => {
  const survey = { quotas: [proPlan], fullQuotaIds: ['quota_pro'], questions: [] };
  const created = quotaAnswersOf(survey.quotas, { plan: 'pro' });
  const later = { feedback: 'only another question' };
  assert.equal(fullQuotaFor(survey, later), undefined, 'the later answers alone do not match');
  assert.equal(fullQuotaFor(survey, quotaAnswersOf(survey.quotas, { ...created, ...later })), proPlan);
  const changed = quotaAnswersOf(survey.quotas, { ...created, plan: 'free' });
  assert.equal(fullQuotaFor(survey, changed), undefined, 'a later answer overwrites an earlier one');
});

const planQuestion: Element = {
  id: 'plan',
  type: 'multipleChoiceSingle',
  headline: 'Your plan?',
  choices: [
    { id: 'c_pro', label: { default: 'Pro', de: 'Profi' } },
    { id: 'c_free', label: { default: 'Free', de: 'Kostenlos' } },
  ],
};
const byChoice = (operator: 'equals' | 'notEquals' | 'includes', value: string): Quota => ({
  id: 'q',
  limit: 1,
  action: 'endSurvey',
  conditions: { connector: 'and', criteria: [{ questionId: 'plan', operator, value }] },
});

test('a choice criterion matches an answer that names the same choice by id or by any label', () => {
  for (const value of ['c_pro', 'Pro', 'Profi']) {
    for (const answer of ['c_pro', 'Pro', 'Profi']) {
      assert.ok(
        matchesQuota(byChoice('equals', value), { plan: answer }, [planQuestion]),
        `${value} ~ ${answer}`,
      );
      assert.ok(!matchesQuota(byChoice('notEquals', value), { plan: answer }, [planQuestion]));
    }
    assert.ok(!matchesQuota(byChoice('equals', value), { plan: 'Kostenlos' }, [planQuestion]));
    assert.ok(matchesQuota(byChoice('includes', value), { plan: ['Kostenlos', 'Profi'] }, [planQuestion]));
    assert.ok(!matchesQuota(byChoice('includes', value), { plan: ['Free'] }, [planQuestion]));
  }
});

test('a criterion on a question without choices compares the answer as text', () => {
  assert.ok(matchesQuota(proPlan, { plan: 'pro' }, []));
  assert.ok(!matchesQuota(proPlan, { plan: 'Pro' }, []));
});
