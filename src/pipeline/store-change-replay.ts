// The journal of the store's direct changes (events/store-changes.ts) is read by its own consumer
// group, which applies each change whatever the store holds already, in the journal's order: a
// saved row or a deletion later than the row's version (the stamp of the latest change the store
// holds of it), a contact's deletion through deleteContact, as the management API deletes one. In
// normal operation the store holds every change already, and each is a no-op. After a restore from
// a backup, the changes made after the backup come back: those the consumer reads again (it seeks
// back to the backup's position), and those it had not read yet when the database was lost. What
// chorus_replay_row applies is not journaled again (a contact deleted again is, and its echo finds
// it gone). A record that cannot be read (no time, an unknown table) is skipped and said, never
// retried for ever.
import type { BatchHandler, ConsumedMessage } from '../kafka/consumer.ts';
import type { Logger } from '../logger.ts';
import { JOURNALED_TABLES, type StoreChange } from '../events/store-changes.ts';
import { deleteContact } from '../store/contacts.ts';
import type { Orm } from '../store/orm.ts';

export function storeChangeReplayer(deps: { orm: Orm; logger: Logger }): BatchHandler {
  const log = deps.logger.child({ component: 'store-changes' });
  return async (messages) => {
    for (const message of messages) {
      const change = parseChange(message);
      if (!change) {
        log.warn(
          { partition: message.partition, offset: message.offset },
          'a store change that cannot be read; skipped',
        );
        continue;
      }
      const outcome = await apply(deps.orm, change);
      if (outcome.startsWith('skipped'))
        log.warn({ table: change.table, id: change.id, outcome }, 'a journaled store change was skipped');
      else if (message.replayed || outcome !== 'unchanged')
        log.debug({ table: change.table, id: change.id, outcome }, 'a journaled store change applied');
    }
  };
}

async function apply(orm: Orm, change: StoreChange): Promise<string> {
  if (change.table === 'contacts') {
    // Gone already, or identified again after its deletion (the contacts topic is applied too),
    // it keeps only its tombstone: what was sent for it before stays out.
    const outcome = await deleteContact(
      orm.em,
      { id: change.id, environmentId: change.environmentId },
      new Date(change.occurredAt),
      { keepIfIdentifiedSince: true },
    );
    return outcome === 'gone' ? 'unchanged' : outcome;
  }
  const row = change.type === 'row.saved' ? JSON.stringify(change.row) : null;
  return orm.em.fork().transactional(async (tx) => {
    await tx.execute(`select set_config('chorus.replaying', 'on', true)`);
    const [applied] = await tx.execute<{ outcome: string }[]>(
      'select chorus_replay_row(?, ?, ?::jsonb, ?::timestamptz) as outcome',
      [change.table, change.id, row, change.occurredAt],
    );
    return applied?.outcome ?? 'skipped: no answer';
  });
}

function parseChange(message: ConsumedMessage): StoreChange | undefined {
  try {
    const change = JSON.parse(message.value?.toString('utf8') ?? '') as StoreChange;
    const known = (JOURNALED_TABLES as readonly string[]).includes(change.table);
    const saved = change.type === 'row.saved' && typeof change.row === 'object' && change.row !== null;
    const dated = typeof change.occurredAt === 'string' && !Number.isNaN(Date.parse(change.occurredAt));
    const identified = typeof change.id === 'string' && typeof change.environmentId === 'string';
    return known && dated && identified && (saved || change.type === 'row.deleted') ? change : undefined;
  } catch {
    return undefined;
  }
}
