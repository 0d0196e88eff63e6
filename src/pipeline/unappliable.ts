// Commands that can never be applied, found and set aside so that they do not stall their partition.
//
// The edge refuses what PostgreSQL refuses (src/edge/safe-json.ts), but a command can still reach a
// processor that PostgreSQL will not take: one written by an older edge, by hand, or by a bug. Its
// batch fails the same way on every attempt, and retrying it forever would hold up every other
// tenant's commands behind it in the partition. So when a batch fails with such an error, it is
// applied again in parts until the commands that fail on their own are found; those are
// dead-lettered (reason `unappliable`) and everything else is applied.
//
// Which errors: PostgreSQL's verdict on the *values* of a statement, deterministic for a given
// command (the guard against dead-lettering good commands because of a bug):
// - class 22, data exception (22P05 a NUL in jsonb, 22P02 a lone surrogate in jsonb, 22001 a value
//   too long for its column, 22021 a bad byte sequence, …);
// - class 23, integrity constraint violation (23502 not null, 23503 foreign key, 23505 unique, …);
// - class 54, program limit exceeded (54000, 54001 nesting too deep for jsonb, …);
// - 08P01 from a statement carrying a NUL in a text value (MikroORM inlines parameters, and the
//   protocol cannot carry a NUL in a query). Class 08 is otherwise "connection lost" and transient
//   (src/transient.ts), so this one is recognised here before the retrier sees it.
// Anything else that is not transient — a TypeError, an SQL syntax error (42xxx), a missing table —
// is a bug that would fail every command alike: dead-lettering it would empty the topic into
// dead-letter, so it is thrown as before and the partition waits for a fix. Even for the errors
// above, a command is dead-lettered only when it fails *alone*: commands that fail only together
// are all applied, one part after another.
//
// Order per key: parts are made of whole keys (all commands of a key stay together and in order)
// until a part holds one key. A key with several commands then has them applied one by one, in
// order, and only those that fail on their own are dead-lettered. The rule is: an unappliable
// command is skipped as if it had never been sent, and the key's other commands, before and after
// it, are applied in order. This gives the same result whatever the batch boundaries are (a later
// batch with more commands of the key applies them too). For a response, a skipped create leaves
// its later updates parked until they expire as `response_not_found`, exactly as if the create had
// been lost.
import { groupBy } from '../group-by.ts';

/** The PostgreSQL verdict that a statement's values cannot be stored. */
export class UnappliableError extends Error {
  constructor(
    /** The SQLSTATE, e.g. 22P05. */
    readonly sqlState: string,
    /** PostgreSQL's message without the statement and without quoted values (no personal data). */
    readonly reason: string,
  ) {
    super(`unappliable: ${sqlState} ${reason}`);
    this.name = 'UnappliableError';
  }
}

const UNAPPLIABLE_CLASSES = new Set(['22', '23', '54']);

function sqlStateOf(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 5; depth++) {
    const { code } = e as { code?: unknown };
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * The driver's message is `<statement with its values> - <PostgreSQL's message>[\n - detail: …]`:
 * only PostgreSQL's message is kept, and a quoted value at its end (`invalid input syntax for type
 * integer: "…"`) is cut, so that no answer or attribute reaches the logs or the dead letter.
 */
function safeReason(error: unknown): string {
  const message = (error instanceof Error ? error.message : String(error)).replace(
    /\n - detail:[\s\S]*$/,
    '',
  );
  const last = message.split(' - ').at(-1) ?? '';
  return last.replace(/:\s*"[\s\S]*$/, '').slice(0, 200);
}

/** The error as an UnappliableError when it is PostgreSQL refusing the values; undefined otherwise. */
export function asUnappliable(error: unknown): UnappliableError | undefined {
  if (error instanceof UnappliableError) return error;
  const state = sqlStateOf(error);
  if (state === undefined) return undefined;
  if (!UNAPPLIABLE_CLASSES.has(state.slice(0, 2)) && state !== '08P01') return undefined;
  return new UnappliableError(state, safeReason(error));
}

export interface Culprit<C> {
  command: C;
  error: UnappliableError;
}

/**
 * Applies `commands` (whose first attempt failed with `failure`), isolating the unappliable ones.
 * `attempt` applies a part: it resolves false when the batch was taken away (nothing more may be
 * done), and throws an UnappliableError for a part PostgreSQL refuses (any other error propagates).
 * Returns the culprits, or undefined when the batch was taken away.
 */
export async function isolateUnappliable<C>(
  commands: readonly C[],
  failure: UnappliableError,
  keyOf: (command: C) => string,
  attempt: (part: C[]) => Promise<boolean>,
): Promise<Culprit<C>[] | undefined> {
  type Outcome = 'applied' | 'gone' | UnappliableError;
  const apply = async (part: C[]): Promise<Outcome> => {
    try {
      return (await attempt(part)) ? 'applied' : 'gone';
    } catch (error) {
      if (error instanceof UnappliableError) return error;
      throw error;
    }
  };
  const culprits: Culprit<C>[] = [];

  // One key's commands, in order, each on its own.
  const isolateKey = async (group: C[], error: UnappliableError): Promise<boolean> => {
    if (group.length === 1) {
      culprits.push({ command: group[0]!, error });
      return true;
    }
    for (const command of group) {
      const outcome = await apply([command]);
      if (outcome === 'gone') return false;
      if (outcome !== 'applied') culprits.push({ command, error: outcome });
    }
    return true;
  };
  // Whole keys, halved until a failing part holds one key.
  const isolate = async (groups: C[][], error: UnappliableError): Promise<boolean> => {
    if (groups.length === 1) return isolateKey(groups[0]!, error);
    const middle = Math.ceil(groups.length / 2);
    for (const half of [groups.slice(0, middle), groups.slice(middle)]) {
      const outcome = await apply(half.flat());
      if (outcome === 'gone') return false;
      if (outcome !== 'applied' && !(await isolate(half, outcome))) return false;
    }
    return true;
  };

  return (await isolate([...groupBy(commands, keyOf).values()], failure)) ? culprits : undefined;
}
