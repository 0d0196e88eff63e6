// Deterministic bad requests for every route of the edge: a seeded PRNG picks a route, starts from
// a body that would be accepted, and breaks it (wrong types, missing fields, NUL and lone
// surrogates in strings and keys, invalid UTF-8, deep or huge JSON, odd JSON), or breaks the path
// (bad ids, traversal), the method, the headers or the query.
import { attr } from './segment-filters.ts';

/** mulberry32: small, fast and the same on every machine. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface FuzzFixtures {
  environmentId: string;
  apiKey: string;
  surveyId: string;
  /** A response stored before the run, not finished: the target of client PUTs. */
  responseId: string;
  contactId: string;
  displayId: string;
  /** An action class of the environment: the target of management GET and PUT. */
  actionClassId: string;
}

export interface FuzzRequest {
  /** The route pattern, for the per-route summary. */
  route: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** The JSON value the body was made from, when it is JSON. */
  json?: unknown;
  /** What was done to it, to report a surprising answer. */
  mutation: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface RouteSpec {
  pattern: string;
  methods: string[];
  params: Record<string, 'environment' | 'survey' | 'response' | 'contact' | 'actionClass' | 'asset' | 'any'>;
  management: boolean;
  body?: (f: FuzzFixtures) => Json;
}

const QUESTION: Json = { id: 'q1', type: 'openText', headline: 'Why?', required: true };

const ROUTES: RouteSpec[] = [
  {
    pattern: '/api/v1/client/:environmentId/responses',
    methods: ['POST'],
    params: { environmentId: 'environment' },
    management: false,
    body: (f) => ({
      surveyId: f.surveyId,
      finished: true,
      data: { feedback: 'fine', score: 3, plan: 'pro' },
      ttc: { feedback: 1.5 },
      variables: { source: 'fuzz', n: 1 },
      language: 'en',
      meta: { source: 'fuzz', url: 'https://example.com/a', action: 'click' },
    }),
  },
  {
    pattern: '/api/v1/client/:environmentId/responses/:responseId',
    methods: ['PUT'],
    params: { environmentId: 'environment', responseId: 'response' },
    management: false,
    body: () => ({ finished: false, data: { score: 2 }, ttc: { score: 1 }, language: 'de' }),
  },
  {
    pattern: '/api/v1/client/:environmentId/displays',
    methods: ['POST'],
    params: { environmentId: 'environment' },
    management: false,
    body: (f) => ({ surveyId: f.surveyId, userId: 'fuzz-user' }),
  },
  {
    pattern: '/api/v1/client/:environmentId/user',
    methods: ['POST'],
    params: { environmentId: 'environment' },
    management: false,
    body: () => ({ userId: 'fuzz-user', attributes: { email: 'a@example.com', plan: 'pro' } }),
  },
  {
    pattern: '/api/v1/client/:environmentId/environment',
    methods: ['GET'],
    params: { environmentId: 'environment' },
    management: false,
  },
  {
    pattern: '/api/v1/client/:environmentId/storage',
    methods: ['POST'],
    params: { environmentId: 'environment' },
    management: false,
    body: (f) => ({
      fileName: 'screenshot.png',
      fileType: 'image/png',
      allowedFileExtensions: ['png', 'jpg'],
      surveyId: f.surveyId,
      elementId: 'upload',
    }),
  },
  {
    pattern: '/api/v2/client/:environmentId/displays',
    methods: ['POST'],
    params: { environmentId: 'environment' },
    management: false,
    body: (f) => ({ surveyId: f.surveyId, contactId: f.contactId }),
  },
  {
    pattern: '/api/v2/client/:environmentId/responses',
    methods: ['POST'],
    params: { environmentId: 'environment' },
    management: false,
    body: (f) => ({
      surveyId: f.surveyId,
      contactId: f.contactId,
      displayId: null, // a display links to one response: the fixture's is taken by the first create
      finished: false,
      data: { feedback: 'fine', plan: 'pro', features: ['api', 'sso'], grid: { speed: 'good' } },
      ttc: { feedback: 1.5 },
      variables: { source: 'fuzz' },
      hiddenFields: { ref: 'fuzz' },
      language: 'default',
      endingId: null,
      singleUseId: null,
      recaptchaToken: null,
      meta: { url: 'https://example.com/a', source: 'fuzz' },
    }),
  },
  {
    pattern: '/api/v2/client/:environmentId/responses/:responseId',
    methods: ['PUT'],
    params: { environmentId: 'environment', responseId: 'response' },
    management: false,
    body: () => ({
      finished: false,
      data: { score: 4, upload: ['/storage/x/private/a--fid--1.png'] },
      ttc: { score: 1 },
      variables: { n: 2 },
      endingId: null,
    }),
  },
  {
    pattern: '/api/v2/client/:environmentId/user',
    methods: ['POST'],
    params: { environmentId: 'environment' },
    management: false,
    body: () => ({ userId: 'fuzz-user', attributes: { email: 'a@example.com', seats: 3, trial: true } }),
  },
  {
    pattern: '/api/v2/client/:environmentId/environment',
    methods: ['GET'],
    params: { environmentId: 'environment' },
    management: false,
  },
  {
    pattern: '/api/v2/client/:environmentId/storage',
    methods: ['POST'],
    params: { environmentId: 'environment' },
    management: false,
    body: (f) => ({ fileName: 'receipt.jpg', fileType: 'image/jpeg', surveyId: f.surveyId, elementId: null }),
  },
  {
    pattern: '/api/v1/management/action-classes',
    methods: ['GET', 'POST'],
    params: {},
    management: true,
    body: (f) => ({
      environmentId: f.environmentId,
      name: 'Fuzz click',
      description: 'a click',
      type: 'noCode',
      key: null,
      noCodeConfig: {
        type: 'click',
        urlFilters: [{ value: '/pricing', rule: 'contains' }],
        urlFiltersConnector: 'or',
        elementSelector: { cssSelector: '#buy', innerHtml: 'Buy' },
      },
    }),
  },
  {
    pattern: '/api/v1/management/action-classes/:actionClassId',
    methods: ['GET', 'PUT', 'DELETE'],
    params: { actionClassId: 'actionClass' },
    management: true,
    body: () => ({
      name: 'Fuzz dwell',
      type: 'noCode',
      noCodeConfig: { type: 'pageDwell', urlFilters: [], timeInSeconds: 5 },
    }),
  },
  {
    pattern: '/api/v1/management/environments/:environmentId/widget-settings',
    methods: ['GET', 'PUT'],
    params: { environmentId: 'environment' },
    management: true,
    body: () => ({
      placement: 'bottomRight',
      overlay: 'light',
      clickOutsideClose: true,
      inAppSurveyBranding: false,
      recontactDays: 7,
      styling: { allowStyleOverwrite: true, brandColor: { light: '#64748b' } },
    }),
  },
  // The widget bundles, served outside the router (src/edge/widget-assets.ts): the asset is a
  // whole path below /js, traversal and encoding abuse included (ASSET_PATHS).
  {
    pattern: '/js/:asset',
    methods: ['GET', 'HEAD', 'OPTIONS'],
    params: { asset: 'asset' },
    management: false,
  },
  {
    pattern: '/api/v1/management/surveys',
    methods: ['GET', 'POST'],
    params: {},
    management: true,
    body: (f) => ({ environmentId: f.environmentId, name: 'Fuzzed', status: 'draft', questions: [QUESTION] }),
  },
  {
    pattern: '/api/v1/management/surveys/:surveyId',
    methods: ['GET', 'PUT', 'DELETE'],
    params: { surveyId: 'survey' },
    management: true,
    // Keeps the survey taking responses, so that the client routes stay reachable.
    body: () => ({ name: 'Renamed', status: 'inProgress' }),
  },
  {
    pattern: '/api/v1/management/surveys/:surveyId/summary',
    methods: ['GET'],
    params: { surveyId: 'survey' },
    management: true,
  },
  { pattern: '/api/v1/management/contacts', methods: ['GET'], params: {}, management: true },
  {
    pattern: '/api/v1/management/contacts/:contactId',
    methods: ['GET'],
    params: { contactId: 'contact' },
    management: true,
  },
  {
    pattern: '/api/v1/environments/:environmentId/contacts',
    methods: ['POST'],
    params: { environmentId: 'environment' },
    management: true,
    body: () => ({ userId: 'fuzz-contact', attributes: { plan: 'free' } }),
  },
  {
    pattern: '/api/v1/environments/:environmentId/contacts/:contactId',
    methods: ['GET', 'DELETE'],
    params: { environmentId: 'environment', contactId: 'contact' },
    management: true,
  },
  {
    pattern: '/api/v1/management/contact-attribute-keys',
    methods: ['GET', 'POST'],
    params: {},
    management: true,
    body: (f) => ({ environmentId: f.environmentId, key: 'fuzzKey', type: 'text', name: 'Fuzz' }),
  },
  {
    pattern: '/api/v1/management/contact-attribute-keys/:keyId',
    methods: ['DELETE'],
    params: { keyId: 'any' },
    management: true,
  },
  {
    pattern: '/api/v1/management/responses',
    methods: ['GET', 'POST'],
    params: {},
    management: true,
    body: (f) => ({
      environmentId: f.environmentId,
      surveyId: f.surveyId,
      finished: false,
      data: { q1: 'Imported' },
    }),
  },
  {
    pattern: '/api/v2/management/responses',
    methods: ['GET', 'POST'],
    params: {},
    management: true,
    body: (f) => ({ surveyId: f.surveyId, finished: false, data: { q1: 'Imported' } }),
  },
  {
    pattern: '/api/v2/management/responses/:responseId',
    methods: ['GET', 'PUT'],
    params: { responseId: 'response' },
    management: true,
    body: () => ({ data: { q1: 'Amended' } }),
  },
  {
    pattern: '/api/v2/management/responses/:responseId',
    methods: ['DELETE'],
    params: { responseId: 'any' },
    management: true,
  },
  { pattern: '/api/v2/me', methods: ['GET'], params: {}, management: true },
  {
    pattern: '/api/v2/management/contacts',
    methods: ['POST'],
    params: {},
    management: true,
    body: (f) => ({
      workspaceId: f.environmentId,
      attributes: { email: 'fuzz@example.com', userId: 'fuzz-v2' },
    }),
  },
  {
    pattern: '/api/v2/management/contacts/bulk',
    methods: ['PUT'],
    params: {},
    management: true,
    body: (f) => ({
      workspaceId: f.environmentId,
      contacts: [
        {
          attributes: [
            { attributeKey: { key: 'email', name: 'Email' }, value: 'fuzz-bulk@example.com' },
            { attributeKey: { key: 'fuzz_plan', name: 'Plan' }, value: 'pro' },
          ],
        },
      ],
    }),
  },
  {
    pattern: '/api/v2/management/contact-attribute-keys',
    methods: ['GET', 'POST'],
    params: {},
    management: true,
    body: (f) => ({ workspaceId: f.environmentId, key: 'fuzz_key', name: 'Fuzz', dataType: 'string' }),
  },
  {
    pattern: '/api/v2/management/contact-attribute-keys/:keyId',
    methods: ['GET', 'PUT', 'DELETE'],
    params: { keyId: 'any' },
    management: true,
    body: () => ({ name: 'Fuzzed', description: null }),
  },
  {
    pattern: '/api/v2/management/webhooks',
    methods: ['GET', 'POST'],
    params: {},
    management: true,
    // A name that does not resolve here: a valid body is refused (400) after one quick lookup.
    body: (f) => ({
      workspaceId: f.environmentId,
      url: 'https://hooks.fuzz.invalid/chorus',
      triggers: ['responseFinished'],
      surveyIds: [f.surveyId],
      source: 'user',
      name: 'Fuzz hook',
    }),
  },
  {
    pattern: '/api/v2/management/webhooks/:webhookId',
    methods: ['GET', 'PUT', 'DELETE'],
    params: { webhookId: 'any' },
    management: true,
    body: () => ({ url: 'https://hooks.fuzz.invalid/changed', triggers: ['responseCreated'] }),
  },
  {
    pattern: '/api/v1/management/responses/export',
    methods: ['GET'],
    params: {},
    management: true,
  },
  {
    pattern: '/api/v1/management/responses/:responseId',
    methods: ['GET', 'PUT'],
    params: { responseId: 'response' },
    management: true,
    body: () => ({ data: { q1: 'Amended' } }),
  },
  // Not the fixture response: the other routes' requests keep updating it.
  {
    pattern: '/api/v1/management/responses/:responseId',
    methods: ['DELETE'],
    params: { responseId: 'any' },
    management: true,
  },
  { pattern: '/api/v1/management/integrations', methods: ['GET'], params: {}, management: true },
  {
    pattern: '/api/v1/management/integrations/:integrationId',
    methods: ['GET', 'DELETE'],
    params: { integrationId: 'any' },
    management: true,
  },
  {
    pattern: '/api/v1/management/integrations/:integrationId/channels',
    methods: ['GET'],
    params: { integrationId: 'any' },
    management: true,
  },
  {
    pattern: '/api/v1/management/integrations/:integrationId/databases',
    methods: ['GET'],
    params: { integrationId: 'any' },
    management: true,
  },
  {
    pattern: '/api/v1/management/integrations/:integrationId/links',
    methods: ['GET', 'POST'],
    params: { integrationId: 'any' },
    management: true,
    body: (f) => ({ surveyId: f.surveyId, targetId: 'C0FUZZ', questionIds: ['feedback'] }),
  },
  {
    pattern: '/api/v1/management/integrations/:integrationId/links/:linkId',
    methods: ['DELETE'],
    params: { integrationId: 'any', linkId: 'any' },
    management: true,
  },
  {
    pattern: '/api/v1/management/integrations/:integrationId/deliveries',
    methods: ['GET'],
    params: { integrationId: 'any' },
    management: true,
  },
  {
    pattern: '/api/v1/webhooks',
    methods: ['GET', 'POST'],
    params: {},
    management: true,
    // A name that does not resolve here: a valid body is refused (400) after one quick lookup.
    body: (f) => ({
      environmentId: f.environmentId,
      url: 'https://hooks.fuzz.invalid/chorus',
      triggers: ['responseCreated', 'responseFinished'],
      surveyIds: [f.surveyId],
      source: 'user',
      name: 'Fuzz hook',
    }),
  },
  {
    pattern: '/api/v1/webhooks/:webhookId',
    methods: ['GET', 'DELETE'],
    params: { webhookId: 'any' },
    management: true,
  },
  {
    pattern: '/api/v1/webhooks/:webhookId/deliveries',
    methods: ['GET'],
    params: { webhookId: 'any' },
    management: true,
  },
  {
    pattern: '/api/v1/integrations/:provider/connect',
    methods: ['GET'],
    params: { provider: 'any' },
    management: true,
  },
  {
    pattern: '/api/v1/integrations/:provider/callback',
    methods: ['GET'],
    params: { provider: 'any' },
    management: false,
  },
  {
    pattern: '/api/v1/integrations/:provider/authorize',
    methods: ['GET'],
    params: { provider: 'any' },
    management: false,
  },
  {
    pattern: '/api/v1/client/:environmentId/displays/:displayId/response',
    methods: ['GET', 'OPTIONS'],
    params: { environmentId: 'environment', displayId: 'any' },
    management: false,
  },
  {
    pattern: '/api/v1/management/segments',
    methods: ['GET', 'POST'],
    params: {},
    management: true,
    body: (f) => ({
      environmentId: f.environmentId,
      title: 'Fuzz segment',
      filters: [attr('plan', 'equals', 'pro') as Json],
    }),
  },
  {
    pattern: '/api/v1/management/segments/:segmentId',
    methods: ['GET', 'PUT', 'DELETE'],
    params: { segmentId: 'any' },
    management: true,
    body: () => ({ title: 'Fuzz renamed', description: 'fuzzed' }),
  },
  { pattern: '/api/openapi.json', methods: ['GET'], params: {}, management: false },
  { pattern: '/health', methods: ['GET'], params: {}, management: false },
  { pattern: '/api/v2/health', methods: ['GET'], params: {}, management: false },
  { pattern: '/health/intake', methods: ['GET'], params: {}, management: false },
];

/** Every route pattern the fuzz sends to (fuzz.test.ts checks that the API document has no other). */
export const ROUTE_PATTERNS = ROUTES.map((r) => r.pattern);

const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'nul\u0000inside',
  '\ud800',
  'lone \udfff low',
  '\ud83d',
  '\uffff\ufffe',
  '\u202e\u200b',
  '🙂'.repeat(40),
  'A'.repeat(300),
  'B'.repeat(70_000),
  '../../../../etc/passwd',
  '%2e%2e%2f%00',
  "' or 1=1 --",
  '${jndi:ldap://x/a}',
  '<script>alert(1)</script>',
  '__proto__',
  'constructor',
  '\r\nX-Injected: 1',
];
const ODD_VALUES: Json[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  -0,
  1e308,
  -1e308,
  2 ** 53 + 2,
  [],
  {},
  [1, 'a'],
  { a: { b: 1 } },
];
const ODD_KEYS = [
  '\u0000',
  'k\u0000',
  '\ud800',
  'x\udc00y',
  '',
  ' ',
  '__proto__',
  'constructor',
  'prototype',
  'a.b',
  '$where',
  '🙂',
];

