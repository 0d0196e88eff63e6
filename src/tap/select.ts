// What `chorus tap` prints of a record: the JSON object it holds, if the filters let it through.

export type TapEvent = Record<string, unknown>;

/** The event a record's value holds, or why it is not one (for a warning line). */
export function readEvent(value: Buffer | null): { event: TapEvent } | { problem: string } {
  if (value === null) return { problem: 'no value (a tombstone)' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch {
    return { problem: `not JSON: ${JSON.stringify(excerpt(value))}` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { problem: `not a JSON object: ${JSON.stringify(excerpt(value))}` };
  return { event: parsed as TapEvent };
}

const excerpt = (value: Buffer) => {
  const text = value.toString('utf8');
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
};

/** Repeated options and comma lists alike: `--type a,b --type c` is a, b and c. */
export const listOption = (values: readonly string[]): string[] =>
  values.flatMap((value) => value.split(',').map((item) => item.trim())).filter((item) => item !== '');

export interface EventFilter {
  /** Event types; `response.*` matches every type that starts with `response.`. Empty: all. */
  types: readonly string[];
  /** Environment ids. Empty: all. */
  environments: readonly string[];
}

export function matches(filter: EventFilter, event: TapEvent): boolean {
  const { type, environmentId } = event;
  if (
    filter.types.length > 0 &&
    !filter.types.some((wanted) =>
      wanted.endsWith('*') ? String(type).startsWith(wanted.slice(0, -1)) : type === wanted,
    )
  )
    return false;
  return filter.environments.length === 0 || filter.environments.includes(String(environmentId));
}
