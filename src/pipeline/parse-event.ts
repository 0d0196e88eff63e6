// Step 1 of every processor: bytes from Kafka to a typed command, or a reason to dead-letter.
// The edge refuses what PostgreSQL cannot store, but the topics are open to other writers (tools,
// replays, analysts' mistakes): an event holding such a value is dead-lettered here, before it can
// fail a transaction or overflow a stack, instead of being retried forever in front of others.
import type { ConsumedMessage } from '../kafka/consumer.ts';
import { mayBeUnstorable, unstorableProblems } from '../store/storable.ts';

/** A compiled typebox validator (only the two methods used here). */
export interface Compiled<C> {
  Check(value: unknown): value is C;
  Errors(value: unknown): Iterable<{ instancePath: string; message: string }>;
}

export type Parsed<C> = { ok: true; command: C } | { ok: false; reason: string; detail?: unknown };

export function parseEvent<C>(schema: Compiled<C>, keyOf: (command: C) => string) {
  return (message: ConsumedMessage): Parsed<C> => {
    const text = message.value?.toString('utf8') ?? '';
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return { ok: false, reason: 'unparseable_json' };
    }
    const unstorable = mayBeUnstorable(text) ? unstorableProblems(value, 'event') : {};
    if (Object.keys(unstorable).length > 0)
      return { ok: false, reason: 'unstorable_event', detail: unstorable };
    if (!schema.Check(value)) {
      const errors = [...schema.Errors(value)].slice(0, 5).map((e) => `${e.instancePath} ${e.message}`);
      return { ok: false, reason: 'invalid_event', detail: errors };
    }
    if (keyOf(value) !== message.key) return { ok: false, reason: 'key_mismatch' };
    return { ok: true, command: value };
  };
}
