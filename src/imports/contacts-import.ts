// `chorus contacts import`: contacts from a CSV file (a `userId` column, an optional `email`, every
// other column an attribute) written to the `contacts` topic as the identifies they are, so that
// the contact processor applies them as it applies the widget's: merged by clock, attribute keys
// created, segment membership kept. A line the user routes would refuse is reported by its number
// and skipped; the others go on. Running it again sends the same attributes again, which changes
// nothing: the same file twice gives the same contacts.
import { ChorusError } from '../errors.ts';
import { contactIdFor } from '../ids.ts';
import { parseIdentifyBody } from '../contacts/identify-input.ts';
import type { ContactIdentified } from '../events/contacts.ts';
import { commandEnvelope } from '../events/envelope.ts';
import { isStorableText } from '../store/storable.ts';
import type { CsvRecord } from './csv-records.ts';

export interface ImportOptions {
  environmentId: string;
  /** Resolves once Kafka acknowledged the command. */
  publish: (command: ContactIdentified) => Promise<void>;
  /** Told of each acknowledged batch, with the count so far. */
  onProgress?: (imported: number) => void;
  /** Commands written at once: the publisher batches them by partition. */
  inFlight?: number;
}

export interface ImportReport {
  imported: number;
  refused: { line: number; problem: string }[];
}

/** Thrown for a file that cannot be imported at all (its header). */
export class ImportRefused extends Error {}

/** Kafka stopped taking the commands: what was acknowledged before is in the report. */
export class ImportStopped extends Error {
  constructor(
    readonly report: ImportReport,
    cause: unknown,
  ) {
    // The cause's own cause says why (a topic missing: Chorus never ran against this cluster).
    const why = [cause, cause instanceof Error ? cause.cause : undefined]
      .filter((e): e is Error => e instanceof Error)
      .map((e) => e.message)
      .join(': ');
    super(`the event log stopped taking contacts: ${why || String(cause)}`, {
      cause,
    });
  }
}

export async function importContacts(
  records: AsyncIterable<CsvRecord>,
  options: ImportOptions,
): Promise<ImportReport> {
  const report: ImportReport = { imported: 0, refused: [] };
  const inFlight = options.inFlight ?? 2_000;
  let header: string[] | undefined;
  /**
   * Each sent command's line, and once Kafka answered what refused it (`problem`: that line alone;
   * `failure`: the log itself). Never rejected: a batch waits unwatched until it is settled.
   */
  type Sent = Promise<{ line: number; problem?: string; failure?: unknown }>;
  let batch: Sent[] = [];
  const settle = async (sent: Sent[]) => {
    let failure: unknown;
    for (const outcome of await Promise.all(sent)) {
      if (outcome.failure !== undefined) failure ??= outcome.failure;
      else if (outcome.problem) report.refused.push({ line: outcome.line, problem: outcome.problem });
      else report.imported++;
    }
    options.onProgress?.(report.imported);
    if (failure !== undefined) throw new ImportStopped(report, failure);
  };
  // Two batches in flight at most: the next is written while Kafka acknowledges the one before.
  let previous: Promise<void> | undefined;
  const flush = async () => {
    const sent = batch;
    batch = [];
    await previous;
    previous = settle(sent);
    previous.catch(() => undefined); // awaited at the next flush; not an unhandled rejection meanwhile
  };

  for await (const record of records) {
    if ('problem' in record) {
      report.refused.push(record);
      continue;
    }
    if (!header) {
      header = checkedHeader(record);
      continue;
    }
    const command = commandOf(record, header, options.environmentId);
    if (typeof command === 'string') {
      report.refused.push({ line: record.line, problem: command });
      continue;
    }
    const line = record.line;
    batch.push(
      options.publish(command).then(
        () => ({ line }),
        (error: unknown) => {
          // Too large for the log: that line alone. Kafka unavailable: the import stops (run it again).
          if (error instanceof ChorusError && error.kind === 'payload_too_large')
            return { line, problem: 'too large for the event log' };
          return { line, failure: error };
        },
      ),
    );
    if (batch.length >= inFlight) await flush();
  }
  if (!header) throw new ImportRefused('the file is empty: a header line with a userId column is needed');
  await flush();
  await previous;
  return report;
}

function checkedHeader({ fields }: { fields: string[] }): string[] {
  const names = fields.map((f) => f.trim());
  if (!names.includes('userId')) throw new ImportRefused('the header line has no userId column');
  const repeated = names.filter((name, i) => names.indexOf(name) !== i);
  if (repeated.length > 0)
    throw new ImportRefused(`columns named twice: ${[...new Set(repeated)].join(', ')}`);
  return names;
}

/** The identify of one line, or what is wrong with it. */
function commandOf(
  { fields }: { fields: string[] },
  header: readonly string[],
  environmentId: string,
): ContactIdentified | string {
  if (fields.length !== header.length) return `${fields.length} fields where the header has ${header.length}`;
  if (!fields.every(isStorableText)) return 'a field holds a NUL or an unpaired surrogate';
  let userId = '';
  const attributes: Record<string, string> = {};
  header.forEach((name, i) => {
    const value = fields[i]!;
    if (name === 'userId') userId = value.trim();
    // An empty cell sends nothing: it never clears what is stored.
    else if (value !== '') attributes[name] = value;
  });
  try {
    const input = parseIdentifyBody({ userId, attributes });
    return {
      type: 'contact.identified',
      ...commandEnvelope(environmentId),
      contactId: contactIdFor(environmentId, input.userId),
      userId: input.userId,
      attributes: input.attributes,
      ...(Object.keys(input.attributeTypes).length > 0 && { attributeTypes: input.attributeTypes }),
    };
  } catch (error) {
    if (!(error instanceof ChorusError)) throw error;
    return Object.entries(error.details)
      .map(([field, problem]) => `${field} ${String(problem)}`)
      .join('; ');
  }
}