const BAD_IDS = [
  '',
  'x',
  '..',
  '.',
  '%2e%2e',
  '..%2f..%2f..%2fetc%2fpasswd',
  '%00',
  'rsp_%00',
  '%ff%fe',
  '%ed%a0%80',
  '%F0%9F%99%82',
  'srv_' + 'a'.repeat(5_000),
  "srv_'%20or%201=1",
  'env_%0d%0aX:1',
  'srv_01ARZ3NDEKTSV4RRFFQ69G5FAV',
  'env_00000000000000000000000000',
  'rsp_zzzzzzzzzzzzzzzzzzzzzzzzzz',
  'ctc_00000000000000000000000000',
  'int_00000000000000000000000000',
  '%252e%252e',
  'slack',
  'notion',
  'SLACK',
  'teams',
];

/** Paths below /js: the bundles the fuzz run serves, and ways out of the directory. */
const ASSET_PATHS = [
  'formbricks.umd.cjs',
  'surveys.umd.cjs',
  'mobile/v1/surveys.umd.cjs',
  'missing.js',
  '.hidden',
  'escape.cjs',
  '..',
  '../package.json',
  '../../../../etc/passwd',
  'mobile/../../secret.txt',
  'mobile/./v1/surveys.umd.cjs',
  '%2e%2e/secret.txt',
  '%2E%2E%2Fsecret.txt',
  '..%2fsecret.txt',
  '..%5csecret.txt',
  '%252e%252e%252fsecret.txt',
  'mobile%2fv1%2fsurveys.umd.cjs',
  '%2fetc%2fpasswd',
  '/etc/passwd',
  '//etc/passwd',
  'C:%5cwindows%5cwin.ini',
  'formbricks.umd.cjs%00.png',
  'formbricks.umd.cjs%00',
  '%c0%ae%c0%ae/secret.txt',
  '%ed%a0%80',
  '%ff',
  '%',
  '%zz',
  'mobile/v1/',
  'a/b/c/d/e/f/g/h/i/j/k.js',
  'x'.repeat(300) + '.js',
  'formbricks.umd.cjs?v=1',
  'formbricks.umd.cjs;.png',
  '%F0%9F%99%82.js',
  '',
];

