// A local stand-in for an S3-compatible store, for the browser-upload half of file uploads: it takes
// a presigned POST (a multipart form: the fields, then `file`) to `{base}/{bucket}` (path style), and
// checks it the way S3 does before it keeps the object in memory:
// - the SigV4 signature of the policy, recomputed here with the secret of the credential's access key
//   (written apart from src/storage/s3-presign.ts, so a mistake there is not repeated here);
// - the policy's expiration, against the fake's clock (settable, to test expiry);
// - every condition: exact matches (`{field: value}`, `["eq", "$field", value]`), `starts-with`,
//   and `content-length-range` against the file's size; the bucket against the URL's;
// - every form field covered by a condition, except those S3 exempts.
// Failures answer S3's XML errors and status codes: 403 SignatureDoesNotMatch, InvalidAccessKeyId
// and AccessDenied ("Invalid according to Policy: …"), 400 EntityTooLarge / EntityTooSmall (the
// widget looks for "EntityTooLarge" in the text), 400 InvalidArgument / InvalidPolicyDocument, 404
// NoSuchBucket. Success answers 204, or what `success_action_status` asks for (200, or 201 with the
// PostResponse XML). Every answer carries `Access-Control-Allow-Origin: *`, as a bucket CORS rule
// for browser uploads would, and OPTIONS answers a preflight.
import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startFakeServer } from './fake-provider.ts';

export interface FakeS3Object {
  readonly bucket: string;
  readonly key: string;
  readonly body: Buffer;
  /** The `Content-Type` form field (S3 stores it as the object's type). */
  readonly contentType: string | undefined;
}

export interface FakeS3Refusal {
  readonly status: number;
  readonly code: string;
  readonly message: string;
}

export interface FakeS3 {
  /** `http://127.0.0.1:PORT`: S3_ENDPOINT_URL, with S3_FORCE_PATH_STYLE=1. */
  readonly endpoint: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly region: string;
  readonly bucket: string;
  /** The S3_* variables that point Chorus at this fake. */
  readonly env: Record<string, string>;
  /** Stored objects by `{bucket}/{key}`. */
  readonly objects: Map<string, FakeS3Object>;
  /** Every refused upload, in order (for assertions on why). */
  readonly refusals: FakeS3Refusal[];
  /** The fake's idea of now (policy expiry); a test moves it to upload "later". */
  clock: () => Date;
  close(): Promise<void>;
}

/** Fields S3 does not require a policy condition for. */
const EXEMPT = new Set(['policy', 'x-amz-signature', 'file']);
const MAX_FORM_BYTES = 32 * 1024 * 1024;

class Refused extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, string> = {},
  ) {
    super(message);
  }
}

