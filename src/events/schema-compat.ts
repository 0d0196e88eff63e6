// Which changes to a public event's JSON Schema its readers can't take (docs/events-compatibility.md
// states the rules for people; this module is them as code). Pure: it compares two plain JSON
// Schemas, the one committed for a (type, version) and the one generated now for the same pair.
//
// The principle: one (type, version) describes every event of that type and version on the topic,
// the ones already written (kept for the retention time, replayed by a reader that starts from the
// beginning) and the ones to come. So a change may neither reject an event that the old schema
// accepted (narrowing: a reader validating the retained history against the new schema fails) nor
// hand a reader of the old schema a value it was told could not be there (a field gone, optional,
// or of another type). The one kind of addition readers must take is the open-ended kind, which
// the contract tells them to ignore or treat as "other": an optional field, a new value of an
// enumeration, a new variant of a discriminated union (as a new event type on a topic).
//
// Understood keywords: `type`, `const`, `enum`, `anyOf`, `properties`, `required`,
// `additionalProperties`, `patternProperties`, `items`, the value constraints of CONSTRAINTS, and
// the annotations of ANNOTATIONS (ignored). Any other keyword counts as breaking when it changes at
// all: the checker can't tell what its change means, so it doesn't guess.

export interface BreakingChange {
  /** The field, as `response.meta.userAgent.os`, `blocks[].id` or `data.*`; empty for the event. */
  readonly path: string;
  readonly change: string;
}

export const describeChange = ({ path, change }: BreakingChange) =>
  `${path === '' ? '(event)' : path}: ${change}`;

/** Every change from `before` to `after` that a reader of the stream can't take; none when compatible. */
export function breakingChanges(before: unknown, after: unknown): BreakingChange[] {
  const changes: BreakingChange[] = [];
  compare(before, after, '', changes);
  return changes;
}

type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'object' | 'array';
type Node = Readonly<Record<string, unknown>>;

const words = (list: string) => list.split(/\s+/);
/** Annotations: they say nothing about which values are valid, so they may change freely. */
const ANNOTATIONS = new Set(
  words('$schema $id $comment title description examples default deprecated readOnly writeOnly'),
);
/** Value constraints, compared keyword by keyword. */
const CONSTRAINTS =
  words(`format pattern minLength maxLength minimum maximum exclusiveMinimum exclusiveMaximum
  multipleOf minItems maxItems uniqueItems minProperties maxProperties`);
const STRUCTURE = new Set([
  ...words('type const enum anyOf properties required additionalProperties patternProperties items'),
  ...CONSTRAINTS,
]);
const PRIMITIVES = new Set<JsonType>(['string', 'number', 'integer', 'boolean', 'null']);

/** What a schema accepts, split by JSON type: the nodes (union branches) that describe each type. */
interface Variants {
  readonly any: boolean;
  readonly byType: ReadonlyMap<JsonType, readonly Node[]>;
}

function compare(before: unknown, after: unknown, path: string, changes: BreakingChange[]): void {
  compareUnionSiblings(before, after, path, changes);
  const old = variants(before);
  const now = variants(after);
  if (old.any && now.any) {
    // Untyped nodes (`{}`, or constraints alone): what they say besides the type still counts.
    if (isNode(before) && isNode(after)) {
      compareConstraints([before], [after], path, changes);
      compareUnsupported([before], [after], path, changes);
    }
    return;
  }
  if (old.any || now.any) {
    if (old.any !== now.any)
      changes.push({ path, change: `type changed from ${typeNames(old)} to ${typeNames(now)}` });
    return;
  }
  const oldTypes = [...old.byType.keys()];
  const newTypes = [...now.byType.keys()];
  if (!sameSet(oldTypes, newTypes)) {
    changes.push({ path, change: `type changed from ${typeNames(old)} to ${typeNames(now)}` });
  }
  for (const type of oldTypes) {
    const oldNodes = old.byType.get(type);
    const newNodes = now.byType.get(type);
    if (oldNodes === undefined || newNodes === undefined) continue;
    compareConstraints(oldNodes, newNodes, path, changes);
    compareUnsupported(oldNodes, newNodes, path, changes);
    if (PRIMITIVES.has(type)) compareValues(type, oldNodes, newNodes, path, changes);
    else if (type === 'object') compareObjectVariants(oldNodes, newNodes, path, changes);
    else compareArrayVariants(oldNodes, newNodes, path, changes);
  }
}