const ODD_METHODS = [
  'PATCH',
  'PUT',
  'POST',
  'DELETE',
  'GET',
  'OPTIONS',
  'HEAD',
  'PROPFIND',
  'MKCOL',
  'FOO',
  'M-SEARCH',
  'PURGE',
];

const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/xml',
  '',
  '*/*',
  'application/json, text/html',
];

const RAW_BODIES: (string | Buffer)[] = [
  '',
  'null',
  '[]',
  '"just a string"',
  '42',
  '1e999',
  'NaN',
  '{',
  '{"a":}',
  "{'single':'quotes'}",
  '{"a":1,}',
  '{"a":1} trailing',
  '/* comment */ {}',
  '\ufeff{}',
  '{"a":1,"a":2}',
  '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}',
  Buffer.from([0xff, 0xfe, 0x7b, 0x7d]),
  Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0x80, 0x22, 0x7d]),
  Buffer.from([0x00, 0x00, 0x00]),
  '['.repeat(5_000) + ']'.repeat(5_000),
  '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000),
  '{"data":' + '{"x":'.repeat(3_000) + '1' + '}'.repeat(3_000) + '}',
];

const INVALID_UTF8 = [
  [0xff],
  [0xc0, 0x80],
  [0xed, 0xa0, 0x80],
  [0xe2, 0x82],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0x80],
];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function deep(depth: number, kind: 'array' | 'object'): Json {
  let value: Json = 1;
  for (let i = 0; i < depth; i++) value = kind === 'array' ? [value] : { d: value };
  return value;
}

