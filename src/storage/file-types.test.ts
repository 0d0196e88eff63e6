import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UPLOADABLE_EXTENSIONS, uploadContentType } from './file-types.ts';

test('a known file type is signed with the content type the browser declared when it fits the name', () => {
  assert.deepEqual(uploadContentType('pdf', 'application/pdf'), { contentType: 'application/pdf' });
  assert.deepEqual(uploadContentType('jpg', 'Image/JPEG; charset=binary'), { contentType: 'image/jpeg' });
  assert.deepEqual(uploadContentType('heic', 'image/heif'), { contentType: 'image/heif' });
});

test("a type the browser didn't know is signed as the extension's usual type", () => {
  assert.deepEqual(uploadContentType('heic', ''), { contentType: 'image/heic' });
  assert.deepEqual(uploadContentType('eml', 'application/octet-stream'), { contentType: 'message/rfc822' });
});

test('executables, scripts and pages are never signed, whatever the survey allows', () => {
  for (const extension of ['exe', 'html', 'svg', 'js', 'sh', 'bat', 'php']) {
    assert.ok(!UPLOADABLE_EXTENSIONS.includes(extension), extension);
    assert.deepEqual(uploadContentType(extension, 'application/octet-stream'), {
      problem: `File type .${extension} is not allowed`,
    });
  }
});

test('a content type that contradicts the name is refused', () => {
  assert.deepEqual(uploadContentType('png', 'text/html'), {
    problem: 'Content type text/html does not match a .png file',
  });
  assert.deepEqual(uploadContentType('pdf', 'image/svg+xml'), {
    problem: 'Content type image/svg+xml does not match a .pdf file',
  });
});
