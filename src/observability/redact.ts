// What must not leave the process in a log line, a span or an error report: the values inside SQL
// statements. Parameters are never recorded, but a statement can still carry literals, and knex puts
// a failed statement, with its values inlined, at the front of its error's message.

/** Replaces string and number literals with `?`; placeholders (`?`, `$1`) and identifiers stay. */
export function withoutLiterals(sql: string): string {
  return sql.replace(/'(?:[^']|'')*'/g, '?').replace(/(?<![\w$."])-?\d+(?:\.\d+)?\b/g, '?');
}

const STATEMENT = /\b(select\b.+\bfrom|insert\s+into|update\b.+\bset|delete\s+from)\b/is;

/** A message with the literals removed when it holds an SQL statement (a knex error, a crash line). */
export function redactedMessage(message: string): string {
  return STATEMENT.test(message) ? withoutLiterals(message) : message;
}

/** A stack with its message part (before the first frame) redacted; file:line:column stay. */
export function redactedStack(stack: string): string {
  const frames = stack.indexOf('\n    at ');
  return frames < 0 ? redactedMessage(stack) : redactedMessage(stack.slice(0, frames)) + stack.slice(frames);
}

/**
 * A copy of `error` that is safe to log or report: SQL literals removed from the message and from
 * the stack's first line, and PostgreSQL's `detail` (which can quote a whole failing row) dropped.
 */
export function redactedError(error: Error): Error {
  const message = redactedMessage(error.message);
  if (message === error.message && !('detail' in error)) return error;
  const copy = new Error(message, { cause: error.cause });
  copy.name = error.name;
  if (error.stack !== undefined) copy.stack = redactedStack(error.stack);
  const code = (error as { code?: unknown }).code;
  if (code !== undefined) Object.assign(copy, { code });
  return copy;
}
