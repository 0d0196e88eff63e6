// Request body parsing and validation against compiled typebox schemas, with field-level details
// in the shape of the compat notes: `{"<field.path>": "<what is wrong>"}`.
import Type, { type Static, type TProperties, type TSchema } from 'typebox';
import type { Validator } from 'typebox/compile';
import { ChorusError, invalidInput } from '../errors.ts';
import { isId } from '../ids.ts';
import { requireStorableJson } from './safe-json.ts';
import { mayBeUnstorable } from '../store/storable.ts';

/**
 * The one place a request body becomes a value: JSON, then refused (400) when it holds what
 * PostgreSQL would refuse or nests too deeply (see safe-json.ts), before any schema walks it.
 */
export function parseJsonBody(body: Buffer): unknown {
  const text = body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ChorusError('invalid_json', 'Invalid JSON in request body');
  }
  if (mayBeUnstorable(text)) requireStorableJson(value);
  return value;
}

export function validateBody<T extends TSchema>(
  validator: Validator<TProperties, T>,
  value: unknown,
): Static<T> {
  if (validator.Check(value)) return value;
  const details: Record<string, string> = {};
  const all = [...validator.Errors(value)];
  // A `nullable` field that fails is reported by what is wrong with its value, not by "must be
  // null" or "must match a schema in anyOf" (which would also name it beside its wrong entries).
  const telling = all.filter(
    (e) =>
      e.keyword !== 'anyOf' && !(e.keyword === 'type' && (e.params as { type?: unknown }).type === 'null'),
  );
  for (const error of telling.length > 0 ? telling : all) {
    const base = error.instancePath.replace(/^\//, '').replaceAll('/', '.');
    const params = error.params as { requiredProperties?: string[]; allowedValues?: unknown[] };
    if (error.keyword === 'required' && params.requiredProperties) {
      for (const name of params.requiredProperties) details[base ? `${base}.${name}` : name] ??= 'Required';
    } else if (error.keyword === 'enum' && params.allowedValues) {
      details[base || 'body'] ??= `must be one of ${params.allowedValues.join(', ')}`;
    } else {
      details[base || 'body'] ??= error.message;
    }
  }
  throw invalidInput(details);
}

/** Path ids must look like ids; the detail names the parameter. */
export function requireId(name: string, value: string | undefined): string {
  if (value === undefined || !isId(value)) throw invalidInput({ [name]: 'Invalid id' });
  return value;
}

/**
 * An optional field that may also be `null`, meaning absent: clients built on zod's `nullish()`
 * (the Formbricks widget) send `null` for what they do not have.
 */
export const nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