function variants(schema: unknown): Variants {
  if (schema === true || (isNode(schema) && isUnconstrained(schema))) return { any: true, byType: new Map() };
  const byType = new Map<JsonType, Node[]>();
  if (!isNode(schema)) return { any: false, byType }; // `false`: nothing is accepted.
  if (Array.isArray(schema.anyOf)) {
    let any = false;
    for (const branch of schema.anyOf) {
      const inner = variants(branch);
      any ||= inner.any;
      for (const [type, nodes] of inner.byType) byType.set(type, [...(byType.get(type) ?? []), ...nodes]);
    }
    return { any, byType };
  }
  for (const type of typesOf(schema)) byType.set(type, [schema]);
  return { any: false, byType };
}

/** A node without `type`, `const`, `enum`, `anyOf` or anything implying a type accepts any value. */
const isUnconstrained = (node: Node) => typesOf(node).length === 0 && !Array.isArray(node.anyOf);

function typesOf(node: Node): JsonType[] {
  if (typeof node.type === 'string') return [node.type as JsonType];
  if (Array.isArray(node.type)) return node.type as JsonType[];
  const values = valuesOf(node);
  if (values !== undefined) return [...new Set(values.map(jsonType))];
  // Without `type`, JSON Schema lets other types through; typebox always writes `type`, and reading
  // these keywords as the type they describe keeps their changes visible.
  if (['properties', 'required', 'additionalProperties', 'patternProperties'].some((k) => k in node)) {
    return ['object'];
  }
  return 'items' in node ? ['array'] : [];
}

/** The values a node is limited to (`const` or `enum`), or undefined when it has no such limit. */
const valuesOf = (node: Node): unknown[] | undefined =>
  'const' in node ? [node.const] : Array.isArray(node.enum) ? node.enum : undefined;

function jsonType(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const type = typeof value;
  if (type === 'string' || type === 'boolean' || type === 'object') return type;
  return 'number';
}

/** Enumerations may grow (readers treat an unknown value as "other"), never shrink. */
function compareValues(
  type: JsonType,
  old: readonly Node[],
  now: readonly Node[],
  path: string,
  changes: BreakingChange[],
) {
  const oldValues = allowedValues(type, old);
  const newValues = allowedValues(type, now);
  if (newValues === undefined) return; // Any value of the type: nothing the old schema allowed is refused.
  if (oldValues === undefined) {
    changes.push({ path, change: `now limited to ${newValues.join(', ')}` });
    return;
  }
  const removed = oldValues.filter((value) => !newValues.includes(value));
  if (removed.length > 0) changes.push({ path, change: `no longer allows ${removed.join(', ')}` });
}

/** The JSON texts of the values of `type` the nodes allow, or undefined when any value is. */
function allowedValues(type: JsonType, nodes: readonly Node[]): string[] | undefined {
  const values: string[] = [];
  for (const node of nodes) {
    const limited = valuesOf(node);
    if (limited === undefined) return undefined;
    values.push(...limited.filter((value) => jsonType(value) === type).map((value) => JSON.stringify(value)));
  }
  return values;
}

function compareObjectVariants(
  old: readonly Node[],
  now: readonly Node[],
  path: string,
  changes: BreakingChange[],
) {
  const [oldOnly] = old;
  const [newOnly] = now;
  if (old.length === 1 && now.length === 1 && oldOnly && newOnly) {
    compareObject(oldOnly, newOnly, path, changes);
    return;
  }
  const key = discriminator(old, now);
  if (key === undefined) {
    if (canonical(old) !== canonical(now)) {
      changes.push({
        path,
        change:
          'a union of several object shapes changed; the checker matches them only by a property with a ' +
          'distinct constant in each (a discriminator), and these have none',
      });
    }
    return;
  }
  // Variants are matched by their discriminator's value; a new one is an addition readers skip.
  for (const variant of old) {
    const value = discriminatorValue(variant, key);
    const match = now.find((candidate) => discriminatorValue(candidate, key) === value);
    if (match === undefined) changes.push({ path, change: `the variant with ${key} = ${value} was removed` });
    else compareObject(variant, match, path, changes);
  }
}

