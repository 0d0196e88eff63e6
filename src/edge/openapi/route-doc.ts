// What a route says of itself in the API document (document.ts), written next to its handler so the
// two change together. Schemas are typebox's — for a body, the very schema the handler validates
// with (`Validator.Type()`) — and typebox writes JSON Schema 2020-12, the dialect of OpenAPI 3.1.
import Type, { type TSchema } from 'typebox';

export interface RouteDoc {
  summary: string;
  description?: string;
  /** `apiKey`: the management API's key (`x-api-key`, or `Authorization: Bearer`). Absent: none. */
  auth?: 'apiKey';
  /** Path parameters that are not ids; the others are ids (`ID_PATTERN`), as `requireId` checks. */
  params?: Record<string, TSchema>;
  query?: Record<string, Parameter>;
  /** Request headers the route reads. */
  headers?: Record<string, Parameter>;
  /** A JSON body. */
  body?: TSchema;
  /** The answers that are not errors, by status. */
  replies: Record<number, Reply>;
  /**
   * The error statuses this route answers on its own; document.ts adds those that come from around
   * it (401/403 with a key, 413 with a body, 429 where rate limits apply, 500 everywhere).
   */
  errors: readonly number[];
}

export interface Parameter {
  schema: TSchema;
  description: string;
  required?: boolean;
}

export interface Reply {
  description: string;
  /** A JSON body; absent: no body. */
  schema?: TSchema;
  headers?: Record<string, Parameter>;
}

/** The success envelope: `{"data": …}`. */
export function data(schema: TSchema, description: string, headers?: Record<string, Parameter>): Reply {
  return { description, schema: Type.Object({ data: schema }), ...(headers ? { headers } : {}) };
}
