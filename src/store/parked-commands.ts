// Commands that came before what they apply to, kept as they were consumed until their processor
// can apply them (pipeline/parking.ts). A command is parked unclaimed: handed to the processor
// again, it is claimed and applied like any other.
import { query, type EntityManager } from './orm.ts';

/** A message as it was consumed (the pipeline's ConsumedMessage without its processing trace). */
export interface ParkedMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string;
  value: Buffer | null;
  headers: Record<string, string>;
}

export interface ParkedRow {
  eventId: string;
  message: ParkedMessage;
  /** As PostgreSQL prints it (to the microsecond): what tells whether it was parked again since. */
  parkedAt: string;
}

/** Parks `messages` under their event ids (parking one again makes it wait from now). */
export async function parkCommands(
  tx: EntityManager,
  parked: readonly { eventId: string; message: ParkedMessage }[],
): Promise<void> {
  if (parked.length === 0) return;
  await query(
    tx,
    `insert into parked_commands (event_id, topic, key, partition, "offset", value, headers)
     select p.event_id, p.topic, p.key, p.partition, p."offset", p.value, p.headers
     from jsonb_to_recordset(?::jsonb) as p(event_id varchar, topic varchar, key varchar, partition int,
       "offset" varchar, value text, headers jsonb)
     on conflict (event_id) do update set parked_at = now()`,
    [
      JSON.stringify(
        parked.map(({ eventId, message }) => ({
          event_id: eventId,
          topic: message.topic,
          key: message.key,
          partition: message.partition,
          offset: message.offset,
          value: message.value?.toString('utf8') ?? '',
          headers: message.headers,
        })),
      ),
    ],
  );
}

interface Row {
  event_id: string;
  topic: string;
  key: string;
  partition: number;
  offset: string;
  value: string;
  headers: Record<string, string>;
  parked_at: string;
}

const COLUMNS = `p.event_id, p.topic, p.key, p.partition, p."offset", p.value, p.headers, p.parked_at::text`;

const toParked = (row: Row): ParkedRow => ({
  eventId: row.event_id,
  parkedAt: row.parked_at,
  message: {
    topic: row.topic,
    partition: row.partition,
    offset: row.offset,
    key: row.key,
    value: Buffer.from(row.value, 'utf8'),
    headers: row.headers,
  },
});

/**
 * Commands parked on `topic` whose key is now a stored response, or one whose create was refused,
 * oldest first: what the response processor can apply (or reject) now.
 */
export async function parkedForDecidedResponses(
  em: EntityManager,
  topic: string,
  limit: number,
): Promise<ParkedRow[]> {
  const rows = await query<Row>(
    em,
    `select ${COLUMNS} from parked_commands p
     where p.topic = ? and (exists (select 1 from responses r where r.id = p.key)
                            or exists (select 1 from refused_responses f where f.id = p.key))
     order by p.parked_at limit ?`,
    [topic, limit],
  );
  return rows.map(toParked);
}

/** Forgets parked commands that were handed to their processor (unless parked again since). */
export async function unparkCommands(em: EntityManager, rows: readonly ParkedRow[]): Promise<void> {
  if (rows.length === 0) return;
  await query(
    em,
    `delete from parked_commands p using jsonb_to_recordset(?::jsonb) as d(event_id varchar, parked_at timestamptz)
     where p.event_id = d.event_id and p.parked_at = d.parked_at`,
    [JSON.stringify(rows.map((r) => ({ event_id: r.eventId, parked_at: r.parkedAt })))],
  );
}

/** Takes the commands on `topic` parked longer than `seconds` (in the caller's transaction). */
export async function takeExpiredCommands(
  tx: EntityManager,
  topic: string,
  seconds: number,
  limit: number,
): Promise<ParkedRow[]> {
  const rows = await query<Row>(
    tx,
    `delete from parked_commands p where p.event_id in (
       select event_id from parked_commands
       where topic = ? and parked_at < now() - make_interval(secs => ?)
       order by parked_at limit ? for update skip locked)
     returning ${COLUMNS}`,
    [topic, seconds, limit],
  );
  return rows.map(toParked);
}

/** How many commands wait on each topic. */
export async function countParked(em: EntityManager): Promise<Map<string, number>> {
  const rows = await query<{ topic: string; count: string }>(
    em,
    `select topic, count(*) as count from parked_commands group by topic`,
    [],
  );
  return new Map(rows.map((r) => [r.topic, Number(r.count)]));
}
