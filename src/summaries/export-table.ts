// A survey's responses as the table Formbricks exports (apps/web/lib/response/utils.ts): the same
// columns in the same order, the same cell texts. Formbricks reads every response first and takes
// the metadata and contact-attribute columns from what the responses hold; an export that streams
// must name its columns before the first row, so they come from what Chorus stores (the metadata
// it writes) and from the environment's attribute keys. Pure: the store reads, the formats write.
import type { Element } from '../surveys/definition.ts';
import { headlineOf, labelIn, surveyShape } from './survey-shape.ts';

/** What a row is made of: a stored response's fields. */
export interface ExportedResponse {
  id: string;
  /** As the file shows it: `2024-03-01 10:00:00 UTC`. */
  createdAt: string;
  finished: boolean;
  surveyId: string;
  contactId: string | null;
  /** The user id of its contact (still stored). */
  userId: string | null;
  data: Record<string, unknown>;
  variables: Record<string, unknown>;
  meta: Record<string, unknown>;
  language: string | null;
  contactAttributes: Record<string, string> | null;
}

type Cell = string | number;

interface ExportTable {
  headers: string[];
  /** The cells of the `n`th response exported (1 for the first), one per header. */
  row(response: ExportedResponse, n: number): Cell[];
}

/** The metadata Chorus writes (edge/request-meta.ts), in its order; nested objects as `key - subKey`. */
const META: readonly (readonly [string, string?])[] = [
  ['source'],
  ['url'],
  ['action'],
  ['userAgent', 'browser'],
  ['userAgent', 'os'],
  ['userAgent', 'device'],
  ['country'],
  ['ipAddress'],
];

export function exportTable(
  survey: { blocks: readonly unknown[]; widget?: Readonly<Record<string, unknown>> | null },
  attributeKeys: readonly string[],
): ExportTable {
  const shape = surveyShape(survey);
  const elements = shape.elements.map((e) => e.element);
  const widget = survey.widget ?? {};
  const variables = (
    (widget['variables'] as { id?: unknown; name?: unknown }[] | null | undefined) ?? []
  ).filter((v): v is { id: string; name: string } => typeof v.id === 'string' && typeof v.name === 'string');
  const verifyEmail = widget['isVerifyEmailEnabled'] === true;

  const headers = [
    'No.',
    'Response ID',
    'Timestamp',
    'Finished',
    'Survey ID',
    'Formbricks ID (internal)',
    'User ID',
    'Tags',
    ...META.map(([key, sub]) => (sub ? `${key} - ${sub}` : key)),
    ...elements.flatMap((element, i) =>
      elementHeaders(element, `${i + 1}. ${headlineOf(element) || element.id}`),
    ),
    ...variables.map((v) => v.name),
    ...shape.hiddenFieldIds,
    ...attributeKeys.map((key) => `person.${key}`),
    ...(verifyEmail ? ['Verified Email'] : []),
  ];

  return {
    headers,
    row(response, n) {
      const meta = response.meta ?? {};
      const attributes = response.contactAttributes ?? {};
      return [
        n,
        response.id,
        response.createdAt,
        response.finished ? 'Yes' : 'No',
        response.surveyId,
        response.contactId ?? '',
        response.userId ?? '',
        '',
        ...META.map(([key, sub]) => {
          const value = sub ? (meta[key] as Record<string, unknown> | undefined)?.[sub] : meta[key];
          return typeof value === 'string' || typeof value === 'number' ? value : '';
        }),
        ...elements.flatMap((element) => elementCells(element, response.data[element.id], response.language)),
        ...variables.map((v) => {
          const value = response.variables?.[v.id];
          return typeof value === 'number' || typeof value === 'string' ? value : '';
        }),
        ...shape.hiddenFieldIds.map((id) => {
          const value = response.data[id];
          return Array.isArray(value) ? value.join('; ') : answerCell(value);
        }),
        ...attributeKeys.map((key) => attributes[key] ?? ''),
        ...(verifyEmail ? [answerCell(response.data['verifiedEmail'])] : []),
      ];
    },
  };
}

/** Choice elements get a second column with the ids of the options chosen; a matrix one per row. */
function elementHeaders(element: Element, headline: string): string[] {
  if (element.type === 'matrix')
    return (element.rows ?? []).map((row) => `${headline} - ${labelIn(row.label, 'default') ?? row.id}`);
  if (hasOptionIds(element)) return [headline, `${headline} - Option ID`];
  return [headline];
}

function elementCells(element: Element, answer: unknown, language: string | null): Cell[] {
  if (element.type === 'matrix') {
    // A matrix answer names its rows by their label (Formbricks' widget), or by their id.
    const answers = typeof answer === 'object' && answer !== null ? (answer as Record<string, unknown>) : {};
    return (element.rows ?? []).map((row) => {
      const label = labelIn(row.label, 'default');
      const value = (label !== undefined ? answers[label] : undefined) ?? answers[row.id];
      return value === undefined ? '' : answerCell(value);
    });
  }
  if (hasOptionIds(element)) return [answerCell(answer), optionIds(element, answer, language ?? 'default')];
  return [answerCell(answer)];
}

const hasOptionIds = (element: Element) =>
  element.type === 'multipleChoiceMulti' ||
  element.type === 'multipleChoiceSingle' ||
  element.type === 'ranking';

/** The ids of the options an answer names by label (in its language first, then any); `other` for text typed. */
function optionIds(element: Element, answer: unknown, language: string): string {
  const choices = element.choices ?? [];
  const idOf = (label: string) => {
    const exact = choices.find((c) => labelIn(c.label, language) === label);
    const any =
      exact ??
      choices.find((c) =>
        typeof c.label === 'object' && c.label !== null
          ? Object.values(c.label).includes(label)
          : c.label === label,
      );
    // Chorus also takes a choice's id as its answer.
    return (any ?? choices.find((c) => c.id === label))?.id ?? 'other';
  };
  if (Array.isArray(answer))
    return answer
      .filter((v): v is string => typeof v === 'string' && v !== '')
      .map(idOf)
      .join(', ');
  return typeof answer === 'string' && answer !== '' ? idOf(answer) : '';
}

/** An answer as text (Formbricks' processResponseData): lists joined by `; `, objects as `key: value` lines. */
function answerCell(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value))
    return value.filter((item) => item !== null && item !== undefined && item !== '').join('; ');
  if (typeof value === 'object' && value !== null)
    return Object.entries(value)
      .filter(([, v]) => v !== '')
      .map(([k, v]) => `${k}: ${String(v)}`)
      .join('\n');
  return '';
}
