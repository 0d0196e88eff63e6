import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Element } from './definition.ts';
import { answerShapeProblems, isAnswered, missingRequiredAnswers } from './validate-answers.ts';

const choices = (...ids: string[]) => ids.map((id) => ({ id }));

/** The problems for one answer to one element of the given type. */
function problemFor(element: Omit<Element, 'id'>, answer: unknown): string | undefined {
  return answerShapeProblems([{ id: 'q', ...element }], { q: answer }).q;
}

test('a text or openText answer must be a string', () => {
  for (const type of ['text', 'openText']) {
    assert.equal(problemFor({ type }, 'hello'), undefined);
    assert.equal(problemFor({ type }, 42), 'Expected a string');
    assert.equal(problemFor({ type }, ['a']), 'Expected a string');
  }
});

test('a rating answer must be a number', () => {
  assert.equal(problemFor({ type: 'rating' }, 7), undefined);
  assert.equal(problemFor({ type: 'rating' }, '3'), 'Expected a number');
  assert.equal(problemFor({ type: 'rating' }, true), 'Expected a number');
});

test('a rating answer outside the range names the question', () => {
  const rating: Element = { id: 'stars', type: 'rating', range: 5 };
  assert.deepEqual(answerShapeProblems([rating], { stars: 6 }), {
    stars: 'Expected a number between 1 and 5',
  });
  assert.deepEqual(answerShapeProblems([rating], { stars: 0 }), {
    stars: 'Expected a number between 1 and 5',
  });
  assert.deepEqual(answerShapeProblems([rating], { stars: 1 }), {});
  assert.deepEqual(answerShapeProblems([rating], { stars: 5 }), {});
});

test('an nps answer is a number from 0 to 10', () => {
  assert.equal(problemFor({ type: 'nps' }, 0), undefined);
  assert.equal(problemFor({ type: 'nps' }, 10), undefined);
  assert.equal(problemFor({ type: 'nps' }, 11), 'Expected a number between 0 and 10');
  assert.equal(problemFor({ type: 'nps' }, -1), 'Expected a number between 0 and 10');
  assert.equal(problemFor({ type: 'nps' }, '9'), 'Expected a number');
});

test('a single-choice answer is the id of one of the choices', () => {
  const element = { type: 'multipleChoiceSingle', choices: choices('red', 'blue') };
  assert.equal(problemFor(element, 'red'), undefined);
  assert.equal(problemFor(element, 'green'), 'Expected one of the choice ids');
  assert.equal(problemFor(element, ['red']), 'Expected one of the choice ids');
});

test('a single-choice element without choices accepts any string', () => {
  assert.equal(problemFor({ type: 'multipleChoiceSingle' }, 'anything'), undefined);
  assert.equal(problemFor({ type: 'multipleChoiceSingle' }, 3), 'Expected one of the choice ids');
});

test('multi-choice, picture selection and ranking answers are arrays of choice ids', () => {
  for (const type of ['multipleChoiceMulti', 'pictureSelection', 'ranking']) {
    const element = { type, choices: choices('a', 'b', 'c') };
    assert.equal(problemFor(element, ['c', 'a']), undefined, type);
    assert.equal(problemFor(element, []), undefined, type);
    assert.equal(problemFor(element, ['a', 'z']), 'Expected an array of choice ids', type);
    assert.equal(problemFor(element, 'a'), 'Expected an array of choice ids', type);
    assert.equal(problemFor(element, [1]), 'Expected an array of choice ids', type);
  }
});

test('a matrix answer maps row ids to column ids', () => {
  const element = { type: 'matrix', rows: choices('speed', 'price'), columns: choices('bad', 'good') };
  assert.equal(problemFor(element, { speed: 'good', price: 'bad' }), undefined);
  assert.equal(problemFor(element, { speed: 'good' }), undefined);
  const wrong = 'Expected an object of row id to column id';
  assert.equal(problemFor(element, { colour: 'good' }), wrong);
  assert.equal(problemFor(element, { speed: 'great' }), wrong);
  assert.equal(problemFor(element, { speed: 1 }), wrong);
  assert.equal(problemFor(element, ['good']), wrong);
  assert.equal(problemFor(element, 'good'), wrong);
});

