// File uploads with a configured store (widget contract §2 call 8): S3_* point Chorus at a fake
// S3-compatible store; the widget's storage call is answered a presigned POST, the widget's
// multipart upload goes to the store, which checks the signature and the policy, and the response
// that carries the returned fileUrl is stored. The not-configured answer is tested in
// widget-user-storage-assets.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { call, startTestChorus, type RunningChorus } from '../helpers/chorus.ts';
import { startFakeS3, type FakeS3 } from '../helpers/fake-s3.ts';
import { waitFor } from '../helpers/wait.ts';
import { Response } from '../../src/store/entities.ts';

const ORIGIN = 'https://shop.example';
const MB = 1024 * 1024;

describe('file uploads to a configured S3-compatible store', () => {
  let s3: FakeS3;
  let app: RunningChorus;
  let env: string;
  let survey: string;
  const em = () => app.chorus.orm.em.fork();
  const requestUpload = (body: Record<string, unknown>, version = 'v1') =>
    call(app.baseUrl, 'POST', `/api/${version}/client/${env}/storage`, body, { Origin: ORIGIN });
  const widgetRequest = (fileName = 'receipt.pdf', fileType = 'application/pdf') => ({
    fileName,
    fileType,
    allowedFileExtensions: ['pdf', 'png'],
    surveyId: survey,
    elementId: 'attachment',
  });

  /** What the widget does with the answer: the fields in order, then the file, POSTed to signedUrl. */
  async function upload(data: { signedUrl: string; presignedFields: Record<string, string> }, bytes: Buffer) {
    const form = new FormData();
    for (const [name, value] of Object.entries(data.presignedFields)) form.append(name, value);
    form.append('file', new Blob([bytes], { type: data.presignedFields['Content-Type'] }));
    const reply = await fetch(data.signedUrl, { method: 'POST', body: form, headers: { Origin: ORIGIN } });
    return {
      status: reply.status,
      text: await reply.text(),
      cors: reply.headers.get('access-control-allow-origin'),
    };
  }

  before(async () => {
    s3 = await startFakeS3();
    app = await startTestChorus('e2e_widget_uploads', { env: s3.env });
    env = (await app.createEnvironment('free')).environmentId;
    survey = await app.createSurvey({
      environmentId: env,
      type: 'app',
      questions: [
        { id: 'feedback', type: 'openText', headline: 'Anything else?', required: false },
        {
          id: 'attachment',
          type: 'fileUpload',
          headline: 'Your receipt',
          required: true,
          allowMultipleFiles: false,
          allowedFileExtensions: ['pdf', 'png'],
          maxSizeInMB: 1,
        },
      ],
    });
  });
  after(async () => {
    await app?.stop();
    await s3?.close();
  });

  test('the upload request is answered a presigned POST to the store with a relative fileUrl, with CORS, on v1 and v2', async () => {
    for (const version of ['v1', 'v2']) {
      const reply = await requestUpload(widgetRequest(), version);
      assert.equal(reply.status, 200, `${version}: ${JSON.stringify(reply.body)}`);
      assert.equal(reply.headers.get('access-control-allow-origin'), '*');
      const { signedUrl, presignedFields, fileUrl } = reply.body.data;
      assert.deepEqual(Object.keys(reply.body.data).sort(), ['fileUrl', 'presignedFields', 'signedUrl']);
      assert.equal(signedUrl, `${s3.endpoint}/${s3.bucket}`);
      assert.match(
        fileUrl,
        new RegExp(
          `^/storage/${env}/private/surveys/${survey}/elements/attachment/receipt--fid--[0-9a-f-]{36}\\.pdf$`,
        ),
      );
      assert.equal(presignedFields.key, decodeURIComponent(fileUrl.slice('/storage/'.length)));
      assert.equal(presignedFields['Content-Type'], 'application/pdf');
      assert.equal(presignedFields.bucket, s3.bucket);
      assert.match(
        presignedFields['X-Amz-Credential'],
        new RegExp(`^${s3.accessKeyId}/\\d{8}/${s3.region}/s3/aws4_request$`),
      );
      assert.ok(!JSON.stringify(reply.body).includes(s3.secretAccessKey), 'the secret is never sent');
      const policy = JSON.parse(Buffer.from(presignedFields.Policy, 'base64').toString('utf8'));
      assert.deepEqual(
        policy.conditions.at(-1),
        ['content-length-range', 0, MB],
        "the element's maxSizeInMB",
      );
      const ttl = Date.parse(policy.expiration) - Date.now();
      assert.ok(ttl > 100_000 && ttl <= 120_000, `good for two minutes (${ttl} ms)`);
    }
  });

  test("the widget's multipart upload with the returned fields is stored by the store (204)", async () => {
    const reply = await requestUpload(widgetRequest('Quittung März.pdf'));
    const bytes = Buffer.from('%PDF-1.7 a receipt');
    const uploaded = await upload(reply.body.data, bytes);
    assert.equal(uploaded.status, 204, uploaded.text);
    assert.equal(uploaded.cors, '*');
    const stored = s3.objects.get(`${s3.bucket}/${reply.body.data.presignedFields.key}`);
    assert.ok(stored, 'the object is in the bucket');
    assert.deepEqual(stored.body, bytes);
    assert.equal(stored.contentType, 'application/pdf');
    assert.match(reply.body.data.fileUrl, /\/Quittung%20M%C3%A4rz--fid--[0-9a-f-]{36}\.pdf$/);
  });

  test('a file over the size limit is refused by the store with EntityTooLarge, which the widget reads as too large', async () => {
    const reply = await requestUpload(widgetRequest());
    const tooLarge = await upload(reply.body.data, Buffer.alloc(MB + 1, 1));
    assert.equal(tooLarge.status, 400);
    assert.match(tooLarge.text, /<Code>EntityTooLarge<\/Code>/);
    assert.equal(s3.objects.has(`${s3.bucket}/${reply.body.data.presignedFields.key}`), false);
    const atLimit = await upload(reply.body.data, Buffer.alloc(MB, 1));
    assert.equal(atLimit.status, 204, 'exactly the limit is allowed');
  });

  test('a form used after it expired, changed, or signed with another secret is refused as S3 does', async () => {
    const { data } = (await requestUpload(widgetRequest())).body;
    const bytes = Buffer.from('%PDF');
    try {
      s3.clock = () => new Date(Date.now() + 3 * 60_000);
      const expired = await upload(data, bytes);
      assert.equal(expired.status, 403);
      assert.match(expired.text, /<Code>AccessDenied<\/Code>.*Policy expired/s);
    } finally {
      s3.clock = () => new Date();
    }
    const otherKey = await upload(
      { ...data, presignedFields: { ...data.presignedFields, key: `${env}/private/x.pdf` } },
      bytes,
    );
    assert.equal(otherKey.status, 403);
    assert.match(otherKey.text, /<Code>AccessDenied<\/Code>.*Policy Condition failed/s);
    const extraField = await upload(
      { ...data, presignedFields: { ...data.presignedFields, acl: 'public-read' } },
      bytes,
    );
    assert.equal(extraField.status, 403);
    assert.match(extraField.text, /Extra input fields: acl/);
    const policy = JSON.parse(Buffer.from(data.presignedFields.Policy, 'base64').toString('utf8'));
    policy.conditions = policy.conditions.map((c: unknown) =>
      Array.isArray(c) ? ['content-length-range', 0, 10 * MB] : c,
    );
    const forged = Buffer.from(JSON.stringify(policy)).toString('base64');
    const bigger = await upload(
      { ...data, presignedFields: { ...data.presignedFields, Policy: forged } },
      bytes,
    );
    assert.equal(bigger.status, 403);
    assert.match(bigger.text, /<Code>SignatureDoesNotMatch<\/Code>/);
    assert.equal(s3.objects.has(`${s3.bucket}/${data.presignedFields.key}`), false);
    const intact = await upload(data, bytes);
    assert.equal(intact.status, 204, 'the untouched form still works');
  });

  test('a name without an extension, or a type the element does not allow, is a 400 naming fileName, with CORS', async () => {
    for (const fileName of ['README', 'setup.exe', '.pdf']) {
      const reply = await requestUpload(widgetRequest(fileName));
      assert.equal(reply.status, 400, fileName);
      assert.equal(reply.headers.get('access-control-allow-origin'), '*');
      assert.equal(typeof reply.body.details.fileName, 'string', fileName);
    }
    // The element allows pdf and png even when the widget sends no list of its own.
    const noList = await requestUpload({
      ...widgetRequest('scan.jpg', 'image/jpeg'),
      allowedFileExtensions: null,
    });
    assert.equal(noList.status, 400);
    const png = await requestUpload({
      ...widgetRequest('scan.PNG', 'image/png'),
      allowedFileExtensions: null,
    });
    assert.equal(png.status, 200);
    assert.match(png.body.data.fileUrl, /\/scan--fid--[0-9a-f-]{36}\.png$/);
  });

  test('a file type no survey may collect, or a content type that contradicts the name, is a 400 naming fileName', async () => {
    const anything = (fileName: string, fileType: string) =>
      requestUpload({ ...widgetRequest(fileName, fileType), allowedFileExtensions: null, elementId: null });
    const page = await anything('invoice.html', 'text/html');
    assert.equal(page.status, 400);
    assert.equal(page.body.details.fileName, 'File type .html is not allowed');
    const disguised = await anything('invoice.pdf', 'text/html');
    assert.equal(disguised.status, 400);
    assert.equal(disguised.body.details.fileName, 'Content type text/html does not match a .pdf file');
    assert.equal(disguised.headers.get('access-control-allow-origin'), '*');
  });

  test("a type the browser didn't know is signed as the extension's usual one, under the survey without an element", async () => {
    const reply = await requestUpload({
      ...widgetRequest('photo.heic', ''),
      allowedFileExtensions: null,
      elementId: null,
    });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body.data.presignedFields['Content-Type'], 'image/heic');
    assert.match(
      reply.body.data.fileUrl,
      new RegExp(`^/storage/${env}/private/surveys/${survey}/photo--fid--`),
    );
  });

  test('a response whose file answer is the returned fileUrl is accepted and stored as sent', async () => {
    const reply = await requestUpload(widgetRequest());
    assert.equal((await upload(reply.body.data, Buffer.from('%PDF'))).status, 204);
    const { fileUrl } = reply.body.data;
    const created = await call(
      app.baseUrl,
      'POST',
      `/api/v2/client/${env}/responses`,
      {
        surveyId: survey,
        finished: true,
        data: { feedback: 'see attached', attachment: [fileUrl] },
        ttc: { feedback: 1200, attachment: 5300 },
        variables: {},
        meta: { url: `${ORIGIN}/checkout` },
        contactId: null,
        userId: null,
        singleUseId: null,
        displayId: null,
        pinAuthToken: null,
      },
      { Origin: ORIGIN },
    );
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const stored = await waitFor(() => em().findOne(Response, { id: created.body.data.id }), {
      what: 'the stored response',
    });
    assert.deepEqual(stored.data.attachment, [fileUrl]);
  });
});
