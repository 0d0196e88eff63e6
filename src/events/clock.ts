// The order of one key's commands, whichever edge accepted them and whichever partition carries them.
//
// A client sends a response's (or a contact's) next command only after the edge answered the one
// before, and the edge answers only after Kafka stored it. So the moment an edge accepts a command
// is later than the moment any edge accepted the command before it, by at least one client round
// trip and one Kafka write: the edges' clocks order one key's commands as long as they agree to
// within that (NTP keeps machines within a millisecond or so of each other). The processors merge by
// this clock (responses/merge.ts, contacts/merge.ts), so commands applied in another order, as
// happens for a moment when partitions are added, end in the state their order of acceptance gives.
// See docs/scaling.md, "Per-key order when partitions change".

let last = 0;

/**
 * Microseconds since the epoch when the edge accepted a command: the wall clock in milliseconds
 * with a counter below it, so it strictly increases within one edge process.
 */
export function acceptClock(now: number = Date.now()): number {
  last = Math.max(now * 1000, last + 1);
  return last;
}

/** A command's clock; a command written before edges stamped one is placed at its `occurredAt`. */
export function clockOf(command: { clock?: number; occurredAt: string }): number {
  return command.clock ?? Date.parse(command.occurredAt) * 1000;
}