test('a file upload answer is an http or https URL', () => {
  const element = { type: 'fileUpload' };
  assert.equal(problemFor(element, 'https://files.example.com/a/report.pdf'), undefined);
  assert.equal(problemFor(element, 'http://files.example.com/report'), undefined);
  assert.equal(problemFor(element, 'ftp://files.example.com/report.pdf'), 'Expected a file URL');
  assert.equal(problemFor(element, 'not a url'), 'Expected a file URL');
  assert.equal(problemFor(element, 12), 'Expected a file URL');
});

test('several file URLs are accepted only when the element allows multiple files', () => {
  const urls = ['https://x.example/a.png', 'https://x.example/b.png'];
  assert.equal(problemFor({ type: 'fileUpload', allowMultipleFiles: true }, urls), undefined);
  assert.equal(problemFor({ type: 'fileUpload' }, urls), 'Expected a file URL');
  assert.equal(
    problemFor({ type: 'fileUpload', allowMultipleFiles: true }, ['https://x.example/a.png', 'nope']),
    'Expected a file URL',
  );
});

test('a file whose extension is not allowed is named by its extension', () => {
  const element = { type: 'fileUpload', allowMultipleFiles: true, allowedFileExtensions: ['pdf', 'PNG'] };
  assert.equal(problemFor(element, 'https://x.example/dir/Scan.PDF?token=1'), undefined);
  assert.equal(problemFor(element, ['https://x.example/a.png', 'https://x.example/b.pdf']), undefined);
  assert.equal(problemFor(element, 'https://x.example/setup.exe'), 'File type .exe is not allowed');
  assert.equal(
    problemFor(element, ['https://x.example/a.png', 'https://x.example/run.Exe']),
    'File type .exe is not allowed',
  );
  assert.equal(problemFor(element, 'https://x.example/README'), 'A file without a file type is not allowed');
  assert.equal(
    problemFor({ type: 'fileUpload', allowedFileExtensions: [] }, 'https://x.example/setup.exe'),
    undefined,
  );
});

test('a file larger than the limit is rejected when its URL carries its size in bytes', () => {
  const element = { type: 'fileUpload', maxSizeInMB: 2 };
  assert.equal(problemFor(element, `https://x.example/a.png?size=${2 * 1024 * 1024}`), undefined);
  assert.equal(
    problemFor(element, `https://x.example/a.png?size=${2 * 1024 * 1024 + 1}`),
    'File is larger than 2 MB',
  );
  assert.equal(problemFor(element, 'https://x.example/a.png'), undefined, 'no size parameter: not checked');
  assert.equal(
    problemFor(element, 'https://x.example/a.png?size=big'),
    undefined,
    'unreadable size: not checked',
  );
  assert.equal(problemFor({ type: 'fileUpload' }, 'https://x.example/a.png?size=999999999'), undefined);
});

test('a date answer is a real calendar date written YYYY-MM-DD', () => {
  const element = { type: 'date' };
  assert.equal(problemFor(element, '2024-02-29'), undefined);
  assert.equal(problemFor(element, '2000-02-29'), undefined);
  for (const wrong of [
    '2023-02-29',
    '1900-02-29',
    '2024-13-01',
    '2024-04-31',
    '2024-00-10',
    '2024-1-5',
    '05/01/2024',
    20240105,
  ])
    assert.equal(problemFor(element, wrong), 'Expected a date (YYYY-MM-DD)', String(wrong));
});

test('a consent answer must be "accepted"', () => {
  assert.equal(problemFor({ type: 'consent' }, 'accepted'), undefined);
  assert.equal(problemFor({ type: 'consent' }, 'dismissed'), 'Expected "accepted"');
  assert.equal(problemFor({ type: 'consent' }, true), 'Expected "accepted"');
});

test('a call-to-action answer is "clicked" or "dismissed"', () => {
  assert.equal(problemFor({ type: 'cta' }, 'clicked'), undefined);
  assert.equal(problemFor({ type: 'cta' }, 'dismissed'), undefined);
  assert.equal(problemFor({ type: 'cta' }, 'accepted'), 'Expected "clicked" or "dismissed"');
});