/** Object paths of a JSON value (objects only, one level into nested objects). */
function paths(value: Json): string[][] {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([key, inner]) => [
    [key],
    ...(inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.keys(inner).map((k) => [key, k])
      : []),
  ]);
}

function parentOf(root: { [key: string]: Json }, path: string[]): { [key: string]: Json } | undefined {
  let at: Json = root;
  for (const key of path.slice(0, -1)) {
    if (!at || typeof at !== 'object' || Array.isArray(at)) return undefined;
    at = at[key] as Json;
  }
  return at && typeof at === 'object' && !Array.isArray(at) ? at : undefined;
}

function oddValue(random: () => number): Json {
  const roll = random();
  if (roll < 0.45) return pick(random, ODD_STRINGS);
  if (roll < 0.85) return pick(random, ODD_VALUES);
  if (roll < 0.95) return deep(pick(random, [50, 500, 3_000]), random() < 0.5 ? 'array' : 'object');
  return Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, i]));
}

/** One broken body, starting from the route's valid one. */
function breakBody(random: () => number, valid: Json): { body: Buffer; json?: unknown; mutation: string } {
  const roll = random();
  if (roll < 0.12) {
    const raw = pick(random, RAW_BODIES);
    return { body: Buffer.isBuffer(raw) ? raw : Buffer.from(raw), mutation: 'odd JSON' };
  }
  const value = structuredClone(valid) as { [key: string]: Json };
  const fields = paths(value);
  let mutation: string;
  if (roll < 0.45 && fields.length > 0) {
    const path = pick(random, fields);
    const replacement = oddValue(random);
    parentOf(value, path)![path.at(-1)!] = replacement;
    mutation = `${path.join('.')} = ${JSON.stringify(replacement)?.slice(0, 60)}`;
  } else if (roll < 0.6 && fields.length > 0) {
    const path = pick(random, fields);
    delete parentOf(value, path)![path.at(-1)!];
    mutation = `without ${path.join('.')}`;
  } else if (roll < 0.8) {
    // A NUL, a lone surrogate or another odd key in an object of the body (or at its top).
    const objects = [
      [],
      ...fields.filter((p) => {
        const inner = parentOf(value, [...p, 'x']);
        return inner !== undefined;
      }),
    ];
    const path = pick(random, objects);
    const target = path.length === 0 ? value : (parentOf(value, [...path, 'x']) ?? value);
    const key = pick(random, ODD_KEYS);
    target[key] = pick(random, ODD_STRINGS.slice(0, 8));
    mutation = `key ${JSON.stringify(key)} in ${path.join('.') || 'body'}`;
  } else if (roll < 0.9) {
    const json = JSON.stringify(value);
    // Invalid UTF-8 inside the first string value.
    const at = json.indexOf('":"') + 3;
    const bytes = pick(random, INVALID_UTF8);
    const body = Buffer.concat([
      Buffer.from(json.slice(0, at)),
      Buffer.from(bytes),
      Buffer.from(json.slice(at)),
    ]);
    return { body, mutation: `invalid UTF-8 ${bytes.map((b) => b.toString(16)).join(' ')}` };
  } else if (roll < 0.93) {
    const size = pick(random, [100_000, 1_500_000, 2_200_000]);
    value.padding = 'x'.repeat(size);
    mutation = `padding of ${size} characters`;
  } else {
    value.extra = oddValue(random);
    mutation = `extra key`;
  }
  return { body: Buffer.from(JSON.stringify(value)), json: value, mutation };
}

