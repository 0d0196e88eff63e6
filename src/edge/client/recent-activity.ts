// What this edge has just written for a contact: its displays and responses acknowledged by Kafka
// in the last minutes, which the processors may not have stored yet. The user route merges them into
// the contact's state (widget contract §5.8: "Because Chorus acks before the processor has applied
// them, the edge can merge what it just published"), so a visitor who identifies again right after
// answering is not shown the same survey.
//
// What stays eventually consistent: writes acknowledged by OTHER edges (a visitor's requests may be
// spread over several edges), and this edge's writes after it restarts or once they are older than
// RECENT_TTL_MS, are only seen once their processor has stored them — usually well under a second,
// and the widget reads the state again when it expires.
//
// Bounded like the Directory (directory.ts): contacts are kept in two generations, the older one
// dropped whole when the current one holds half of `maxContacts`, and each contact keeps its newest
// MAX_PER_CONTACT displays and responses. So a write costs O(1) whatever the history.
import type { ContactActivity } from '../../store/contact-activity.ts';

/** How long a write is remembered: far longer than a processor takes to store it. */
export const RECENT_TTL_MS = 10 * 60_000;
/** The newest writes kept per contact (a widget shows a survey at most once per page view). */
export const MAX_PER_CONTACT = 32;

export interface RecentDisplay {
  id: string;
  surveyId: string;
  createdAt: string;
}

/** What a contact was recently shown and answered, newest last. */
export interface RecentWrites {
  displays: RecentDisplay[];
  respondedSurveyIds: string[];
}

interface Entry extends RecentWrites {
  /** When each kept write was made (ms), for the time-to-live: displays, then responses. */
  displayTimes: number[];
  responseTimes: number[];
}

export class RecentContactActivity {
  private current = new Map<string, Entry>();
  private previous = new Map<string, Entry>();

  constructor(
    private readonly options: { maxContacts: number; ttlMs: number } = {
      maxContacts: 100_000,
      ttlMs: RECENT_TTL_MS,
    },
    private readonly now: () => number = Date.now,
  ) {}

  recordDisplay(contactId: string, display: RecentDisplay): void {
    const entry = this.entryOf(contactId);
    push(entry.displays, display, entry.displayTimes, this.now());
  }

  recordResponse(contactId: string, surveyId: string): void {
    const entry = this.entryOf(contactId);
    push(entry.respondedSurveyIds, surveyId, entry.responseTimes, this.now());
  }

  /** The contact's writes younger than the time-to-live (copies). */
  of(contactId: string): RecentWrites {
    const entry = this.current.get(contactId) ?? this.previous.get(contactId);
    if (!entry) return { displays: [], respondedSurveyIds: [] };
    const since = this.now() - this.options.ttlMs;
    return {
      displays: entry.displays.filter((_, i) => entry.displayTimes[i]! > since),
      respondedSurveyIds: entry.respondedSurveyIds.filter((_, i) => entry.responseTimes[i]! > since),
    };
  }

  /** The contact's entry in the current generation (moved there if it was in the previous one). */
  private entryOf(contactId: string): Entry {
    let entry = this.current.get(contactId);
    if (entry) return entry;
    entry = this.previous.get(contactId) ?? {
      displays: [],
      respondedSurveyIds: [],
      displayTimes: [],
      responseTimes: [],
    };
    this.previous.delete(contactId);
    this.current.set(contactId, entry);
    if (this.current.size >= Math.max(1, this.options.maxContacts / 2)) {
      this.previous = this.current;
      this.current = new Map();
    }
    return entry;
  }
}

/** Appends a write, dropping the oldest beyond MAX_PER_CONTACT (a bounded shift: O(1)). */
function push<T>(items: T[], item: T, times: number[], at: number): void {
  items.push(item);
  times.push(at);
  if (items.length > MAX_PER_CONTACT) {
    items.shift();
    times.shift();
  }
}

/**
 * The stored activity with this edge's recent writes added: a display once by its id, a responded
 * survey once. Pure.
 */
export function withRecentWrites(stored: ContactActivity, recent: RecentWrites): ContactActivity {
  if (recent.displays.length === 0 && recent.respondedSurveyIds.length === 0) return stored;
  const known = new Set(stored.displays.map((d) => d.id));
  return {
    ...stored,
    displays: [...stored.displays, ...recent.displays.filter((d) => !known.has(d.id))],
    respondedSurveyIds: [...new Set([...stored.respondedSurveyIds, ...recent.respondedSurveyIds])],
  };
}
