// The environment state the Formbricks widget and the mobile SDKs read at setup (widget contract
// §2 call 2, §4): `{data: {surveys, actionClasses, workspace, project}, expiresAt}`. Built from
// stored records as Formbricks' server builds it: only `app` surveys `inProgress`, the newest 30;
// every field the widget dereferences present (defaults where nothing is stored); plain-string
// texts as `{default: …}` (the renderer shows `""` for a plain string); `workspace` and its legacy
// name `project` (iOS requires `project`), `workspaceOverwrites` and `projectOverwrites` likewise.
// Pure: the store's reads come in, the answer and its ETag go out.
import { createHash } from 'node:crypto';

/** Formbricks lists at most this many surveys, newest first. */
export const MAX_STATE_SURVEYS = 30;
/** How long the widget keeps the state before it asks again (Formbricks 5.3.4: one hour). */
export const STATE_TTL_MS = 60 * 60_000;

export interface StateSurvey {
  id: string;
  type: string;
  status: string;
  blocks: readonly unknown[];
  endings: readonly unknown[];
  /** The widget fields the management API stored (widget-fields.ts); null when none were sent. */
  widget: Readonly<Record<string, unknown>> | null;
  /** Its segment's id and whether it has filters (never the filters themselves); null: none. */
  segment: { id: string; hasFilters: boolean } | null;
  /**
   * Which of its events make js-core identify again (segments/interaction-refresh.ts); present on
   * every survey when some delivered survey's segment depends on survey interactions, else absent.
   */
  interactionRefresh?: { onDisplay: boolean; onResponse: boolean; onFinished: boolean };
  createdAt: Date;
}

export interface StateActionClass {
  id: string;
  name: string;
  type: string;
  key: string | null;
  noCodeConfig: unknown;
}

export interface EnvironmentStateInput {
  environmentId: string;
  /** The environment's widget settings (widget-fields.ts); null when none were set. */
  settings: Readonly<Record<string, unknown>> | null;
  surveys: readonly StateSurvey[];
  actionClasses: readonly StateActionClass[];
}

export interface EnvironmentState {
  body: { data: { data: EnvironmentStateData; expiresAt: string } };
  /** A weak ETag of `data` (not of `expiresAt`): equal states revalidate with a 304 across rebuilds. */
  etag: string;
}

export interface EnvironmentStateData {
  surveys: Record<string, unknown>[];
  actionClasses: Record<string, unknown>[];
  workspace: Record<string, unknown>;
  project: Record<string, unknown>;
}

/**
 * A survey's segment as Formbricks publishes it (spec §3.3): its id and whether it has filters, the
 * rest placeholders; the real filters never reach clients. js-core hides a survey with filters
 * from anonymous visitors and shows an identified user the surveys whose segment the user route
 * lists.
 */
export function publicSegment(segment: { id: string; hasFilters: boolean }, environmentId: string) {
  return {
    id: segment.id,
    title: '[deprecated] segment title omitted from public API - will be removed soon',
    description: null,
    isPrivate: true,
    filters: segment.hasFilters ? [FILTER_PLACEHOLDER] : [],
    environmentId,
    workspaceId: environmentId,
    createdAt: EPOCH,
    updatedAt: EPOCH,
    surveys: [],
    hasFilters: segment.hasFilters,
  };
}

const EPOCH = '1970-01-01T00:00:00.000Z';
/** What Formbricks sends in place of real filters, for SDKs that read `filters` rather than `hasFilters`. */
const FILTER_PLACEHOLDER = {
  id: 'placeholder',
  connector: null,
  resource: {
    id: 'placeholder',
    root: { type: 'device', deviceType: 'phone' },
    value: 'deprecated',
    qualifier: { operator: 'equals' },
  },
};

/** Keys whose string value is a text the renderer localizes (elements, choices, cards, endings). */
const TEXT_KEYS = new Set([
  'headline',
  'subheader',
  'html',
  'placeholder',
  'label',
  'buttonLabel',
  'backButtonLabel',
  'upperLabel',
  'lowerLabel',
  'dismissButtonLabel',
  'ctaButtonLabel',
  'otherOptionPlaceholder',
]);

/** A copy of `value` with every plain-string text (by key, at any depth) as `{default: text}`. */
export function localizedTexts(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(localizedTexts);
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    copy[key] = TEXT_KEYS.has(key) && typeof child === 'string' ? { default: child } : localizedTexts(child);
  }
  return copy;
}

