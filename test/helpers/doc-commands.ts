// Reads the shell examples of a Markdown page as a reader follows them: the commands of each ```sh
// block, what the page says each one prints (the `#` lines right under it), and the variables the
// reader sets from what was printed (`RSP=rsp_01...`: the id the last command printed). The README
// test runs them exactly as written, so the page and Chorus cannot drift apart.

/** One line of a block: a command, a variable set by hand, or one copied from what was printed. */
export type DocStep =
  | { kind: 'command'; command: string; expected: string[] }
  | { kind: 'set'; name: string; value: string }
  /** `NAME=prefix...`: the reader copies the value starting with `prefix` that was printed last. */
  | { kind: 'copy'; name: string; prefix: string };

/** The ```sh blocks of a Markdown page, in order. */
export function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/** The steps of one block. */
export function docSteps(block: string): DocStep[] {
  const steps: DocStep[] = [];
  const lines = block.split('\n');
  /** The command the `#` lines below it describe the output of, until a blank line. */
  let last: Extract<DocStep, { kind: 'command' }> | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') {
      last = undefined;
    } else if (line.startsWith('#')) {
      // Under a command: what it prints (an indented line goes on with the line above it).
      if (!last) continue;
      const text = line.replace(/^# ?/, '');
      if (/^\s/.test(text) && last.expected.length > 0)
        last.expected[last.expected.length - 1] += text.trim();
      else last.expected.push(text);
    } else if (/^[A-Z_]+=\S*$/.test(line)) {
      const [name, value] = [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)];
      const copied = /^(.*?)(\.\.\.|…)$/.exec(value);
      steps.push(copied ? { kind: 'copy', name, prefix: copied[1]! } : { kind: 'set', name, value });
      last = undefined;
    } else {
      // A command goes on over a trailing backslash, and inside an open single quote.
      let command = line;
      while ((command.endsWith('\\') || quotesOpen(command)) && i + 1 < lines.length)
        command += `\n${lines[++i]!}`;
      last = { kind: 'command', command, expected: [] };
      steps.push(last);
    }
  }
  return steps;
}

function quotesOpen(text: string): boolean {
  return (text.split("'").length - 1) % 2 === 1;
}

/**
 * Whether `output` is what the page says: `expected` line by line, `…` standing for anything.
 * With an `HTTP/1.1 …` first line (curl -i), that is the status line, and the rest is the body.
 */
export function printedAsDocumented(output: string, expected: readonly string[]): boolean {
  if (expected.length === 0) return true;
  let lines = expected;
  let text = output.replace(/\s+$/, '');
  if (lines[0]!.startsWith('HTTP/')) {
    const headEnd = text.indexOf('\r\n\r\n');
    const statusLine = text.slice(0, text.indexOf('\r\n'));
    if (!pattern(lines[0]!).test(statusLine)) return false;
    lines = lines.slice(1);
    text = headEnd < 0 ? '' : text.slice(headEnd + 4);
    if (lines.length === 0) return true;
  }
  return pattern(lines.join('\n')).test(text);
}

function pattern(expected: string): RegExp {
  return new RegExp(`^${expected.split('…').map(escaped).join('[^\\n]*?')}$`);
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The value a `copy` step takes: the first word starting with `prefix` of the last output that has one. */
export function copiedValue(outputs: readonly string[], prefix: string): string | undefined {
  const word = new RegExp(`${escaped(prefix)}[A-Za-z0-9_-]*`);
  for (const output of [...outputs].reverse()) {
    const found = word.exec(output);
    if (found) return found[0];
  }
  return undefined;
}