/** The first property (by name) of every object variant that is a constant distinct on each side. */
function discriminator(old: readonly Node[], now: readonly Node[]): string | undefined {
  const names = [...old, ...now].map((node) => Object.keys(properties(node)));
  const candidates = (names[0] ?? []).filter((name) => names.every((list) => list.includes(name))).sort();
  const distinct = (nodes: readonly Node[], name: string) => {
    const values = nodes.map((node) => discriminatorValue(node, name));
    return values.every((value) => value !== undefined) && new Set(values).size === values.length;
  };
  return candidates.find((name) => distinct(old, name) && distinct(now, name));
}

function discriminatorValue(node: Node, name: string): string | undefined {
  const property = properties(node)[name];
  const values = isNode(property) ? valuesOf(property) : undefined;
  return values?.length === 1 ? JSON.stringify(values[0]) : undefined;
}

function compareObject(old: Node, now: Node, path: string, changes: BreakingChange[]) {
  const oldProperties = properties(old);
  const newProperties = properties(now);
  const oldRequired = required(old);
  const newRequired = required(now);
  for (const [name, schema] of Object.entries(oldProperties)) {
    const field = join(path, name);
    if (!(name in newProperties)) {
      changes.push({ path: field, change: 'removed' });
      continue;
    }
    if (oldRequired.has(name) && !newRequired.has(name)) {
      changes.push({ path: field, change: 'became optional (readers of the old schema rely on it)' });
    }
    if (!oldRequired.has(name) && newRequired.has(name)) {
      changes.push({ path: field, change: 'became required (events already on the topic may lack it)' });
    }
    compare(schema, newProperties[name], field, changes);
  }
  for (const name of Object.keys(newProperties)) {
    if (name in oldProperties) continue;
    if (newRequired.has(name)) {
      changes.push({
        path: join(path, name),
        change: 'added as required (events already on the topic lack it: add it as optional)',
      });
    } else if (old.additionalProperties === false) {
      changes.push({ path: join(path, name), change: 'added, but the old schema allowed no other fields' });
    }
  }
  comparePatterns(old, now, path, changes);
  compareAdditional(old, now, path, changes);
}

/** Records: each key pattern is kept, and its values compared like a field's. */
function comparePatterns(old: Node, now: Node, path: string, changes: BreakingChange[]) {
  const oldPatterns = isNode(old.patternProperties) ? old.patternProperties : {};
  const newPatterns = isNode(now.patternProperties) ? now.patternProperties : {};
  for (const [pattern, schema] of Object.entries(oldPatterns)) {
    if (pattern in newPatterns) compare(schema, newPatterns[pattern], keysPath(path, pattern), changes);
    else
      changes.push({
        path: keysPath(path, pattern),
        change: `keys matching ${pattern} are no longer described`,
      });
  }
  for (const pattern of Object.keys(newPatterns)) {
    if (!(pattern in oldPatterns)) {
      changes.push({
        path: keysPath(path, pattern),
        change: `keys matching ${pattern} are newly constrained`,
      });
    }
  }
}

function compareAdditional(old: Node, now: Node, path: string, changes: BreakingChange[]) {
  const before = old.additionalProperties ?? true;
  const after = now.additionalProperties ?? true;
  if (typeof before !== 'boolean' && typeof after !== 'boolean') {
    compare(before, after, join(path, '*'), changes);
  } else if (canonical(before) !== canonical(after)) {
    changes.push({ path, change: `other fields changed from ${openness(before)} to ${openness(after)}` });
  }
}

const openness = (additional: unknown) =>
  additional === true ? 'allowed' : additional === false ? 'forbidden' : 'described by a schema';

