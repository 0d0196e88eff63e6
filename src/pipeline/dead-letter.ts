// The dead-letter topic: events that cannot or must not be applied, kept with the reason so that an
// operator (or the replay tool) can see and re-drive them. Keyed by the original key.
import type { ConsumedMessage } from '../kafka/consumer.ts';
import type { Output } from '../kafka/outputs.ts';
import type { DeadLetterRecord } from '../events/dead-letters.ts';

/** A dead letter carries its original value up to this size (the record must fit in the topic). */
const MAX_CARRIED_VALUE_BYTES = 1024 * 1024;

export interface DeadLetter {
  message: ConsumedMessage;
  reason: string;
  detail?: unknown;
}

export async function deadLetter(
  output: Output<DeadLetterRecord>,
  letters: readonly DeadLetter[],
): Promise<void> {
  await Promise.all(
    letters.map(({ message, reason, detail }) => {
      const valueBytes = message.value?.length ?? 0;
      const carried = valueBytes <= MAX_CARRIED_VALUE_BYTES;
      return output.publish(
        {
          type: 'dead-letter',
          version: 1,
          reason,
          detail,
          occurredAt: new Date().toISOString(),
          source: { topic: message.topic, partition: message.partition, offset: message.offset },
          key: message.key,
          value: carried ? (message.value?.toString('utf8') ?? null) : null,
          ...(carried ? {} : { valueBytes }),
        },
        // A child of the message's own processing span, with the message's headers.
        { headers: message.headers, trace: message.trace },
      );
    }),
  );
}
