// The one module that drives yazl: a worksheet's XML, as it is produced, packed into an .xlsx file
// (a zip of a few fixed parts and the sheet), chunk by chunk. The sheet is compressed as it streams
// and its sizes written after it (a data descriptor), so nothing waits for the whole sheet.
import { Readable } from 'node:stream';
import { ZipFile } from 'yazl';

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const PARTS: readonly [string, string][] = [
  [
    '[Content_Types].xml',
    `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
      '<Default Extension="xml" ContentType="application/xml"/>' +
      '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
      '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>' +
      '</Types>',
  ],
  [
    '_rels/.rels',
    `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>' +
      '</Relationships>',
  ],
  [
    'xl/workbook.xml',
    `${XML}<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ` +
      'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">' +
      '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>',
  ],
  [
    'xl/_rels/workbook.xml.rels',
    `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
      '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>' +
      '</Relationships>',
  ],
];

/** The .xlsx file of one sheet (`Sheet1`, as Formbricks names it), whose XML `sheet` yields. */
export async function* xlsxPackage(sheet: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const zip = new ZipFile();
  const mtime = new Date();
  for (const [path, text] of PARTS) zip.addBuffer(Buffer.from(text), path, { mtime });
  const source = Readable.from(sheet, { objectMode: false });
  // The fastest compression: a sheet's XML repeats itself so much that level 1 already shrinks it
  // to about a tenth, at a fraction of the default level's CPU.
  zip.addReadStream(source, 'xl/worksheets/sheet1.xml', { mtime, compressionLevel: 1 });
  zip.end();
  const output = zip.outputStream as Readable;
  // The sheet failing (the store gone mid-export) fails the file, which the reader sees cut short.
  source.once('error', (error) => output.destroy(error));
  try {
    for await (const chunk of output) yield chunk as Buffer;
  } finally {
    // A reader that stopped early: the sheet's producer is closed too (and with it its reads).
    source.destroy();
    output.destroy();
  }
}
