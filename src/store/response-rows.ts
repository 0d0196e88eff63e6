// The response processor's hot path to the `responses` table: per batch, one locking read of the
// responses it did not create and one upsert of them, and one insert of those it created, each one
// statement with its values sent as parameters (the unit of work's change tracking costs more CPU
// than everything else in the batch). The upsert and the insert take the whole batch as ONE JSON
// parameter read element by element, so a batch of any size is one statement, within PostgreSQL's
// 65,535 parameters.
import type { ResponseState } from '../responses/state.ts';
import { query, rowsByIds, type EntityManager } from './orm.ts';

/** Each field's column and type. */
const COLUMNS = {
  id: ['id', 'varchar'],
  environmentId: ['environment_id', 'varchar'],
  surveyId: ['survey_id', 'varchar'],
  finished: ['finished', 'boolean'],
  data: ['data', 'jsonb'],
  ttc: ['ttc', 'jsonb'],
  variables: ['variables', 'jsonb'],
  meta: ['meta', 'jsonb'],
  language: ['language', 'varchar'],
  endingId: ['ending_id', 'varchar'],
  displayId: ['display_id', 'varchar'],
  singleUseId: ['single_use_id', 'varchar'],
  contactId: ['contact_id', 'varchar'],
  contactAttributes: ['contact_attributes', 'jsonb'],
  createdAt: ['created_at', 'timestamptz'],
  updatedAt: ['updated_at', 'timestamptz'],
  clocks: ['clocks', 'jsonb'],
} as const satisfies Record<keyof ResponseState, readonly [string, string]>;

const FIELDS = Object.keys(COLUMNS) as (keyof ResponseState)[];
const COLUMN_LIST = FIELDS.map((f) => COLUMNS[f][0]).join(', ');
/** Fields an update may change; the others are fixed when the response is created. */
const UPDATED = FIELDS.filter(
  (f) =>
    !['id', 'environmentId', 'surveyId', 'createdAt', 'contactId', 'singleUseId', 'displayId'].includes(f),
);
const SELECTED = FIELDS.map((f) => `${COLUMNS[f][0]} as "${f}"`).join(', ');
/** The batch's stored responses, locked in the order of the ids given (see rowsByIds). */
const LOCK = rowsByIds('responses', SELECTED, { forUpdate: true });
/** A field read out of the batch's JSON element `x` as its column's type. */
function fieldOf(field: keyof ResponseState): string {
  const type = COLUMNS[field][1];
  // A JSON value stays binary (a JSON null is SQL's NULL); jsonb_to_recordset printed each one and
  // parsed it again: 3 µs more per row of PostgreSQL's CPU.
  if (type === 'jsonb') return `nullif(x->'${field}', 'null')`;
  return type === 'varchar' ? `x->>'${field}'` : `(x->>'${field}')::${type}`;
}
// The JSON holds the states as they are, by field name.
const INSERT_ROWS = `insert into responses (${COLUMN_LIST})
  select ${FIELDS.map(fieldOf).join(', ')} from jsonb_array_elements(?::jsonb) as x`;
const UPSERT = `${INSERT_ROWS}
  on conflict (id) do update set ${UPDATED.map((f) => `${COLUMNS[f][0]} = excluded.${COLUMNS[f][0]}`).join(', ')}`;
/** Inserts the new ones only, and counts them. */
const INSERT_NEW = `with inserted as (${INSERT_ROWS} on conflict (id) do nothing returning 1)
  select count(*)::int as n from inserted`;

type Row = Record<string, unknown>;

/** Reads the responses with these ids and locks them until the transaction ends. */
export async function lockResponses(
  tx: EntityManager,
  ids: readonly string[],
): Promise<Map<string, ResponseState>> {
  if (ids.length === 0) return new Map();
  // In one order, so that two transactions that lock some of the same rows never deadlock.
  const rows = await query<Row>(tx, LOCK, [[...ids].sort()]);
  return new Map(rows.map((row) => [row.id as string, stateOf(row)]));
}

/** One stored response's state, not locked (the management API's view of it). */
export async function readResponseState(em: EntityManager, id: string): Promise<ResponseState | undefined> {
  const [row] = await query<Row>(em, `select ${SELECTED} from responses where id = ?`, [id]);
  return row && stateOf(row);
}

function stateOf(row: Row): ResponseState {
  return { ...row, createdAt: toIso(row.createdAt), updatedAt: toIso(row.updatedAt) } as ResponseState;
}

export async function saveResponses(tx: EntityManager, states: readonly ResponseState[]): Promise<void> {
  if (states.length === 0) return;
  await query(tx, UPSERT, [JSON.stringify(states)]);
}

/**
 * Inserts responses believed new, leaving alone any that is stored already: resolves the number
 * inserted (fewer than given when some were there).
 */
export async function insertResponses(tx: EntityManager, states: readonly ResponseState[]): Promise<number> {
  if (states.length === 0) return 0;
  const [row] = await query<{ n: number }>(tx, INSERT_NEW, [JSON.stringify(states)]);
  return row!.n;
}

/** Those of these ids that are stored responses. */
export async function storedAmong(em: EntityManager, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await query<{ id: string }>(em, rowsByIds('responses', 'id'), [ids]);
  return new Set(rows.map((row) => row.id));
}

function toIso(value: unknown): string {
  return value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();
}

/**
 * Deletes responses (of `removed`, each with its survey) with their quota memberships and
 * deliveries: no foreign keys lead from those to `responses`, they go explicitly.
 */
export async function removeResponses(
  tx: EntityManager,
  removed: readonly { id: string; surveyId: string }[],
): Promise<void> {
  if (removed.length === 0) return;
  const ids = removed.map((r) => r.id);
  await query(
    tx,
    `delete from quota_members where survey_id = any(?) and response_id = any(?)`, // the key's survey prefix
    [[...new Set(removed.map((r) => r.surveyId))], ids],
  );
  await query(tx, `delete from deliveries where response_id = any(?)`, [ids]);
  await query(tx, `delete from responses where id = any(?)`, [ids]);
}
