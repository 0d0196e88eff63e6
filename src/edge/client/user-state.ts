// The user state the Formbricks widget reads from the identify answer (widget contract §2 call 7,
// §5.8): `{data: {userId, contactId, segments, displays, responses, lastDisplayAt, language?},
// expiresAt}`. js-core filters its surveys with it on the client: `displays` for `displayOption` and
// `displayLimit`, `lastDisplayAt` for `recontactDays`, `responses` for surveys already answered, and
// `segments` for targeting — an identified user sees only surveys whose `segment.id` is listed, so
// an empty list would show them nothing. Pure: the store's reads come in as a ContactActivity, and
// the segments as computed by segments/membership.ts.
import type { ContactActivity } from '../../store/contact-activity.ts';

/** How long the widget keeps the state before it identifies again (Formbricks: 30 minutes). */
export const USER_STATE_TTL_MS = 30 * 60_000;

/**
 * How long the widget keeps a state built without the contact's stored history (PostgreSQL was
 * unavailable: see identify.ts). js-core reads `expiresAt` when a page loads, and identifies again
 * once it has passed; while one page stays open it pushes the time back itself, every minute.
 */
export const USER_STATE_WITHOUT_HISTORY_TTL_MS = 60_000;

export interface UserState {
  data: {
    userId: string;
    contactId: string;
    segments: string[];
    displays: { surveyId: string; createdAt: string }[];
    responses: string[];
    lastDisplayAt: string | null;
    /** The contact's `language` attribute, when it has one (js-core picks the survey language by it). */
    language?: string;
  };
  expiresAt: string;
}

export function buildUserState(
  contact: { id: string; userId: string; attributes: Readonly<Record<string, string>> },
  activity: Pick<ContactActivity, 'displays' | 'respondedSurveyIds'>,
  segments: readonly string[],
  now: Date,
  ttlMs = USER_STATE_TTL_MS,
): UserState {
  // Newest first whatever the caller's order: the widget reads lastDisplayAt, not the list's order.
  const displays = activity.displays
    .map(({ surveyId, createdAt }) => ({ surveyId, createdAt }))
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  const language = contact.attributes.language;
  return {
    data: {
      userId: contact.userId,
      contactId: contact.id,
      segments: [...segments],
      displays,
      responses: [...new Set(activity.respondedSurveyIds)],
      lastDisplayAt: displays[0]?.createdAt ?? null,
      ...(language ? { language } : {}),
    },
    expiresAt: new Date(now.getTime() + ttlMs).toISOString(),
  };
}
