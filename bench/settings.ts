// The bench scripts read their settings from BENCH_* environment variables, each with a default,
// and check them all before anything starts: a mistyped value fails at once, not after the set-up.
import Type, { type Static, type TObject } from 'typebox';
import Value from 'typebox/value';

/** BENCH_LOG_LEVEL: the level of Chorus' logs on stderr; warn keeps them from burying the table. */
export const LogLevel = Type.Union(
  ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'].map((l) => Type.Literal(l)),
  { default: 'warn' },
);

/** Reads the variables that `schema` names; an empty variable counts as unset. */
export function loadSettings<T extends TObject>(schema: T, env: NodeJS.ProcessEnv = process.env): Static<T> {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(schema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const parsed = Value.Convert(schema, Value.Default(schema, raw));
  const problems = [...Value.Errors(schema, parsed)].map((e) => `${e.instancePath.slice(1)}: ${e.message}`);
  if (problems.length > 0) throw new Error(`Invalid bench settings:\n  - ${problems.join('\n  - ')}`);
  return parsed as Static<T>;
}
