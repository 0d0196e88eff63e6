import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cleanFileName, uploadLocation } from './file-names.ts';

test('a file name loses path separators, control and URL-breaking characters, and keeps its last extension', () => {
  assert.deepEqual(cleanFileName('receipt.PDF'), { base: 'receipt', extension: 'pdf' });
  assert.deepEqual(cleanFileName('../../etc/passwd.txt'), { base: '..-..-etc-passwd', extension: 'txt' });
  assert.deepEqual(cleanFileName('my  "best"\tphoto?.tar.gz'), {
    base: 'my best photo.tar',
    extension: 'gz',
  });
  assert.deepEqual(cleanFileName('a\u0000b.png'), { base: 'ab', extension: 'png' });
});

test('a name with nothing usable left, or without an extension, says why', () => {
  assert.deepEqual(cleanFileName('.pdf'), { problem: 'File name is empty once cleaned' });
  assert.deepEqual(cleanFileName('---.pdf'), { problem: 'File name is empty once cleaned' });
  assert.deepEqual(cleanFileName('README'), { problem: 'File name must have an extension' });
  assert.deepEqual(cleanFileName('photo.???'), { problem: 'File name must have an extension' });
});

test("the key is under the environment's private folder, by survey and element, and the file URL is its relative /storage path, encoded", () => {
  const name = { base: 'Quittung März', extension: 'pdf' };
  assert.deepEqual(
    uploadLocation({ environmentId: 'env_1', surveyId: 'srv_1', elementId: 'q/1' }, name, 'u-1'),
    {
      key: 'env_1/private/surveys/srv_1/elements/q/1/Quittung März--fid--u-1.pdf',
      fileUrl: '/storage/env_1/private/surveys/srv_1/elements/q%2F1/Quittung%20M%C3%A4rz--fid--u-1.pdf',
    },
  );
  assert.deepEqual(
    uploadLocation({ environmentId: 'env_1', surveyId: 'srv_1', elementId: undefined }, name, 'u-2'),
    {
      key: 'env_1/private/surveys/srv_1/Quittung März--fid--u-2.pdf',
      fileUrl: '/storage/env_1/private/surveys/srv_1/Quittung%20M%C3%A4rz--fid--u-2.pdf',
    },
  );
});
