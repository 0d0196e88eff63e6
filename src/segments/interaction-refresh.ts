// Which of the delivered surveys' events can change a contact's segments (spec §3.3,
// `interactionRefresh`): a survey-interaction filter in the segment of a live app survey, directly
// or in a segment it nests, depends on the displays, responses or finishes of the surveys it names.
// js-core identifies again after such an event, so that the next page view sees the new membership.
// The flag goes on the survey whose event it is, not on the survey whose segment holds the filter;
// only delivered surveys can fire events, so only they carry flags. Pure.
import { leavesOf, type FilterItem, type InteractionLeaf } from './filters.ts';

export interface InteractionRefresh {
  onDisplay: boolean;
  onResponse: boolean;
  onFinished: boolean;
}

/** The event each interaction operator (and its negation) depends on. */
const EVENT_OF: Record<InteractionLeaf['qualifier']['operator'], keyof InteractionRefresh> = {
  haveSeen: 'onDisplay',
  haveNotSeen: 'onDisplay',
  haveStartedRespondingTo: 'onResponse',
  haveCompleted: 'onFinished',
  haveNotCompleted: 'onFinished',
};

/**
 * The flags of each delivered survey, or undefined when no delivered survey's segment depends on
 * any interaction (the state then carries no `interactionRefresh` at all, as Formbricks sends it).
 * `nested` gives a nested segment's filters (undefined for one that does not exist).
 */
export function interactionRefreshOf(
  surveys: readonly { id: string; filters: readonly FilterItem[] | null }[],
  nested: (segmentId: string) => readonly FilterItem[] | undefined,
): Map<string, InteractionRefresh> | undefined {
  const delivered = surveys.map((s) => s.id);
  const flags = new Map<string, InteractionRefresh>(
    delivered.map((id) => [id, { onDisplay: false, onResponse: false, onFinished: false }]),
  );
  let any = false;
  const walk = (filters: readonly FilterItem[], visited: Set<string>): void => {
    for (const leaf of leavesOf(filters)) {
      if (leaf.root.type === 'segment') {
        const id = leaf.root.segmentId;
        if (visited.has(id)) continue; // a cycle, or a segment already walked for this survey
        visited.add(id);
        walk(nested(id) ?? [], visited);
      } else if (leaf.root.type === 'surveyInteraction') {
        const { qualifier, value } = leaf as InteractionLeaf;
        for (const target of value.surveyScope === 'specific' ? value.surveyIds : delivered) {
          const flag = flags.get(target);
          if (!flag) continue; // not delivered: it cannot fire an event
          flag[EVENT_OF[qualifier.operator]] = true;
          any = true;
        }
      }
    }
  };
  for (const survey of surveys) if (survey.filters) walk(survey.filters, new Set());
  return any ? flags : undefined;
}
