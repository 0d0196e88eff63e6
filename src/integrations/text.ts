// Turning survey content and answers into text for the integrations (Slack messages, Notion
// properties). Pure functions: the vendor wrappers and the deliverer decide where the text goes.
import type { Element } from '../surveys/definition.ts';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The text of a headline, label or single answer: an i18n object (`{default: '…', de: '…'}`) gives
 * its `default` (or else its first string), strings stay as they are, numbers and booleans are
 * written out, null and undefined are ''.
 */
export function plainText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (Array.isArray(value))
    return value
      .map(plainText)
      .filter((text) => text !== '')
      .join(', ');
  if (isRecord(value)) {
    if (typeof value.default === 'string') return value.default;
    const first = Object.values(value).find((v) => typeof v === 'string');
    return typeof first === 'string' ? first : '';
  }
  return '';
}

/**
 * An answer as text: arrays joined with '; ' (empty items left out, as contact-info and address
 * answers carry empty strings for fields not asked), objects as `key: value` lines, scalars as
 * plainText.
 */
export function answerText(value: unknown): string {
  if (Array.isArray(value)) {
    return value
      .map(answerText)
      .filter((text) => text !== '')
      .join('; ');
  }
  if (isRecord(value)) {
    return Object.entries(value)
      .map(([key, v]) => `${key}: ${answerText(v)}`)
      .join('\n');
  }
  return plainText(value);
}

/** `text` when it fits in `max` characters, else its first `max` characters followed by '...'. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max);
  // Never split a surrogate pair: a lone half is not valid UTF-16 and vendors reject or garble it.
  const last = text.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}...`;
}

/** True for an answer that says nothing: missing, null, blank text, an empty list or object. */
export function isUnanswered(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value === 'string') return value.trim() === '';
  if (Array.isArray(value)) return value.every(isUnanswered);
  if (isRecord(value)) return Object.values(value).every(isUnanswered);
  return false;
}

/** Choice (or row, column) id → its label, for the items that have a non-empty label. */
function labelsOf(items: unknown): Map<string, string> {
  const labels = new Map<string, string>();
  if (!Array.isArray(items)) return labels;
  for (const item of items) {
    if (!isRecord(item) || typeof item.id !== 'string') continue;
    const label = plainText(item.label);
    if (label !== '') labels.set(item.id, label);
  }
  return labels;
}

/**
 * The answer with the ids the respondent picked replaced by the labels they saw: choice ids of
 * choice questions (single, multi, ranking), and row and column ids of a matrix. Values that are
 * not a known id (an "other" text, a picture choice without label) stay as they are.
 */
export function withLabels(question: Element | undefined, value: unknown): unknown {
  if (!question) return value;
  if (question.type === 'matrix' && isRecord(value)) {
    const rows = labelsOf(question.rows);
    const columns = labelsOf(question.columns);
    return Object.fromEntries(
      Object.entries(value).map(([row, column]) => [
        rows.get(row) ?? row,
        typeof column === 'string' ? (columns.get(column) ?? column) : column,
      ]),
    );
  }
  const choices = labelsOf(question.choices);
  if (choices.size === 0) return value;
  const label = (v: unknown): unknown => (typeof v === 'string' ? (choices.get(v) ?? v) : v);
  return Array.isArray(value) ? value.map(label) : label(value);
}