export async function startFakeS3({
  bucket = 'chorus-uploads',
  region = 'us-east-1',
}: { bucket?: string; region?: string } = {}): Promise<FakeS3> {
  const accessKeyId = `AKIAFAKE${randomBytes(6).toString('hex').toUpperCase()}`;
  const secretAccessKey = randomBytes(20).toString('base64');
  const objects = new Map<string, FakeS3Object>();
  const refusals: FakeS3Refusal[] = [];
  const fake = { clock: () => new Date() };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const cors = { 'access-control-allow-origin': '*' };
    if (req.method === 'OPTIONS') {
      res.writeHead(200, {
        ...cors,
        'access-control-allow-methods': 'POST',
        'access-control-max-age': '3000',
      });
      res.end();
      return;
    }
    try {
      const url = new URL(req.url ?? '/', 'http://fake-s3');
      const target = decodeURIComponent(url.pathname.split('/')[1] ?? '');
      if (req.method !== 'POST' || url.pathname.split('/').filter(Boolean).length !== 1) {
        throw new Refused(
          405,
          'MethodNotAllowed',
          'The specified method is not allowed against this resource.',
        );
      }
      if (target !== bucket) throw new Refused(404, 'NoSuchBucket', 'The specified bucket does not exist');
      const form = await readForm(req);
      const stored = checkUpload(form, target);
      objects.set(`${target}/${stored.key}`, stored);
      const status = form.fields.get('success_action_status');
      if (status === '201') {
        sendXml(res, 201, cors, postResponseXml(url.origin, target, stored.key));
      } else {
        res.writeHead(status === '200' ? 200 : 204, cors);
        res.end();
      }
    } catch (error) {
      if (!(error instanceof Refused)) throw error;
      refusals.push({ status: error.status, code: error.code, message: error.message });
      sendXml(res, error.status, cors, errorXml(error));
    }
  }

  function checkUpload(form: Form, target: string): FakeS3Object {
    const field = (name: string) => form.fields.get(name.toLowerCase());
    const policy = field('Policy');
    const signature = field('X-Amz-Signature');
    const credential = field('X-Amz-Credential');
    if (
      !policy ||
      !signature ||
      !credential ||
      field('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256' ||
      !field('X-Amz-Date')
    ) {
      throw new Refused(
        400,
        'InvalidArgument',
        'POST requires Policy, X-Amz-Signature, X-Amz-Credential, X-Amz-Algorithm and X-Amz-Date',
      );
    }
    const key = field('key');
    if (!key) throw new Refused(400, 'InvalidArgument', "Bucket POST must contain a field named 'key'.");
    if (!form.file)
      throw new Refused(400, 'InvalidArgument', 'POST requires exactly one file upload per request.');

    const [keyId, date = '', credentialRegion = '', service = '', terminal] = credential.split('/');
    if (keyId !== accessKeyId) {
      throw new Refused(
        403,
        'InvalidAccessKeyId',
        'The AWS Access Key Id you provided does not exist in our records.',
      );
    }
    if (credentialRegion !== region || service !== 's3' || terminal !== 'aws4_request') {
      throw new Refused(
        400,
        'AuthorizationQueryParametersError',
        `Error parsing the X-Amz-Credential parameter; the region '${credentialRegion}' is wrong; expecting '${region}'`,
      );
    }
    const kDate = hmac(`AWS4${secretAccessKey}`, date);
    const kSigning = hmac(hmac(hmac(kDate, credentialRegion), 's3'), 'aws4_request');
    if (createHmac('sha256', kSigning).update(policy).digest('hex') !== signature) {
      throw new Refused(
        403,
        'SignatureDoesNotMatch',
        'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
      );
    }

    let document: { expiration?: unknown; conditions?: unknown };
    try {
      document = JSON.parse(Buffer.from(policy, 'base64').toString('utf8')) as typeof document;
    } catch {
      throw new Refused(400, 'InvalidPolicyDocument', 'Invalid Policy: Invalid JSON.');
    }
    if (typeof document.expiration !== 'string' || !Array.isArray(document.conditions)) {
      throw new Refused(
        400,
        'InvalidPolicyDocument',
        'Invalid Policy: expiration and conditions are required.',
      );
    }
    if (Date.parse(document.expiration) <= fake.clock().getTime()) {
      throw new Refused(403, 'AccessDenied', 'Invalid according to Policy: Policy expired.');
    }
    const values = new Map(form.fields);
    values.set('bucket', target);
    const covered = new Set<string>(['bucket']);
    for (const condition of document.conditions as unknown[]) {
      checkCondition(condition, values, form.file.length, covered);
    }
    const extra = [...form.fields.keys()].filter(
      (n) => !covered.has(n) && !EXEMPT.has(n) && !n.startsWith('x-ignore-'),
    );
    if (extra.length > 0) {
      throw new Refused(
        403,
        'AccessDenied',
        `Invalid according to Policy: Extra input fields: ${extra.join(', ')}`,
      );
    }
    return { bucket: target, key, body: form.file, contentType: field('Content-Type') };
  }

  const server = await startFakeServer(handle, (res, error) => {
    sendXml(res, 500, {}, errorXml(new Refused(500, 'InternalError', String(error))));
  });
  return {
    endpoint: server.base,
    accessKeyId,
    secretAccessKey,
    region,
    bucket,
    env: {
      S3_ACCESS_KEY: accessKeyId,
      S3_SECRET_KEY: secretAccessKey,
      S3_REGION: region,
      S3_BUCKET_NAME: bucket,
      S3_ENDPOINT_URL: server.base,
      S3_FORCE_PATH_STYLE: '1',
    },
    objects,
    refusals,
    get clock() {
      return fake.clock;
    },
    set clock(clock: () => Date) {
      fake.clock = clock;
    },
    close: () => server.close(),
  };
}

