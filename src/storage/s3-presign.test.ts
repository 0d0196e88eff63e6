import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { amzDate, bucketUrl, presignPost, signature, signingKey, type S3Target } from './s3-presign.ts';

// The example credentials of the AWS documentation.
const ACCESS_KEY = 'AKIAIOSFODNN7EXAMPLE';
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

test('the signing key is derived as in the AWS SigV4 documentation example (iam, us-east-1, 20120215)', () => {
  const key = signingKey('wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', '20120215', 'us-east-1', 'iam');
  assert.equal(key.toString('hex'), 'f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d');
});

test('a POST policy is signed as in the S3 browser-upload example ("Example: Browser-Based Upload using HTTP POST")', () => {
  // The example's base64 policy, exactly as the page gives it (its JSON has CRLF line ends).
  const policy =
    'eyAiZXhwaXJhdGlvbiI6ICIyMDE1LTEyLTMwVDEyOjAwOjAwLjAwMFoiLA0KICAiY29uZGl0aW9ucyI6IFsNCiAgICB7ImJ1Y2tldCI6ICJzaWd2NGV4YW1wbGVidWNrZXQifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRrZXkiLCAidXNlci91c2VyMS8iXSwNCiAgICB7ImFjbCI6ICJwdWJsaWMtcmVhZCJ9LA0KICAgIHsic3VjY2Vzc19hY3Rpb25fcmVkaXJlY3QiOiAiaHR0cDovL3NpZ3Y0ZXhhbXBsZWJ1Y2tldC5zMy5hbWF6b25hd3MuY29tL3N1Y2Nlc3NmdWxfdXBsb2FkLmh0bWwifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRDb250ZW50LVR5cGUiLCAiaW1hZ2UvIl0sDQogICAgeyJ4LWFtei1tZXRhLXV1aWQiOiAiMTQzNjUxMjM2NTEyNzQifSwNCiAgICB7IngtYW16LXNlcnZlci1zaWRlLWVuY3J5cHRpb24iOiAiQUVTMjU2In0sDQogICAgWyJzdGFydHMtd2l0aCIsICIkeC1hbXotbWV0YS10YWciLCAiIl0sDQoNCiAgICB7IngtYW16LWNyZWRlbnRpYWwiOiAiQUtJQUlPU0ZPRE5ON0VYQU1QTEUvMjAxNTEyMjkvdXMtZWFzdC0xL3MzL2F3czRfcmVxdWVzdCJ9LA0KICAgIHsieC1hbXotYWxnb3JpdGhtIjogIkFXUzQtSE1BQy1TSEEyNTYifSwNCiAgICB7IngtYW16LWRhdGUiOiAiMjAxNTEyMjlUMDAwMDAwWiIgfQ0KICBdDQp9';
  const key = signingKey(SECRET, '20151229', 'us-east-1', 's3');
  assert.equal(signature(key, policy), '8afdbf4008c03f22c2cd3cdb72e4afbb1f6a588f3255ac628749a66d7f09699e');
});

test('a presigned GET URL is signed as in the S3 query-string example (examplebucket/test.txt, 20130524)', () => {
  const canonicalRequest = [
    'GET',
    '/test.txt',
    'X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host',
    'host:examplebucket.s3.amazonaws.com',
    '',
    'host',
    'UNSIGNED-PAYLOAD',
  ].join('\n');
  const stringToSign = [
    'AWS4-HMAC-SHA256',
    '20130524T000000Z',
    '20130524/us-east-1/s3/aws4_request',
    createHash('sha256').update(canonicalRequest).digest('hex'),
  ].join('\n');
  const key = signingKey(SECRET, '20130524', 'us-east-1', 's3');
  assert.equal(
    signature(key, stringToSign),
    'aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
  );
});

const TARGET: S3Target = {
  accessKeyId: ACCESS_KEY,
  secretAccessKey: SECRET,
  region: 'eu-central-1',
  bucket: 'uploads',
  endpoint: 'https://s3.eu-central-1.amazonaws.com',
  forcePathStyle: false,
};

test('the bucket URL is virtual-hosted by default and path-style when forced', () => {
  assert.equal(bucketUrl(TARGET), 'https://uploads.s3.eu-central-1.amazonaws.com');
  assert.equal(
    bucketUrl({ ...TARGET, endpoint: 'http://127.0.0.1:9000', forcePathStyle: true }),
    'http://127.0.0.1:9000/uploads',
  );
  assert.equal(
    bucketUrl({ ...TARGET, endpoint: 'http://minio.local:9000' }),
    'http://uploads.minio.local:9000',
  );
});

test('a presigned POST fixes bucket, key and type, bounds the size, expires, and is signed over its policy', () => {
  const now = new Date('2026-03-01T10:20:30.456Z');
  const post = presignPost(TARGET, {
    key: 'env_1/private/receipt--fid--x.pdf',
    contentType: 'application/pdf',
    maxBytes: 1024,
    expiresInSeconds: 120,
    now,
  });
  assert.equal(amzDate(now), '20260301T102030Z');
  assert.equal(post.url, 'https://uploads.s3.eu-central-1.amazonaws.com');
  const { Policy, 'X-Amz-Signature': signed, ...fields } = post.fields;
  assert.deepEqual(fields, {
    bucket: 'uploads',
    key: 'env_1/private/receipt--fid--x.pdf',
    'Content-Type': 'application/pdf',
    'X-Amz-Algorithm': 'AWS4-HMAC-SHA256',
    'X-Amz-Credential': 'AKIAIOSFODNN7EXAMPLE/20260301/eu-central-1/s3/aws4_request',
    'X-Amz-Date': '20260301T102030Z',
  });
  assert.deepEqual(JSON.parse(Buffer.from(Policy ?? '', 'base64').toString('utf8')), {
    expiration: '2026-03-01T10:22:30.456Z',
    conditions: [
      { bucket: 'uploads' },
      { key: 'env_1/private/receipt--fid--x.pdf' },
      { 'Content-Type': 'application/pdf' },
      { 'X-Amz-Algorithm': 'AWS4-HMAC-SHA256' },
      { 'X-Amz-Credential': 'AKIAIOSFODNN7EXAMPLE/20260301/eu-central-1/s3/aws4_request' },
      { 'X-Amz-Date': '20260301T102030Z' },
      ['content-length-range', 0, 1024],
    ],
  });
  assert.equal(signed, signature(signingKey(SECRET, '20260301', 'eu-central-1', 's3'), Policy ?? ''));
});
