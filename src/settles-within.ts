// Stopping waits for client libraries that can wait forever: with a deadline, never unbounded.

/** True when `work` settled within `ms` (a rejection is thrown); false when it was still pending. */
export async function settlesWithin(work: Promise<unknown> | undefined, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)));
  try {
    return await Promise.race([Promise.resolve(work).then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
