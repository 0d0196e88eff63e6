// The Slack message for one finished response (compat notes, Integrations): a section with the
// survey name, a divider, then per mapped question a bold headline section and an answer section.
// A message that would exceed Slack's limits keeps the first questions that fit and ends with a
// note saying how many answers were left out (spec: messages are truncated at the provider's limit).
import type { Element } from '../../surveys/definition.ts';
import { answerText, cut, isUnanswered, plainText, withLabels } from '../text.ts';

export interface SlackBlock {
  type: 'section' | 'divider';
  text?: { type: 'mrkdwn'; text: string };
}

/** Slack refuses a section text over 3000 characters; 2995 + '...' (+ the bold '*'s) stays within. */
const MAX_VALUE = 2995;
/** Slack refuses a message with more than 50 blocks (`invalid_blocks`). */
export const MAX_BLOCKS = 50;
/**
 * Slack also refuses a message whose blocks hold too much text in all (`msg_blocks_too_long`, at
 * about 13,000 characters; the limit is not documented), whatever the per-block limits allow: 24
 * answers of 3,000 characters each fit in 50 blocks but not in one message.
 */
export const MAX_BLOCKS_TEXT = 12_000;

/**
 * Slack reads `<…>` as links and mentions and `&` as an entity, so a respondent could ping the
 * whole channel with `<!channel>`; escaping these three is what Slack asks of untrusted text.
 * Escaping comes before the cut (the limit is on what Slack receives); an entity split by the cut
 * is dropped whole.
 */
function escaped(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function fitted(text: string): string {
  return cut(escaped(text), MAX_VALUE).replace(/&(?:a|am|amp|l|lt|g|gt)?\.\.\.$/, '...');
}

function section(text: string): SlackBlock {
  return { type: 'section', text: { type: 'mrkdwn', text } };
}

export function slackMessage(input: {
  surveyName: string;
  questions: readonly Element[];
  /** Question ids, in the order they are shown. */
  mapped: readonly string[];
  data: Readonly<Record<string, unknown>>;
}): { text: string; blocks: SlackBlock[] } {
  // A section with empty text is rejected by Slack, hence the fallbacks for blank names and answers.
  const name = fitted(input.surveyName.trim() === '' ? 'Untitled survey' : input.surveyName);
  const byId = new Map(input.questions.map((q) => [q.id, q]));
  const pairs = input.mapped.map((id): [SlackBlock, SlackBlock] => {
    const question = byId.get(id);
    const headline = plainText(question?.headline).trim() || id;
    const value = input.data[id];
    const answer = isUnanswered(value) ? '' : answerText(withLabels(question, value));
    return [section(`*${fitted(headline)}*`), section(answer.trim() === '' ? '-' : fitted(answer))];
  });
  const blocks: SlackBlock[] = [section(name), { type: 'divider' }];
  // The fallback shown in notifications and by clients that cannot render blocks.
  const message = { text: name, blocks };
  if (fits(blocks.length + pairs.length * 2, textOf([...blocks, ...pairs.flat()]))) {
    blocks.push(...pairs.flat());
    return message;
  }
  // Too big: the questions in order while they fit, with room kept for the note.
  let shown = 0;
  for (const pair of pairs) {
    if (!fits(blocks.length + 2 + 1, textOf([...blocks, ...pair]) + NOTE_ROOM)) break;
    blocks.push(...pair);
    shown += 1;
  }
  const left = pairs.length - shown;
  blocks.push(
    section(
      `_${left} more ${left === 1 ? 'answer was' : 'answers were'} left out: the message reached Slack's size limit._`,
    ),
  );
  return message;
}

/** Room kept for the closing note (its text is well under this). */
const NOTE_ROOM = 100;

const fits = (blockCount: number, textLength: number) =>
  blockCount <= MAX_BLOCKS && textLength <= MAX_BLOCKS_TEXT;

function textOf(blocks: readonly SlackBlock[]): number {
  return blocks.reduce((sum, b) => sum + (b.text?.text.length ?? 0), 0);
}
