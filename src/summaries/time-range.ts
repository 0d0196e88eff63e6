// The creation-time range of a summary (`from`, `to`: both included), as the API and the CLI take it.
import { invalidInput } from '../errors.ts';

/** ISO timestamps; an end left out is open. */
export interface TimeRange {
  from?: string;
  to?: string;
}

const DATE_OR_TIME = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/;
/** The earliest instant taken: year 0 is not a year PostgreSQL reads back as written. */
const EARLIEST = Date.parse('0001-01-01T00:00:00Z');
const INSTANT_PROBLEM = 'must be a date or an ISO 8601 date-time with a time zone';

/** A date or an ISO 8601 date-time with a time zone, as a UTC ISO timestamp; undefined if it is neither. */
export function parseInstant(value: string): string | undefined {
  const at = DATE_OR_TIME.test(value) ? Date.parse(value) : NaN;
  return Number.isNaN(at) || at < EARLIEST ? undefined : new Date(at).toISOString();
}

/** A date or an ISO 8601 date-time with a time zone for each end given; `invalid_input` names a bad one. */
export function parseTimeRange(raw: { from?: string | null; to?: string | null }): TimeRange {
  const problems: Record<string, string> = {};
  const range: TimeRange = readInstants({ from: raw.from, to: raw.to }, problems);
  if (range.from && range.to && range.from > range.to) problems['to'] = 'must not be before from';
  if (Object.keys(problems).length > 0) throw invalidInput(problems);
  return range;
}

/**
 * Each instant given (parseInstant), by its name; a bad one goes in `problems` under its name, so
 * that a caller reports it with its other parameters.
 */
export function readInstants<K extends string>(
  raw: Partial<Record<K, string | null>>,
  problems: Record<string, string>,
): Partial<Record<K, string>> {
  const instants: Partial<Record<K, string>> = {};
  for (const name of Object.keys(raw) as K[]) {
    const value = raw[name];
    if (value === null || value === undefined || value === '') continue;
    const at = parseInstant(value);
    if (at === undefined) problems[name] = INSTANT_PROBLEM;
    else instants[name] = at;
  }
  return instants;
}
