// A survey's summary for a terminal (`chorus summary`): the numbers at the top, the drop-off
// table, then a table per element.
import type { summarize } from './summary.ts';

type Summary = ReturnType<typeof summarize>;
type Item = Record<string, unknown>;
type Share = { count: number; percentage: number };

/** Text answers shown per element (the API gives up to 50). */
const SAMPLES_SHOWN = 10;

export function summaryText(
  survey: { id: string; name: string },
  { meta, dropOff, summary, quotas }: Summary,
) {
  const lines = [
    `${survey.name} (${survey.id})`,
    '',
    table(
      ['impressions', 'starts', 'completed', 'drop-offs', 'time to complete'],
      [
        [
          meta.displayCount,
          `${meta.totalResponses} (${pct(meta.startsPercentage)})`,
          `${meta.completedResponses} (${pct(meta.completedPercentage)})`,
          `${meta.dropOffCount} (${pct(meta.dropOffPercentage)})`,
          seconds(meta.ttcAverage),
        ],
      ],
    ),
  ];
  if (quotas.length > 0)
    lines.push(
      '',
      'Quotas',
      table(
        ['quota', 'counted', 'limit', '%'],
        quotas.map((q) => [q.name || q.id, q.count, q.limit, pct(q.percentage)]),
      ),
    );
  lines.push(
    '',
    'Drop-offs',
    table(
      ['element', 'type', 'time', 'impressions', 'drop-offs', '%'],
      dropOff.map((r) => [
        r.headline || r.elementId,
        r.elementType,
        seconds(r.ttc),
        r.impressions,
        r.dropOffCount,
        pct(r.dropOffPercentage),
      ]),
    ),
  );
  for (const item of summary as Item[]) lines.push('', heading(item), ...itemLines(item));
  return `${lines.join('\n')}\n`;
}

function heading(item: Item): string {
  const element = item['element'] as { id: string; headline?: unknown } | undefined;
  const id = element?.id ?? (item['id'] as string);
  const headline = textOf(element?.headline);
  const count = item['responseCount'] as number;
  return `${headline ? `${headline} (${id}` : `${id} (`}${headline ? ', ' : ''}${item['type'] as string}): ${count} ${count === 1 ? 'response' : 'responses'}`;
}

function itemLines(item: Item): string[] {
  const share = (name: string) => item[name] as Share;
  const shares = (names: string[]) =>
    table(
      ['', 'count', '%'],
      names.map((name) => [name, share(name).count, pct(share(name).percentage)]),
    );
  switch (item['type']) {
    case 'multipleChoiceSingle':
    case 'multipleChoiceMulti':
    case 'pictureSelection': {
      const choices = item['choices'] as (Share & {
        value?: string;
        id?: string;
        others?: { value: string }[];
      })[];
      const lines = [
        table(
          ['choice', 'count', '%'],
          choices.map((c) => [c.value ?? c.id ?? '', c.count, pct(c.percentage)]),
        ),
      ];
      for (const c of choices)
        if (c.others?.length)
          lines.push(
            `  ${c.value}: ${c.others
              .slice(0, SAMPLES_SHOWN)
              .map((o) => JSON.stringify(o.value))
              .join(', ')}`,
          );
      return lines;
    }
    case 'rating':
    case 'csat':
    case 'ces': {
      const choices = item['choices'] as (Share & { rating: number })[];
      const dismissed = (item['dismissed'] as { count: number }).count;
      return [
        `  average ${String(item['average'])}, dismissed ${dismissed}`,
        table(
          ['rating', 'count', '%'],
          choices.map((c) => [c.rating, c.count, pct(c.percentage)]),
        ),
      ];
    }
    case 'nps':
      return [
        `  score ${String(item['score'])}`,
        shares(['promoters', 'passives', 'detractors', 'dismissed']),
      ];
    case 'consent':
      return [shares(['accepted', 'dismissed'])];
    case 'cal':
      return [shares(['booked', 'skipped'])];
    case 'cta':
      return [
        table(
          ['impressions', 'clicks', 'skips', 'click-through'],
          [
            [
              item['impressionCount'] as number,
              item['clickCount'] as number,
              item['skipCount'] as number,
              pct((item['ctr'] as Share).percentage),
            ],
          ],
        ),
      ];
    case 'matrix': {
      const rows = item['data'] as {
        rowLabel: string;
        columnPercentages: { column: string; percentage: number }[];
        totalResponsesForRow: number;
      }[];
      const columns = rows[0]?.columnPercentages.map((c) => c.column) ?? [];
      return [
        table(
          ['row', ...columns, 'answers'],
          rows.map((r) => [
            r.rowLabel,
            ...r.columnPercentages.map((c) => pct(c.percentage)),
            r.totalResponsesForRow,
          ]),
        ),
      ];
    }
    case 'ranking': {
      const choices = item['choices'] as { value: string; count: number; avgRanking: number }[];
      return [
        table(
          ['choice', 'ranked', 'average position'],
          choices.map((c) => [c.value, c.count, c.avgRanking]),
        ),
      ];
    }
    default: {
      const samples = (item['samples'] ?? item['files'] ?? []) as { value: unknown }[];
      return samples.slice(0, SAMPLES_SHOWN).map((s) => `  ${JSON.stringify(s.value)}`);
    }
  }
}

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  const text = (value as Record<string, unknown> | undefined)?.['default'];
  return typeof text === 'string' ? text.replace(/<[^>]*>/g, '').trim() : '';
}

const pct = (percentage: number) => `${Math.round(percentage)}%`;
const seconds = (ms: number) => (ms === 0 ? '-' : `${(ms / 1000).toFixed(2)} s`);

/** Columns padded to their widest cell; numbers right-aligned, text left-aligned; indented by two. */
function table(headers: string[], rows: (string | number)[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells: (string | number)[], numeric: boolean[]) =>
    `  ${cells.map((c, i) => (numeric[i] ? String(c).padStart(widths[i]!) : String(c).padEnd(widths[i]!))).join('  ')}`.trimEnd();
  const numeric = headers.map(
    (_, i) =>
      rows.length > 0 &&
      rows.every((r) => typeof r[i] === 'number' || /^-?[\d.]+( s|%)?$/.test(String(r[i]))),
  );
  return [line(headers, numeric), ...rows.map((r) => line(r, numeric))].join('\n');
}