function checkCondition(
  condition: unknown,
  values: Map<string, string>,
  size: number,
  covered: Set<string>,
): void {
  const failed = (what: string) =>
    new Refused(403, 'AccessDenied', `Invalid according to Policy: Policy Condition failed: ${what}`);
  if (Array.isArray(condition)) {
    const [op, name, value] = condition as unknown[];
    if (op === 'content-length-range') {
      const [min, max] = [Number(name), Number(value)];
      if (size > max)
        throw new Refused(400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size', {
          ProposedSize: String(size),
          MaxSizeAllowed: String(max),
        });
      if (size < min)
        throw new Refused(
          400,
          'EntityTooSmall',
          'Your proposed upload is smaller than the minimum allowed size',
          { ProposedSize: String(size), MinSizeAllowed: String(min) },
        );
      return;
    }
    if (
      (op !== 'eq' && op !== 'starts-with') ||
      typeof name !== 'string' ||
      !name.startsWith('$') ||
      typeof value !== 'string'
    ) {
      throw new Refused(
        400,
        'InvalidPolicyDocument',
        `Invalid Policy: Invalid Condition: ${JSON.stringify(condition)}`,
      );
    }
    const field = name.slice(1).toLowerCase();
    covered.add(field);
    const actual = values.get(field) ?? '';
    if (op === 'eq' ? actual !== value : !actual.startsWith(value)) throw failed(JSON.stringify(condition));
    return;
  }
  if (condition && typeof condition === 'object') {
    for (const [name, value] of Object.entries(condition)) {
      const field = name.toLowerCase();
      covered.add(field);
      if (values.get(field) !== value) throw failed(`["eq", "$${name}", ${JSON.stringify(value)}]`);
    }
    return;
  }
  throw new Refused(
    400,
    'InvalidPolicyDocument',
    `Invalid Policy: Invalid Condition: ${JSON.stringify(condition)}`,
  );
}

interface Form {
  /** Field names in lower case (S3 matches them without case), the first value of each. */
  fields: Map<string, string>;
  file: Buffer | undefined;
}

/** The multipart form, parsed by the platform's own parser (undici's Response#formData). */
async function readForm(req: IncomingMessage): Promise<Form> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES)
      throw new Refused(
        400,
        'MaxPostPreDataLengthExceededError',
        'Your POST request fields preceding the upload file were too large.',
      );
    chunks.push(chunk as Buffer);
  }
  const type = req.headers['content-type'] ?? '';
  if (!type.startsWith('multipart/form-data')) {
    throw new Refused(
      412,
      'PreconditionFailed',
      'Bucket POST must be of the enclosure-type multipart/form-data',
    );
  }
  let data: FormData;
  try {
    data = await new Response(Buffer.concat(chunks), { headers: { 'content-type': type } }).formData();
  } catch {
    throw new Refused(
      400,
      'MalformedPOSTRequest',
      'The body of your POST request is not well-formed multipart/form-data.',
    );
  }
  const fields = new Map<string, string>();
  let file: Buffer | undefined;
  for (const [name, value] of data) {
    if (name.toLowerCase() === 'file' && typeof value !== 'string') {
      file = Buffer.from(await value.arrayBuffer());
    } else if (typeof value === 'string' && !fields.has(name.toLowerCase())) {
      fields.set(name.toLowerCase(), value);
    }
  }
  return { fields, file };
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

const escapeXml = (text: string) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

function errorXml(error: Refused): string {
  const extra = Object.entries(error.extra)
    .map(([n, v]) => `<${n}>${escapeXml(v)}</${n}>`)
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${error.code}</Code><Message>${escapeXml(error.message)}</Message>${extra}<RequestId>${randomBytes(8).toString('hex').toUpperCase()}</RequestId></Error>`;
}

function postResponseXml(origin: string, bucket: string, key: string): string {
  const location = `${origin}/${bucket}/${encodeURIComponent(key)}`;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<PostResponse><Location>${escapeXml(location)}</Location><Bucket>${escapeXml(bucket)}</Bucket><Key>${escapeXml(key)}</Key></PostResponse>`;
}

function sendXml(res: ServerResponse, status: number, headers: Record<string, string>, xml: string): void {
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/xml',
    'content-length': Buffer.byteLength(xml),
  });
  res.end(xml);
}
