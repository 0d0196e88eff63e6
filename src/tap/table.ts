// `chorus tap --format table`: one line per event for a person: when, what, which key and
// environment, and a summary that names ids and states but never answers or attributes.
import type { TapEvent } from './select.ts';

const COLUMNS = [
  { title: 'TIME', width: 22 },
  { title: 'TYPE', width: 22 },
  { title: 'KEY', width: 28 },
  { title: 'ENVIRONMENT', width: 26 },
  { title: 'SUMMARY', width: 0 }, // the rest of the line
] as const;

export const TABLE_HEADER = line(COLUMNS.map((c) => c.title));

/** The row of an event: its time is when it happened (`occurredAt`), else when Kafka got it. */
export function tableRow(event: TapEvent, key: string | null, timestamp: Date): string {
  const occurred = typeof event.occurredAt === 'string' ? new Date(event.occurredAt) : timestamp;
  const time = Number.isNaN(occurred.getTime()) ? timestamp : occurred;
  return line([
    `${time.toISOString().slice(0, 19)}Z`,
    text(event.type),
    key ?? '-',
    text(event.environmentId),
    summary(event),
  ]);
}

function line(cells: readonly string[]): string {
  return cells
    .map((cell, i) => {
      const width = COLUMNS[i]?.width ?? 0;
      if (width === 0) return cell;
      return (cell.length > width - 1 ? `${cell.slice(0, width - 2)}…` : cell).padEnd(width);
    })
    .join('')
    .trimEnd();
}

const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : '-');
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** What tells events of one type apart, for the fields this event has. */
function summary(event: TapEvent): string {
  // A response fact carries its state in `response`; a response command at the top.
  const state = isRecord(event.response) ? event.response : event;
  const parts: string[] = [];
  if (typeof event.surveyId === 'string') parts.push(`survey ${event.surveyId}`);
  if (typeof event.name === 'string') parts.push(JSON.stringify(event.name));
  if (typeof event.status === 'string')
    parts.push(
      typeof event.previousStatus === 'string' ? `${event.previousStatus} → ${event.status}` : event.status,
    );
  if (typeof state.finished === 'boolean') parts.push(state.finished ? 'finished' : 'not finished');
  if (isRecord(state.data)) parts.push(count(Object.keys(state.data).length, 'answer'));
  if (typeof event.userId === 'string') parts.push(`user ${event.userId}`);
  if (typeof event.contactId === 'string' && !parts.some((p) => p.startsWith('user')))
    parts.push(`contact ${event.contactId}`);
  if (typeof event.reason === 'string') parts.push(`reason ${event.reason}`);
  if (isRecord(event.source))
    parts.push(
      `from ${text(event.source.topic)} ${String(event.source.partition)}@${text(event.source.offset)}`,
    );
  return parts.join(', ');
}

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
