import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planBulkUpload, type UploadedContact } from './bulk-upload.ts';

const contact = (values: Record<string, string>): UploadedContact => ({
  attributes: Object.entries(values).map(([key, value]) => ({ attributeKey: { key, name: key }, value })),
});

const known = {
  contacts: [
    { userId: 'ann', email: 'ann@example.com' },
    { userId: 'bob', email: null },
    { userId: 'cat', email: 'cat@example.com' },
  ],
  keyTypes: new Map([
    ['email', 'text' as const],
    ['seats', 'number' as const],
  ]),
};

test('a contact is the one with its email, else the one with its userId and no email, else a new one', () => {
  const plan = planBulkUpload(
    [
      contact({ email: 'ann@example.com', plan: 'pro' }),
      contact({ email: 'bob@example.com', userId: 'bob' }),
      contact({ email: 'new@example.com', userId: 'dan' }),
      contact({ email: 'eve@example.com' }),
    ],
    known,
  );
  assert.deepEqual(plan.skipped, []);
  assert.deepEqual(
    plan.identifies.map(({ index, input }) => [index, input.userId, input.attributes]),
    [
      [0, 'ann', { email: 'ann@example.com', plan: 'pro' }],
      [1, 'bob', { email: 'bob@example.com' }],
      [2, 'dan', { email: 'new@example.com' }],
      [3, 'eve@example.com', { email: 'eve@example.com' }],
    ],
  );
});

test('each contact that cannot be applied is skipped alone, with its index and the issue', () => {
  const plan = planBulkUpload(
    [
      contact({ userId: 'x1' }),
      contact({ email: 'not-an-email' }),
      {
        attributes: [
          ...contact({ email: 'a@example.com' }).attributes,
          ...contact({ email: 'b@example.com' }).attributes,
        ],
      },
      contact({ email: 'ann@example.com', userId: 'someone-else' }),
      contact({ email: 'other@example.com', userId: 'cat' }),
      contact({ email: 'k@example.com', JobTitle: 'x' }),
      contact({ email: 'r@example.com', first_name: 'x' }),
      contact({ email: 's@example.com', seats: 'many' }),
      contact({ email: 'ok@example.com', seats: '' }),
      contact({ email: 'ok@example.com' }),
    ],
    known,
  );
  assert.deepEqual(
    plan.identifies.map((i) => i.index),
    [8],
  );
  assert.deepEqual(
    plan.skipped.map((s) => [s.index, s.issue.split(/[:"]/)[0]]),
    [
      [0, 'Email attribute is required'],
      [1, 'Invalid email format'],
      [2, 'Duplicate attribute keys'],
      [3, 'The contact with this email has userId '],
      [4, 'A contact with this userId and another email already exists'],
      [5, 'Invalid attribute key '],
      [6, 'Reserved attribute key '],
      [7, 'Attribute '],
      [9, 'Duplicate email'],
    ],
  );
  assert.equal(plan.skipped[3]!.userId, 'someone-else');
  assert.equal(plan.skipped[3]!.email, 'ann@example.com');
});

test('new keys get the type their values share and the name sent; existing keys keep their type', () => {
  const plan = planBulkUpload(
    [
      contact({ email: 'a@example.com', age: '41', joined: '2024-05-01', code: '7', seats: '3' }),
      contact({ email: 'b@example.com', age: '', joined: '2025-01-31T10:00:00Z', code: 'A7' }),
    ],
    known,
  );
  assert.deepEqual(Object.fromEntries(plan.keys.map((k) => [k.key, k.type])), {
    email: 'text',
    age: 'number',
    joined: 'date',
    code: 'text',
    seats: 'number',
  });
});