function compareArrayVariants(
  old: readonly Node[],
  now: readonly Node[],
  path: string,
  changes: BreakingChange[],
) {
  const [oldOnly] = old;
  const [newOnly] = now;
  if (old.length === 1 && now.length === 1 && oldOnly && newOnly) {
    compare(oldOnly.items ?? true, newOnly.items ?? true, `${path}[]`, changes);
  } else if (canonical(old) !== canonical(now)) {
    changes.push({
      path,
      change: 'a union of several array shapes changed; the checker compares those only as equal',
    });
  }
}

/** Any change to a value constraint counts: the checker doesn't tell a loosening from a tightening. */
function compareConstraints(
  old: readonly Node[],
  now: readonly Node[],
  path: string,
  changes: BreakingChange[],
) {
  const before = old.map(constraintsOf);
  const after = now.map(constraintsOf);
  const [oldOnly] = before;
  const [newOnly] = after;
  if (before.length === 1 && after.length === 1 && oldOnly && newOnly) {
    for (const keyword of CONSTRAINTS) {
      if (canonical(oldOnly[keyword]) !== canonical(newOnly[keyword])) {
        changes.push({
          path,
          change: `${keyword} changed from ${shown(oldOnly[keyword])} to ${shown(newOnly[keyword])}`,
        });
      }
    }
  } else if (!sameSet(before.map(canonical), after.map(canonical))) {
    changes.push({ path, change: `constraints changed from ${canonical(before)} to ${canonical(after)}` });
  }
}

const constraintsOf = (node: Node) =>
  Object.fromEntries(
    CONSTRAINTS.filter((keyword) => keyword in node).map((keyword) => [keyword, node[keyword]]),
  );

function compareUnsupported(
  old: readonly Node[],
  now: readonly Node[],
  path: string,
  changes: BreakingChange[],
) {
  const before = old.map(unsupportedOf);
  const after = now.map(unsupportedOf);
  if (sameSet(before.map(canonical), after.map(canonical))) return;
  const keywords = [...new Set([...before, ...after].flatMap((keywords) => Object.keys(keywords)))].sort();
  changes.push({
    path,
    change: `${keywords.join(', ')} changed; the checker does not read these keywords, so any change to them counts`,
  });
}

/** Keywords beside `anyOf` (other than annotations) apply to every branch: any change to them counts. */
function compareUnionSiblings(before: unknown, after: unknown, path: string, changes: BreakingChange[]) {
  const siblings = (schema: unknown) =>
    isNode(schema) && Array.isArray(schema.anyOf)
      ? Object.fromEntries(Object.entries(schema).filter(([k]) => k !== 'anyOf' && !ANNOTATIONS.has(k)))
      : {};
  const old = siblings(before);
  const now = siblings(after);
  if (canonical(old) === canonical(now)) return;
  const keywords = [...new Set([...Object.keys(old), ...Object.keys(now)])].sort();
  changes.push({ path, change: `${keywords.join(', ')} beside anyOf changed; any change to them counts` });
}

const unsupportedOf = (node: Node) =>
  Object.fromEntries(
    Object.entries(node).filter(([keyword]) => !STRUCTURE.has(keyword) && !ANNOTATIONS.has(keyword)),
  );

const properties = (node: Node): Node => (isNode(node.properties) ? node.properties : {});
const required = (node: Node) => new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
const join = (path: string, name: string) => (path === '' ? name : `${path}.${name}`);
const keysPath = (path: string, pattern: string) => join(path, pattern === '^.*$' ? '*' : `/${pattern}/`);
const shown = (value: unknown) => (value === undefined ? '(none)' : JSON.stringify(value));

function typeNames({ any, byType }: Variants): string {
  if (any) return 'any value';
  const names = [...byType.keys()];
  return names.length === 0 ? 'no value' : names.join(' or ');
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.every((item) => b.includes(item)) && b.every((item) => a.includes(item));

const isNode = (value: unknown): value is Node =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** JSON with object keys sorted: equal for equal schemas whatever the key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isNode(value)) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}