test('address and contact info answers are arrays of strings', () => {
  for (const type of ['address', 'contactInfo']) {
    assert.equal(problemFor({ type }, ['Main St 1', '', 'Springfield']), undefined, type);
    assert.equal(problemFor({ type }, ['a', 2]), 'Expected an array of strings', type);
    assert.equal(problemFor({ type }, 'Main St 1'), 'Expected an array of strings', type);
  }
});

test('an element of a type without a known shape accepts any answer', () => {
  assert.equal(problemFor({ type: 'somethingNew' }, { any: ['thing'] }), undefined);
  assert.equal(
    problemFor({ type: 'constructor' }, 1),
    undefined,
    'type names are not looked up on prototypes',
  );
});

test('null, undefined and the empty string are not answers, so never a shape problem', () => {
  for (const answer of [null, undefined, ''])
    assert.equal(problemFor({ type: 'rating', range: 5 }, answer), undefined);
});

test('keys of data that are not question ids, such as hidden fields, are kept and never a problem', () => {
  const data = { q1: 'fine', utm_source: 42, plan: { tier: 'pro' } };
  assert.deepEqual(answerShapeProblems([{ id: 'q1', type: 'text' }], data), {});
  assert.deepEqual(data, { q1: 'fine', utm_source: 42, plan: { tier: 'pro' } });
});

test('every wrongly shaped answer is reported under its own question id', () => {
  const questions: Element[] = [
    { id: 'name', type: 'text' },
    { id: 'score', type: 'nps' },
    { id: 'agree', type: 'consent' },
    { id: 'skipped', type: 'rating' },
  ];
  assert.deepEqual(answerShapeProblems(questions, { name: 1, score: 'ten', agree: 'accepted' }), {
    name: 'Expected a string',
    score: 'Expected a number',
  });
});

test('a question id that collides with an Object.prototype name is reported as an own key', () => {
  const problems = answerShapeProblems([{ id: '__proto__', type: 'text' }], JSON.parse('{"__proto__": 5}'));
  assert.deepEqual(Object.keys(problems), ['__proto__']);
});

test('a finished response names every required question without an answer', () => {
  const questions: Element[] = [
    { id: 'a', type: 'text', required: true },
    { id: 'b', type: 'text', required: true },
    { id: 'c', type: 'text', required: false },
    { id: 'd', type: 'text' },
  ];
  const answers: Record<string, unknown> = { a: 'yes' };
  assert.deepEqual(
    missingRequiredAnswers(questions, (id) => isAnswered(answers[id])),
    { b: 'Please fill out this field' },
  );
  assert.deepEqual(
    missingRequiredAnswers(questions, () => true),
    {},
  );
});

test('what counts as an answer', () => {
  for (const value of ['x', ' y ', 0, -2.5, false, true, ['a'], { r: 'c' }])
    assert.equal(isAnswered(value), true, JSON.stringify(value));
  for (const value of ['', '   ', null, undefined, NaN, Infinity, [], {}])
    assert.equal(isAnswered(value), false, JSON.stringify(value));
});

// The shapes the real Formbricks widget sends (widget contract §2, "What each element sends").

const labelled = (...entries: [string, unknown][]) => entries.map(([id, label]) => ({ id, label }));

test('a single-choice answer may be the label of a choice, in any of the survey languages, or a plain-string label', () => {
  const element = {
    type: 'multipleChoiceSingle',
    choices: labelled(['c1', { default: 'Founder', de: 'Gründer' }], ['c2', 'Engineer']),
  };
  for (const answer of ['c1', 'Founder', 'Gründer', 'Engineer', 'c2'])
    assert.equal(problemFor(element, answer), undefined, answer);
  assert.equal(problemFor(element, 'Designer'), 'Expected one of the choice ids');
  assert.equal(problemFor(element, ['Founder']), 'Expected one of the choice ids');
});

