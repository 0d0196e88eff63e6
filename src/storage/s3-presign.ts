// AWS Signature Version 4 for S3 browser uploads (presigned POST), with node:crypto and no SDK.
// Pure: the clock and the credentials come in as arguments, nothing is read from the environment.
//
// A presigned POST is a policy (a JSON document of conditions the upload must meet, with an
// expiry), base64-encoded and signed with a key derived from the secret, the date, the region and
// the service. The browser sends the form fields as given plus the file, last; the store checks
// the signature and every condition (bucket, key, content type, size) before it keeps the object.
// References: "Authenticating Requests in Browser-Based Uploads Using POST (AWS Signature
// Version 4)" and "Creating a POST Policy" in the Amazon S3 API reference.
import { createHmac } from 'node:crypto';

const ALGORITHM = 'AWS4-HMAC-SHA256';

/** Where uploads go and with which credentials (config.ts `storage`). */
export interface S3Target {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly region: string;
  readonly bucket: string;
  /** `https://s3.{region}.amazonaws.com` for AWS, else the S3-compatible store's address; no trailing `/`. */
  readonly endpoint: string;
  /** `{endpoint}/{bucket}` instead of `{bucket}.{endpoint host}` (MinIO and most self-hosted stores). */
  readonly forcePathStyle: boolean;
}

export interface PostUpload {
  readonly key: string;
  readonly contentType: string;
  /** The largest file the policy admits, in bytes (`content-length-range` 0…maxBytes). */
  readonly maxBytes: number;
  readonly expiresInSeconds: number;
  readonly now: Date;
}

/** What the browser needs: the form's action and its fields, to be sent before the file. */
export interface PresignedPost {
  readonly url: string;
  readonly fields: Readonly<Record<string, string>>;
}

/** The URL a POST upload goes to: the bucket's address, path-style or virtual-hosted. */
export function bucketUrl(target: Pick<S3Target, 'bucket' | 'endpoint' | 'forcePathStyle'>): string {
  const endpoint = new URL(target.endpoint);
  if (target.forcePathStyle) return `${target.endpoint}/${encodeURIComponent(target.bucket)}`;
  endpoint.hostname = `${target.bucket}.${endpoint.hostname}`;
  return endpoint.href.replace(/\/+$/, '');
}

/** `20151229T000000Z`: the ISO 8601 basic form SigV4 uses for X-Amz-Date. */
export function amzDate(at: Date): string {
  return at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/** kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request"). */
export function signingKey(secretAccessKey: string, date: string, region: string, service: string): Buffer {
  const kDate = hmac(`AWS4${secretAccessKey}`, date);
  const kRegion = hmac(kDate, region);
  const kService = hmac(kRegion, service);
  return hmac(kService, 'aws4_request');
}

/** The hex signature of `stringToSign` (for a POST policy: the base64 policy itself). */
export function signature(key: Buffer, stringToSign: string): string {
  return createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
}

/**
 * The presigned POST of one object: its key and content type are fixed (exact-match conditions), its
 * size bounded, and the form is good for `expiresInSeconds` from `now`. The fields are those the AWS
 * SDK's createPresignedPost produces, so any S3-compatible store takes them.
 */
export function presignPost(target: S3Target, upload: PostUpload): PresignedPost {
  const date = amzDate(upload.now);
  const credential = `${target.accessKeyId}/${date.slice(0, 8)}/${target.region}/s3/aws4_request`;
  const signed = {
    bucket: target.bucket,
    key: upload.key,
    'Content-Type': upload.contentType,
    'X-Amz-Algorithm': ALGORITHM,
    'X-Amz-Credential': credential,
    'X-Amz-Date': date,
  };
  const policy = {
    expiration: new Date(upload.now.getTime() + upload.expiresInSeconds * 1000).toISOString(),
    conditions: [
      ...Object.entries(signed).map(([name, value]) => ({ [name]: value })),
      ['content-length-range', 0, upload.maxBytes],
    ],
  };
  const encoded = Buffer.from(JSON.stringify(policy), 'utf8').toString('base64');
  const key = signingKey(target.secretAccessKey, date.slice(0, 8), target.region, 's3');
  return {
    url: bucketUrl(target),
    fields: { ...signed, Policy: encoded, 'X-Amz-Signature': signature(key, encoded) },
  };
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}
