// The export's file formats, each a stream of text chunks from the table's header and rows:
// CSV for spreadsheets (UTF-8 with a BOM, so that Excel reads it as UTF-8; cells that a spreadsheet
// would run as a formula defused as Formbricks defuses them), Excel's own (the sheet's XML, which
// xlsx-package.ts packs as it streams; defused alike), and JSON Lines for programs (one object per
// response, keyed by the same headers, values as they are).

export const EXPORT_FORMATS = ['csv', 'xlsx', 'jsonl'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const CONTENT_TYPES: Readonly<Record<ExportFormat, string>> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  jsonl: 'application/jsonl; charset=utf-8',
};

export interface RowWriter {
  /** What the file begins with. */
  head(headers: readonly string[]): string;
  row(cells: readonly (string | number)[]): string;
  /** What it ends with. */
  tail(): string;
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
      tail: () => '',
    };
  }
  if (format === 'xlsx') {
    return {
      head: () =>
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>' +
        sheetRow(headers),
      row: sheetRow,
      tail: () => '</sheetData></worksheet>',
    };
  }
  return {
    head: () => `\uFEFF${headers.map((h) => csvCell(h)).join(',')}\n`,
    row: (cells) => `${cells.map(csvCell).join(',')}\n`,
    tail: () => '',
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

/** The most characters a cell of Excel holds: longer texts are cut there (the CSV keeps them whole). */
const EXCEL_CELL_CHARACTERS = 32_767;
/** What XML 1.0 cannot carry at all: control characters but tab, line feed and carriage return. */
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;
const NEEDS_ESCAPE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF&<>]/;
const EDGE_SPACE = /^\s|\s$/;
const XML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/** One row of the sheet: numbers as numbers, texts inline (no shared-string table to hold in memory). */
function sheetRow(cells: readonly (string | number)[]): string {
  let xml = '<row>';
  for (const cell of cells) {
    if (typeof cell === 'number') {
      xml += `<c><v>${cell}</v></c>`;
      continue;
    }
    if (cell === '') {
      xml += '<c/>'; // blank: cells without references take their places in order
      continue;
    }
    let text = FORMULA_TRIGGER.test(cell) ? `'${cell}` : cell;
    if (text.length > EXCEL_CELL_CHARACTERS) text = text.slice(0, EXCEL_CELL_CHARACTERS);
    // Most cells need neither: one test each instead of two replacements.
    if (NEEDS_ESCAPE.test(text)) text = text.replace(NOT_XML, '').replace(/[&<>]/g, (c) => XML_ESCAPES[c]!);
    // Spaces at either end are kept only when the text says so.
    const keep = EDGE_SPACE.test(text) ? ' xml:space="preserve"' : '';
    xml += `<c t="inlineStr"><is><t${keep}>${text}</t></is></c>`;
  }
  return `${xml}</row>`;
}