test('an element with an "other" choice takes the free text the respondent typed', () => {
  const single = {
    type: 'multipleChoiceSingle',
    choices: labelled(['c1', { default: 'Founder' }], ['other', { default: 'Other' }]),
  };
  assert.equal(problemFor(single, 'Freelance illustrator'), undefined);
  assert.equal(problemFor(single, 3), 'Expected one of the choice ids');
  const multi = { ...single, type: 'multipleChoiceMulti' };
  // The widget marks "other" with an empty string followed by the text.
  assert.equal(problemFor(multi, ['Founder', '', 'Freelance illustrator']), undefined);
  assert.equal(problemFor(multi, ['Founder', '']), undefined);
  assert.equal(problemFor(multi, ['Founder', 7]), 'Expected an array of choice ids');
  const withoutOther = { type: 'multipleChoiceMulti', choices: labelled(['c1', { default: 'Founder' }]) };
  assert.equal(problemFor(withoutOther, ['Founder', '', 'typed']), 'Expected an array of choice ids');
});

test('multi-choice and ranking answers may be arrays of labels, mixed with ids', () => {
  for (const type of ['multipleChoiceMulti', 'ranking']) {
    const element = {
      type,
      choices: labelled(['a', { default: 'Alpha', fr: 'Alpha-fr' }], ['b', { default: 'Beta' }]),
    };
    assert.equal(problemFor(element, ['Beta', 'Alpha-fr']), undefined, type);
    assert.equal(problemFor(element, ['b', 'Alpha']), undefined, type);
    assert.equal(problemFor(element, ['Gamma']), 'Expected an array of choice ids', type);
  }
});

test('a matrix answer may map row labels to column labels, in any language', () => {
  const element = {
    type: 'matrix',
    rows: labelled(['r1', { default: 'Speed', de: 'Tempo' }], ['r2', { default: 'Price' }]),
    columns: labelled(['c1', { default: 'Bad' }], ['c2', { default: 'Good', de: 'Gut' }]),
  };
  assert.equal(problemFor(element, { Speed: 'Good', Price: 'Bad' }), undefined);
  assert.equal(problemFor(element, { Tempo: 'Gut' }), undefined);
  assert.equal(problemFor(element, { r1: 'c2' }), undefined);
  assert.equal(problemFor(element, {}), undefined, 'the widget sends {} when every row is cleared');
  assert.equal(problemFor(element, { Colour: 'Good' }), 'Expected an object of row id to column id');
  assert.equal(problemFor(element, { Speed: 'Great' }), 'Expected an object of row id to column id');
});

test('a label that is an empty string in some language does not make the empty string a choice', () => {
  const element = { type: 'multipleChoiceMulti', choices: labelled(['a', { default: 'Alpha', de: '' }]) };
  assert.equal(problemFor(element, ['']), 'Expected an array of choice ids');
});

test('a single file upload answer may be an array of one URL, as the widget always sends', () => {
  const element = { type: 'fileUpload' };
  assert.equal(problemFor(element, ['https://x.example/a.png']), undefined);
  assert.equal(problemFor(element, []), undefined, 'an empty array is "not answered"');
  assert.equal(
    problemFor(element, ['https://x.example/a.png', 'https://x.example/b.png']),
    'Expected a file URL',
  );
  assert.equal(problemFor(element, ['not a url']), 'Expected a file URL');
});

test('a file URL may be a relative storage path, as Formbricks uploads answer it, and its extension is checked', () => {
  const path = '/storage/env_1/private/surveys/srv_1/elements/q1/report--fid--0f8e.pdf';
  assert.equal(problemFor({ type: 'fileUpload' }, [path]), undefined);
  assert.equal(problemFor({ type: 'fileUpload' }, path), undefined);
  const pdfOnly = { type: 'fileUpload', allowedFileExtensions: ['pdf'] };
  assert.equal(problemFor(pdfOnly, [path]), undefined);
  assert.equal(problemFor(pdfOnly, ['/storage/env_1/private/x/run.exe']), 'File type .exe is not allowed');
  for (const wrong of ['storage/a.pdf', 'javascript:alert(1)', 'ftp://x.example/a.pdf'])
    assert.equal(problemFor({ type: 'fileUpload' }, [wrong]), 'Expected a file URL', wrong);
});
