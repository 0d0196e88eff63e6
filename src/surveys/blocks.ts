// Conversion between the current `blocks` format and legacy `questions` (spec, "Versioning").
import { newId } from '../ids.ts';
import type { Block, Element } from './definition.ts';

/** Legacy questions in: one block per question; the element keeps the question's id. */
export function blocksFromQuestions(questions: readonly Element[]): Block[] {
  return questions.map((question, i) => ({
    id: newId('blk'),
    type: 'question',
    name: `Block ${i + 1}`,
    elements: [question],
  }));
}

/** Out: the legacy view exists only when every block holds exactly one element. */
export function legacyQuestions(blocks: readonly Block[]): Element[] | undefined {
  if (!blocks.every((b) => b.elements.length === 1)) return undefined;
  return blocks.map((b) => b.elements[0]!);
}