/** The default of each widget field the code dereferences (contract §6 step 2, Formbricks' defaults). */
const SURVEY_DEFAULTS = {
  welcomeCard: { enabled: false },
  variables: [],
  languages: [],
  hiddenFields: { enabled: false, fieldIds: [] },
  displayOption: 'displayOnce',
  displayLimit: null,
  recontactDays: null,
  displayPercentage: null,
  delay: 0,
  autoClose: null,
  showLanguageSwitch: null,
  isBackButtonHidden: false,
  isAutoProgressingEnabled: false,
  recaptcha: { enabled: false },
  styling: null,
  workspaceOverwrites: null,
} as const;

const SETTINGS_DEFAULTS = {
  recontactDays: 7,
  clickOutsideClose: true,
  overlay: 'none',
  placement: 'bottomRight',
  inAppSurveyBranding: true,
  styling: { allowStyleOverwrite: true },
} as const;

function stateSurvey(survey: StateSurvey, actionClasses: readonly StateActionClass[], environmentId: string) {
  const stored = survey.widget ?? {};
  const field = <K extends keyof typeof SURVEY_DEFAULTS>(name: K): unknown =>
    stored[name] ?? SURVEY_DEFAULTS[name];
  const overwrites = field('workspaceOverwrites');
  return {
    id: survey.id,
    // Formbricks does not send the internal survey name to the public either.
    name: 'Survey',
    type: survey.type,
    status: survey.status,
    questions: [],
    blocks: localizedTexts(survey.blocks),
    endings: localizedTexts(survey.endings),
    welcomeCard: localizedTexts(field('welcomeCard')),
    variables: field('variables'),
    languages: field('languages'),
    hiddenFields: field('hiddenFields'),
    displayOption: field('displayOption'),
    displayLimit: field('displayLimit'),
    recontactDays: field('recontactDays'),
    displayPercentage: field('displayPercentage'),
    delay: field('delay'),
    autoClose: field('autoClose'),
    showLanguageSwitch: field('showLanguageSwitch'),
    isBackButtonHidden: field('isBackButtonHidden'),
    isAutoProgressingEnabled: field('isAutoProgressingEnabled'),
    recaptcha: field('recaptcha'),
    styling: field('styling'),
    segment: survey.segment ? publicSegment(survey.segment, environmentId) : null,
    ...(survey.interactionRefresh ? { interactionRefresh: survey.interactionRefresh } : {}),
    triggers: triggersOf(stored.triggers, actionClasses),
    workspaceOverwrites: overwrites,
    projectOverwrites: overwrites,
  };
}

/**
 * `[{actionClass: {name}}]`, the form the widget matches: a trigger stored by action class id
 * takes that class's current name, and one whose class no longer exists is left out (it could
 * never fire). A trigger stored by name is kept as it is.
 */
function triggersOf(stored: unknown, actionClasses: readonly StateActionClass[]) {
  if (!Array.isArray(stored)) return [];
  const names = new Map(actionClasses.map((a) => [a.id, a.name]));
  return stored.flatMap((trigger: { actionClass?: { id?: string; name?: string } }) => {
    const ref = trigger.actionClass ?? {};
    const name = ref.id !== undefined ? names.get(ref.id) : ref.name;
    return name === undefined ? [] : [{ actionClass: { name } }];
  });
}

/** The environment's widget settings with Formbricks' defaults for those never set. */
export function widgetSettingsOf(environmentId: string, settings: Readonly<Record<string, unknown>> | null) {
  const stored = settings ?? {};
  const workspace: Record<string, unknown> = { id: environmentId };
  for (const [name, fallback] of Object.entries(SETTINGS_DEFAULTS))
    workspace[name] = stored[name] ?? fallback;
  return workspace;
}

export function buildEnvironmentState(input: EnvironmentStateInput, now: Date): EnvironmentState {
  const surveys = input.surveys
    .filter((s) => s.type === 'app' && s.status === 'inProgress')
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
    .slice(0, MAX_STATE_SURVEYS)
    .map((s) => stateSurvey(s, input.actionClasses, input.environmentId));
  const workspace = widgetSettingsOf(input.environmentId, input.settings);
  const data: EnvironmentStateData = {
    surveys,
    actionClasses: input.actionClasses.map((a) => ({
      id: a.id,
      type: a.type,
      name: a.name,
      key: a.key,
      noCodeConfig: a.noCodeConfig ?? null,
    })),
    workspace,
    project: workspace,
  };
  const digest = createHash('sha256').update(JSON.stringify(data)).digest('base64url').slice(0, 27);
  return {
    body: { data: { data, expiresAt: new Date(now.getTime() + STATE_TTL_MS).toISOString() } },
    etag: `W/"${digest}"`,
  };
}

/** Whether an `If-None-Match` header names `etag` (weak comparison, RFC 9110 13.1.2). */
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === wanted);
}