function pathFor(
  random: () => number,
  spec: RouteSpec,
  f: FuzzFixtures,
  method: string,
  breakPath: boolean,
): { path: string; mutation?: string } {
  let mutation: string | undefined;
  const names = Object.keys(spec.params);
  const broken = breakPath && names.length > 0 ? pick(random, names) : undefined;
  const path = spec.pattern.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    if (name === broken) {
      const bad = pick(random, BAD_IDS);
      mutation = `${name} = ${bad.slice(0, 60)}`;
      return bad;
    }
    const kind = spec.params[name];
    if (kind === 'environment') return f.environmentId;
    // A DELETE never names the fixtures: the run needs them to the end.
    if (method === 'DELETE') return 'srv_00000000000000000000000000';
    if (kind === 'survey') return f.surveyId;
    if (kind === 'response') return f.responseId;
    if (kind === 'contact') return f.contactId;
    if (kind === 'actionClass') return f.actionClassId;
    if (kind === 'asset') return pick(random, ASSET_PATHS);
    return name === 'provider' ? pick(random, ['slack', 'notion']) : 'int_00000000000000000000000000';
  });
  return { path, mutation };
}

const QUERIES = [
  '?limit=-1',
  '?limit=abc',
  '?limit=1e999',
  '?offset=-5',
  '?offset=99999999999999999999',
  '?limit=0',
  '?limit=%00',
  '?surveyId=..%2F..%2F',
  '?surveyId=%ed%a0%80',
  '?environmentId=env_00000000000000000000000000',
  '?status=unknown',
  '?limit=1&limit=2&limit=x',
  '?state=forged&code=x',
  '?error=access_denied',
  '?%zz=1',
  '?a=' + 'q'.repeat(6_000),
  '?from=2026-13-45&to=yesterday',
  '?from=2030-01-01&to=2020-01-01',
  '?to=%00',
  '?after=..%2F',
];

