// CSV (RFC 4180, as spreadsheets write it) read as it streams: records of fields, each with the
// line it starts on, so that a problem can be named by line. Quoted fields may hold commas, quotes
// (doubled) and line breaks; lines end with LF or CRLF; a byte order mark at the start is dropped.
// A quote that is never closed makes the rest of the file one bad record, reported, not thrown.

export type CsvRecord = { line: number; fields: string[] } | { line: number; problem: string };

export async function* csvRecords(
  input: AsyncIterable<Buffer | string> | Iterable<Buffer | string>,
): AsyncGenerator<CsvRecord> {
  const decoder = new TextDecoder('utf-8', { fatal: false });
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  /** A quote just closed inside a quoted field: the next character says whether it was doubled. */
  let closing = false;
  let line = 1;
  let startLine = 1;
  let first = true;
  let pendingCr = false;
  const records: CsvRecord[] = [];
  const end = () => {
    fields.push(field);
    // A blank line is no record.
    if (!(fields.length === 1 && fields[0] === '')) records.push({ line: startLine, fields });
    fields = [];
    field = '';
  };

  for await (const chunk of input) {
    let text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    if (first) {
      if (text.startsWith('\uFEFF')) text = text.slice(1);
      first = false;
    }
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (pendingCr) {
        pendingCr = false;
        if (c === '\n') continue; // CRLF: the CR ended the record already
      }
      if (closing) {
        closing = false;
        if (c === '"') {
          field += '"';
          continue;
        }
        quoted = false;
      }
      if (quoted) {
        if (c === '"') closing = true;
        else {
          if (c === '\n') line++;
          field += c;
        }
        continue;
      }
      if (c === '"' && field === '') quoted = true;
      else if (c === ',') {
        fields.push(field);
        field = '';
      } else if (c === '\n' || c === '\r') {
        end();
        line++;
        startLine = line;
        pendingCr = c === '\r';
      } else field += c;
    }
    yield* records.splice(0);
  }
  field += decoder.decode(); // a character cut off at the very end (U+FFFD)
  if (quoted && !closing) {
    yield { line: startLine, problem: 'a quoted field is never closed' };
    return;
  }
  if (field !== '' || fields.length > 0) end();
  yield* records.splice(0);
}
