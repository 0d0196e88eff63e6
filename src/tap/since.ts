// `chorus tap --since TIME`: an ISO time, or a duration back from now (`90s`, `10m`, `2h`, `7d`).

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** The time `text` names, or undefined when it is neither an ISO time nor a duration. */
export function parseSince(text: string, now: Date): Date | undefined {
  const relative = /^(\d+)([smhdw])$/.exec(text.trim());
  if (relative) {
    const unit = relative[2] as keyof typeof UNIT_MS;
    return new Date(now.getTime() - Number(relative[1]) * UNIT_MS[unit]);
  }
  // Only ISO dates (with or without a time): Date.parse also takes "1" or "May 3", which are
  // more likely mistakes than times.
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(text.trim()))
    return undefined;
  const time = new Date(text.trim());
  return Number.isNaN(time.getTime()) ? undefined : time;
}