/** The `n`th bad request of the run with this PRNG. */
export function fuzzRequest(random: () => number, f: FuzzFixtures): FuzzRequest {
  const spec = pick(random, ROUTES);
  const mutations: string[] = [];
  const roll = random();
  let method = pick(random, spec.methods);
  if (roll < 0.08) {
    method = pick(random, ODD_METHODS);
    mutations.push(`method ${method}`);
  }
  const { path, mutation } = pathFor(random, spec, f, method, roll >= 0.08 && roll < 0.3);
  if (mutation) mutations.push(mutation);
  let query = '';
  if (random() < 0.12) {
    query = pick(random, QUERIES);
    mutations.push(`query ${query.slice(0, 40)}`);
  }
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (spec.management) {
    const auth = random();
    if (auth < 0.8) headers['x-api-key'] = f.apiKey;
    else if (auth < 0.87) mutations.push('no API key');
    else {
      headers['x-api-key'] = pick(random, [
        '',
        'chk_wrong',
        f.apiKey + 'x',
        'k'.repeat(5_000),
        f.apiKey.toUpperCase(),
      ]);
      mutations.push('bad API key');
    }
  }
  const headerRoll = random();
  if (headerRoll < 0.1) {
    headers['content-type'] = pick(random, CONTENT_TYPES);
    mutations.push(`content-type ${headers['content-type']}`);
  } else if (headerRoll < 0.14) {
    headers['content-encoding'] = 'gzip';
    mutations.push('content-encoding gzip on a plain body');
  } else if (headerRoll < 0.17) {
    headers['x-forwarded-for'] = pick(random, ['not-an-ip', '1.1.1.1, ::ffff:300.1.1.1', 'x'.repeat(4_000)]);
    headers['user-agent'] = pick(random, ['', 'Mozilla/5.0 ' + '('.repeat(2_000), '\u00ff\u00fe']);
    headers['cf-ipcountry'] = pick(random, ['ZZ', '', 'x'.repeat(300)]);
    mutations.push('odd forwarding headers');
  } else if (headerRoll < 0.19) {
    headers['idempotency-key'] = pick(random, ['', 'k'.repeat(2_000), '\u00ff']);
    mutations.push('odd idempotency key');
  }
  let body: Buffer | undefined;
  let json: unknown;
  if (spec.body && method !== 'GET' && method !== 'HEAD' && method !== 'DELETE') {
    if (random() < 0.85 || mutations.length === 0) {
      const broken = breakBody(random, spec.body(f));
      body = broken.body;
      json = broken.json;
      mutations.push(broken.mutation);
    } else {
      json = spec.body(f);
      body = Buffer.from(JSON.stringify(json));
    }
  } else if (method !== 'GET' && method !== 'HEAD' && random() < 0.3) {
    const raw = pick(random, RAW_BODIES);
    body = Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
    mutations.push('body where none is expected');
  }
  if (mutations.length === 0) mutations.push('as is');
  // Node frames a body of GET, DELETE or OPTIONS only when told its length; unframed, the body
  // would be read as the start of the next request on the connection.
  if (body) headers['content-length'] = String(body.length);
  return {
    route: spec.pattern,
    method,
    path: path + query,
    headers,
    body,
    json,
    mutation: mutations.join(', '),
  };
}
