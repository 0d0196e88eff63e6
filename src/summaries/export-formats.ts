// The export's file formats, each a stream of text chunks from the table's header and rows:
// CSV for spreadsheets (UTF-8 with a BOM, so that Excel reads it as UTF-8; cells that a spreadsheet
// would run as a formula defused as Formbricks defuses them), and JSON Lines for programs (one
// object per response, keyed by the same headers, values as they are).

export const EXPORT_FORMATS = ['csv', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CONTENT_TYPES: Readonly<Record<ExportFormat, string>> = {
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/jsonl; charset=utf-8',
};

export interface RowWriter {
  /** What the file begins with. */
  head(headers: readonly string[]): string;
  row(cells: readonly (string | number)[]): string;
}

export function rowWriter(format: ExportFormat, headers: readonly string[]): RowWriter {
  if (format === 'jsonl') {
    return {
      head: () => '',
      row: (cells) => {
        const object: Record<string, string | number> = {};
        headers.forEach((header, i) => (object[header] = cells[i]!));
        return `${JSON.stringify(object)}\n`;
      },
    };
  }
  return {
    head: () => `\uFEFF${headers.map((h) => csvCell(h)).join(',')}\n`,
    row: (cells) => `${cells.map(csvCell).join(',')}\n`,
  };
}

/**
 * A cell a spreadsheet would read as a formula (it begins with `=`, `+`, `-`, `@`, a tab or a
 * carriage return) is written after an apostrophe, as Formbricks writes it.
 */
const FORMULA_TRIGGER = /^[=+\-@\t\r]/;

/** Text quoted (quotes doubled), as Formbricks' CSV writer quotes every string; numbers as they are. */
function csvCell(value: string | number): string {
  if (typeof value === 'number') return String(value);
  const text = FORMULA_TRIGGER.test(value) ? `'${value}` : value;
  return `"${text.replaceAll('"', '""')}"`;
}
