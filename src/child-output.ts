// What a child process prints (Maven, the broker scripts, pg_ctlcluster, redis-server), turned into
// log lines a person can read: whole lines only (a chunk may end mid-line), without terminal escape
// codes (Maven colours its output even in batch mode, and its quiet mode prints bare colour resets),
// without carriage-return progress redraws, and without the lines that are empty once cleaned.
import { createInterface } from 'node:readline';
import { stripVTControlCharacters } from 'node:util';
import type { Readable } from 'node:stream';

/** The text of one printed line as a person sees it, or undefined when nothing readable is left. */
export function readableLine(line: string): string | undefined {
  // A progress bar redraws itself after `\r`: what is left after the last one is what shows.
  const shown =
    stripVTControlCharacters(line)
      .split('\r')
      .findLast((part) => part.trim() !== '') ?? '';
  // Other control characters (a bell, a backspace) have no place in a log message.
  const text = shown.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '').trimEnd();
  return text.trim() === '' ? undefined : text;
}

/** Calls `onLine` with each readable line the stream carries (see readableLine). */
export function forEachReadableLine(stream: Readable, onLine: (line: string) => void): void {
  createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line: string) => {
    const text = readableLine(line);
    if (text !== undefined) onLine(text);
  });
}
