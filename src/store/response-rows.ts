// The response processor's hot path to the `responses` table: one locking read and one multi-row
// upsert per batch, as SQL through MikroORM's connection (the unit of work's change tracking costs
// more CPU than everything else in the batch; these two statements are all the batch needs).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ResponseState } from '../processors/responses/merge-response.ts';

const COLUMNS = {
  id: 'id',
  environmentId: 'environment_id',
  surveyId: 'survey_id',
  finished: 'finished',
  data: 'data',
  ttc: 'ttc',
  variables: 'variables',
  meta: 'meta',
  language: 'language',
  endingId: 'ending_id',
  displayId: 'display_id',
  singleUseId: 'single_use_id',
  contactId: 'contact_id',
  contactAttributes: 'contact_attributes',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
} as const satisfies Record<keyof ResponseState, string>;

const FIELDS = Object.keys(COLUMNS) as (keyof ResponseState)[];
const JSON_FIELDS = new Set<keyof ResponseState>(['data', 'ttc', 'variables', 'meta', 'contactAttributes']);
/** Fields an update may change; the others are fixed when the response is created. */
const UPDATED = FIELDS.filter(
  (f) =>
    !['id', 'environmentId', 'surveyId', 'createdAt', 'contactId', 'singleUseId', 'displayId'].includes(f),
);

type Row = Record<string, unknown>;

/** Reads the responses with these ids and locks them until the transaction ends. */
export async function lockResponses(
  tx: EntityManager,
  ids: readonly string[],
): Promise<Map<string, ResponseState>> {
  if (ids.length === 0) return new Map();
  const rows = await tx.execute<Row[]>(
    `select ${FIELDS.map((f) => `${COLUMNS[f]} as "${f}"`).join(', ')}
     from responses where id in (${ids.map(() => '?').join(', ')}) for update`,
    [...ids],
  );
  return new Map(
    rows.map((row) => [
      row.id as string,
      { ...row, createdAt: toIso(row.createdAt), updatedAt: toIso(row.updatedAt) } as ResponseState,
    ]),
  );
}

export async function saveResponses(tx: EntityManager, states: readonly ResponseState[]): Promise<void> {
  if (states.length === 0) return;
  const placeholders = `(${FIELDS.map((f) => (JSON_FIELDS.has(f) ? '?::jsonb' : '?')).join(', ')})`;
  await tx.execute(
    `insert into responses (${FIELDS.map((f) => COLUMNS[f]).join(', ')})
     values ${states.map(() => placeholders).join(', ')}
     on conflict (id) do update set ${UPDATED.map((f) => `${COLUMNS[f]} = excluded.${COLUMNS[f]}`).join(', ')}`,
    states.flatMap((s) =>
      FIELDS.map((f) => (JSON_FIELDS.has(f) && s[f] !== null ? JSON.stringify(s[f]) : s[f])),
    ),
  );
}

function toIso(value: unknown): string {
  return value instanceof Date ? value.toISOString() : new Date(String(value)).toISOString();
}
