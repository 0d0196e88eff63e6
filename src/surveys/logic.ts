// Whether a survey's definition lets a respondent jump over questions. Formbricks keeps logic on
// blocks (`logic: [{conditions, actions: [{objective: 'jumpToBlock', …}]}]`, `logicFallback`) and,
// in the legacy `questions` format that Chorus keeps inside its elements, on questions (`logic`
// with `actions` objectives `jumpToQuestion`, or older rules `{condition, destination}`). A survey
// with jumps can legitimately finish with a required question never shown, so required answers are
// not enforced on finish for it (see validate-answers.ts, docs/api.md).
import type { Block } from './definition.ts';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A rule jumps unless every one of its actions is known not to (calculate, requireAnswer). */
function ruleJumps(rule: unknown): boolean {
  if (!isObject(rule)) return false;
  if (!Array.isArray(rule.actions)) return true; // an older rule: `{condition, value, destination}`
  return rule.actions.some(
    (action) =>
      !isObject(action) || typeof action.objective !== 'string' || action.objective.startsWith('jump'),
  );
}

function carriesJumps(holder: Readonly<Record<string, unknown>>): boolean {
  const fallback = holder.logicFallback;
  if (typeof fallback === 'string' && fallback !== '') return true;
  return Array.isArray(holder.logic) && holder.logic.some(ruleJumps);
}

/** True when a block or an element of the survey carries a logic jump or a logic fallback. */
export function hasLogicJumps(blocks: readonly Block[]): boolean {
  return blocks.some((block) => carriesJumps(block) || (block.elements ?? []).some(carriesJumps));
}
