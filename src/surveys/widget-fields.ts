// What only the Formbricks widget reads: a survey's widget fields, an environment's widget settings
// and an action class's no-code configuration (widget contract §2, "fields the code actually
// dereferences"). The management API accepts them in Formbricks' shape and the environment state
// serves them back (widget-state.ts). Chorus acts on none of them, so only what the widget's
// code branches on is typed; the rest of each object is kept as sent. `null` clears a field.
import Type, { type Static, type TProperties, type TSchema } from 'typebox';

const nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const open = <P extends TProperties>(properties: P) =>
  Type.Object(properties, { additionalProperties: true });
/** A list of open objects, bounded like a definition's lists (see DEFINITION_LIMITS). */
const objects = (maxItems = 100) => Type.Array(open({}), { maxItems });

const DISPLAY_OPTIONS = ['displayOnce', 'displayMultiple', 'displaySome', 'respondMultiple'] as const;
const PLACEMENTS = ['bottomLeft', 'bottomRight', 'topLeft', 'topRight', 'center'] as const;
const OVERLAYS = ['none', 'light', 'dark'] as const;

/** Placement, overlay and click-outside of one survey, over the environment's (Formbricks' overwrites). */
const Overwrites = open({
  placement: Type.Optional(Type.Enum([...PLACEMENTS])),
  overlay: Type.Optional(Type.Enum([...OVERLAYS])),
  clickOutsideClose: Type.Optional(Type.Boolean()),
  brandColor: Type.Optional(Type.String({ maxLength: 64 })),
  highlightBorderColor: Type.Optional(Type.String({ maxLength: 64 })),
});

export const SurveyWidgetFields = {
  welcomeCard: nullable(open({ enabled: Type.Boolean() })),
  /** `[{actionClass: {id}}]` or `[{actionClass: {name}}]`: the action classes that show the survey. */
  triggers: nullable(
    Type.Array(
      open({
        actionClass: Type.Union([
          open({ id: Type.String({ minLength: 1, maxLength: 255 }) }),
          open({ name: Type.String({ minLength: 1, maxLength: 255 }) }),
        ]),
      }),
      { maxItems: 100 },
    ),
  ),
  displayOption: nullable(Type.Enum([...DISPLAY_OPTIONS])),
  displayLimit: nullable(Type.Integer({ minimum: 1 })),
  recontactDays: nullable(Type.Integer({ minimum: 0, maximum: 365 })),
  displayPercentage: nullable(Type.Number({ minimum: 0.01, maximum: 100 })),
  /** Seconds before the survey shows once triggered. */
  delay: nullable(Type.Integer({ minimum: 0, maximum: 86_400 })),
  autoClose: nullable(Type.Integer({ minimum: 0, maximum: 86_400 })),
  hiddenFields: nullable(
    open({
      enabled: Type.Optional(Type.Boolean()),
      fieldIds: Type.Optional(Type.Array(Type.String({ maxLength: 255 }), { maxItems: 1000 })),
    }),
  ),
  variables: nullable(
    Type.Array(
      open({
        id: Type.String({ minLength: 1, maxLength: 255 }),
        name: Type.String({ minLength: 1, maxLength: 255 }),
        type: Type.Enum(['number', 'text']),
        value: Type.Union([Type.String(), Type.Number()]),
      }),
      { maxItems: 1000 },
    ),
  ),
  languages: nullable(objects()),
  styling: nullable(open({})),
  recaptcha: nullable(
    open({ enabled: Type.Boolean(), threshold: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })) }),
  ),
  showLanguageSwitch: nullable(Type.Boolean()),
  isBackButtonHidden: nullable(Type.Boolean()),
  isAutoProgressingEnabled: nullable(Type.Boolean()),
  workspaceOverwrites: nullable(Overwrites),
  /** The legacy name of `workspaceOverwrites` (React Native, iOS): stored as `workspaceOverwrites`. */
  projectOverwrites: nullable(Overwrites),
};
// `segment` is not a widget field: a survey's targeting is its segment (store/segments.ts).
const SURVEY_WIDGET_FIELDS = Object.keys(SurveyWidgetFields).filter((k) => k !== 'projectOverwrites');

/** An environment's widget settings (Formbricks keeps them on the project). */
export const WidgetSettingsFields = {
  placement: Type.Optional(Type.Enum([...PLACEMENTS])),
  overlay: Type.Optional(Type.Enum([...OVERLAYS])),
  clickOutsideClose: Type.Optional(Type.Boolean()),
  inAppSurveyBranding: Type.Optional(Type.Boolean()),
  recontactDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 365 })),
  styling: Type.Optional(open({ allowStyleOverwrite: Type.Optional(Type.Boolean()) })),
};

const UrlFilter = Type.Object({
  value: Type.String({ minLength: 1, maxLength: 2048 }),
  rule: Type.Enum([
    'exactMatch',
    'contains',
    'startsWith',
    'endsWith',
    'notMatch',
    'notContains',
    'matchesRegex',
  ]),
});

/** When a no-code action fires: on which pages, and for a click, on which element. */
export const NoCodeConfig = open({
  type: Type.Enum(['click', 'pageView', 'exitIntent', 'fiftyPercentScroll', 'pageDwell']),
  urlFilters: Type.Array(UrlFilter, { maxItems: 100 }),
  urlFiltersConnector: Type.Optional(Type.Enum(['or', 'and'])),
  elementSelector: Type.Optional(
    Type.Object({
      cssSelector: Type.Optional(Type.String({ maxLength: 2048 })),
      innerHtml: Type.Optional(Type.String({ maxLength: 2048 })),
    }),
  ),
  timeInSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600 })),
});
export type NoCodeConfig = Static<typeof NoCodeConfig>;

/**
 * The widget fields of a create or update body, as stored: `projectOverwrites` becomes
 * `workspaceOverwrites` (when that is not sent too). Absent fields are absent; `null` stays.
 */
export function widgetFieldsOf(body: Record<string, unknown>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const name of SURVEY_WIDGET_FIELDS) if (body[name] !== undefined) fields[name] = body[name];
  if (fields.workspaceOverwrites === undefined && body.projectOverwrites !== undefined)
    fields.workspaceOverwrites = body.projectOverwrites;
  return fields;
}
