// The Slack message for one finished response (compat notes, Integrations): a section with the
// survey name, a divider, then per mapped question a bold headline section and an answer section.
import type { Element } from '../../surveys/definition.ts';
import { answerText, cut, isUnanswered, plainText, withLabels } from '../text.ts';

export interface SlackBlock {
  type: 'section' | 'divider';
  text?: { type: 'mrkdwn'; text: string };
}

/** Slack refuses a section text over 3000 characters; 2995 + '...' (+ the bold '*'s) stays within. */
const MAX_VALUE = 2995;

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
  const blocks: SlackBlock[] = [section(name), { type: 'divider' }];
  const byId = new Map(input.questions.map((q) => [q.id, q]));
  for (const id of input.mapped) {
    const question = byId.get(id);
    const headline = plainText(question?.headline).trim() || id;
    const value = input.data[id];
    const answer = isUnanswered(value) ? '' : answerText(withLabels(question, value));
    blocks.push(section(`*${fitted(headline)}*`), section(answer.trim() === '' ? '-' : fitted(answer)));
  }
  // The fallback shown in notifications and by clients that cannot render blocks.
  return { text: name, blocks };
}
