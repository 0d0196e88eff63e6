// What of a survey's definition its summary reads (../shared/spec/survey-summary.md): the elements
// in order with their blocks, the hidden fields, the welcome card and the languages.
import type { Block, Element } from '../surveys/definition.ts';
import { questionsOf } from '../surveys/definition.ts';

export interface SummaryElement {
  element: Element;
  /** The index of its block: elements of one block share their time (the block's largest). */
  block: number;
}

export interface SurveyShape {
  elements: SummaryElement[];
  hiddenFieldIds: string[];
  welcomeCardEnabled: boolean;
  /** Enabled language codes; `defaultCode` is the survey's default language, if it has languages. */
  languageCodes: Set<string>;
  defaultCode: string | undefined;
}

export function surveyShape(survey: {
  blocks: readonly unknown[];
  widget?: Readonly<Record<string, unknown>> | null;
}): SurveyShape {
  const blocks = survey.blocks as Block[];
  const elements: SummaryElement[] =
    blocks.length > 0
      ? blocks.flatMap((b, block) => (b.elements ?? []).map((element) => ({ element, block })))
      : questionsOf(survey).map((element, block) => ({ element, block }));
  const widget = survey.widget ?? {};
  const hidden = widget['hiddenFields'] as { fieldIds?: unknown } | null | undefined;
  const welcome = widget['welcomeCard'] as { enabled?: unknown } | null | undefined;
  const languageCodes = new Set<string>();
  let defaultCode: string | undefined;
  for (const entry of (widget['languages'] as unknown[] | null | undefined) ?? []) {
    const { language, default: isDefault } = (entry ?? {}) as {
      language?: { code?: unknown };
      default?: unknown;
    };
    if (typeof language?.code !== 'string') continue;
    languageCodes.add(language.code);
    if (isDefault === true) defaultCode = language.code;
  }
  return {
    elements,
    hiddenFieldIds: Array.isArray(hidden?.fieldIds)
      ? hidden.fieldIds.filter((id): id is string => typeof id === 'string')
      : [],
    welcomeCardEnabled: welcome?.enabled === true,
    languageCodes,
    defaultCode,
  };
}

/**
 * What of the shape a response's contribution depends on (summaries/contributions.ts): its elements'
 * ids, types, order and blocks, and the hidden fields. Labels, languages and the welcome card are
 * read when the summary is; an edit that changes this signature needs the survey counted again.
 */
export function countedShape(shape: SurveyShape): string {
  return JSON.stringify([
    shape.elements.map(({ element, block }) => [element.id, element.type, block]),
    shape.hiddenFieldIds,
  ]);
}

/**
 * The language key of a response (spec §3, "Language mapping"): `default` when the survey has no
 * languages, the response has none, or it is the default or an unknown one; otherwise its code.
 */
export function languageKey(shape: SurveyShape, language: string | null): string {
  if (shape.languageCodes.size === 0 || !language || language === 'default') return 'default';
  if (language === shape.defaultCode || !shape.languageCodes.has(language)) return 'default';
  return language;
}

/** A label's text in `language`: a plain string is every language's. */
export function labelIn(label: unknown, language: string): string | undefined {
  if (typeof label === 'string') return label;
  if (label && typeof label === 'object') {
    const text = (label as Record<string, unknown>)[language];
    return typeof text === 'string' ? text : undefined;
  }
  return undefined;
}

/** An element's headline as plain text, in the default language. */
export function headlineOf(element: Element): string {
  return (labelIn(element.headline, 'default') ?? '').replace(/<[^>]*>/g, '').trim();
}
