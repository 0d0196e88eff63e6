// The shapes the edge answers, for the API document. The records are built by the store's
// `…Record` functions (store/*.ts) and the client routes; test/e2e/openapi.test.ts checks real
// answers against these, so a record that changes shape without them fails there. Objects allow
// fields beyond those named, as readers of a JSON API should.
import Type, { type TSchema } from 'typebox';
import { PROVIDERS } from '../../config.ts';
import { ID_PATTERN } from '../../ids.ts';
import {
  ACTION_CLASS_TYPES,
  ATTRIBUTE_TYPES,
  DELIVERY_STATUSES,
  SURVEY_STATUSES,
  WEBHOOK_SOURCES,
  WEBHOOK_TRIGGERS,
} from '../../store/entities.ts';
import { Block, Element, Ending, Quota } from '../../surveys/definition.ts';
import { NoCodeConfig, SurveyWidgetFields, WidgetSettingsFields } from '../../surveys/widget-fields.ts';

export const Id = Type.String({ pattern: ID_PATTERN });
const Time = Type.String({ format: 'date-time' });
const OrNull = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Strings = Type.Record(Type.String(), Type.String());
const Anything = Type.Record(Type.String(), Type.Unknown());
const Stamps = { id: Id, createdAt: Time, updatedAt: Time };

/** The body of every error (http-errors.ts): `details` is always an object. */
export const ErrorBody = Type.Object({
  code: Type.String(),
  message: Type.String(),
  details: Anything,
});

// Client API.

/** A create or update of a response: its id, and the quota it fell into when one is full. */
export const ResponseAnswer = Type.Object({
  id: Id,
  quotaFull: Type.Boolean(),
  quota: Type.Optional(
    Type.Object({
      id: Type.String(),
      action: Type.Enum(['endSurvey', 'continueSurvey']),
      endingCardId: Type.Optional(Type.String()),
    }),
  ),
});

export const Display = Type.Object({ ...Stamps, surveyId: Id, contactId: OrNull(Id) });

/** GET …/displays/{displayId}/response: the response that links the display, if one does. */
export const DisplayResponse = Type.Object({ responseId: OrNull(Id) });

export const Contact = Type.Object({
  ...Stamps,
  environmentId: Id,
  userId: Type.String(),
  attributes: Strings,
});

/** What the Formbricks widget filters its surveys with (client/user-state.ts). */
export const UserState = Type.Object({
  data: Type.Object({
    userId: Type.String(),
    contactId: Id,
    segments: Type.Array(Type.String()),
    displays: Type.Array(Type.Object({ surveyId: Id, createdAt: Time })),
    responses: Type.Array(Id),
    lastDisplayAt: OrNull(Time),
    language: Type.Optional(Type.String()),
  }),
  expiresAt: Time,
});

export const IdentifiedContact = Type.Object({ ...Contact.properties, state: UserState });

export const PresignedUpload = Type.Object({
  signedUrl: Type.String(),
  presignedFields: Strings,
  fileUrl: Type.String(),
});

/** The widget's environment state (surveys/widget-state.ts); its objects are Formbricks' shapes. */
export const EnvironmentState = Type.Object({
  data: Type.Object({
    surveys: Type.Array(Anything),
    actionClasses: Type.Array(Anything),
    workspace: Anything,
    project: Anything,
  }),
  expiresAt: Time,
});

// Management API.

export const ResponseRecord = Type.Object({
  ...Stamps,
  environmentId: Id,
  surveyId: Id,
  finished: Type.Boolean(),
  data: Anything,
  ttc: Type.Record(Type.String(), Type.Number()),
  variables: Anything,
  meta: Anything,
  language: OrNull(Type.String()),
  endingId: OrNull(Type.String()),
  displayId: OrNull(Id),
  singleUseId: OrNull(Type.String()),
  contactId: OrNull(Id),
  contactAttributes: OrNull(Strings),
});

/** One item of a segment's filter tree: a filter, or a nested list of items (docs/segments.md). */
export const SegmentFilterItem = Type.Object({
  id: Type.String(),
  connector: OrNull(Type.Enum(['and', 'or'])),
  resource: Type.Union([
    Type.Object({
      id: Type.String(),
      root: Type.Object({
        type: Type.Enum(['attribute', 'person', 'segment', 'device', 'surveyInteraction']),
      }),
      qualifier: Type.Object({ operator: Type.String() }),
      value: Type.Unknown(),
    }),
    Type.Array(Type.Unknown()),
  ]),
});

/** A segment in Formbricks' shape; `surveys` are the ids of the surveys using it. */
export const SegmentRecord = Type.Object({
  ...Stamps,
  environmentId: Id,
  title: Type.String(),
  description: OrNull(Type.String()),
  isPrivate: Type.Boolean(),
  filters: Type.Array(SegmentFilterItem),
  surveys: Type.Array(Id),
});

export const SurveyRecord = Type.Object({
  ...Stamps,
  environmentId: Id,
  name: Type.String(),
  type: Type.Enum(['link', 'app']),
  status: Type.Enum([...SURVEY_STATUSES]),
  blocks: Type.Array(Block),
  /** Present when every block holds exactly one element. */
  questions: Type.Optional(Type.Array(Element)),
  endings: Type.Array(Ending),
  quotas: Type.Array(Quota),
  isCaptureIpEnabled: Type.Boolean(),
  ...SurveyWidgetFields,
  /** App surveys: their segment (a private one of their own, or a public one); others: null. */
  segment: OrNull(SegmentRecord),
});

export const AttributeKeyRecord = Type.Object({
  ...Stamps,
  environmentId: Id,
  key: Type.String(),
  type: Type.Enum([...ATTRIBUTE_TYPES]),
  name: OrNull(Type.String()),
  description: OrNull(Type.String()),
});

export const ActionClassRecord = Type.Object({
  ...Stamps,
  environmentId: Id,
  name: Type.String(),
  description: OrNull(Type.String()),
  type: Type.Enum([...ACTION_CLASS_TYPES]),
  key: OrNull(Type.String()),
  noCodeConfig: OrNull(NoCodeConfig),
});

/** An environment's widget settings with the defaults filled in; `id` is the environment's. */
export const WidgetSettings = Type.Object({
  id: Id,
  ...Type.Required(Type.Object(WidgetSettingsFields)).properties,
});

export const DeletedContact = Type.Object({ id: Id, deleted: Type.Literal(true) });

// Integrations.

export const IntegrationRecord = Type.Object({
  ...Stamps,
  environmentId: Id,
  provider: Type.Enum([...PROVIDERS]),
  status: Type.Enum(['connected', 'needs_reconnect']),
  /** What the provider said of the workspace (team, bot user …). */
  account: Anything,
});

export const LinkRecord = Type.Object({
  id: Id,
  createdAt: Time,
  integrationId: Id,
  surveyId: Id,
  targetId: Type.String(),
  targetName: OrNull(Type.String()),
  mapping: Type.Array(
    Type.Object({
      questionId: Type.String(),
      property: Type.Optional(Type.String()),
      propertyType: Type.Optional(Type.String()),
    }),
  ),
});

export const DeliveryRecord = Type.Object({
  ...Stamps,
  responseId: Id,
  /** A delivery goes to a link of an integration, or to a webhook (with the trigger that fired it). */
  linkId: OrNull(Id),
  integrationId: OrNull(Id),
  webhookId: OrNull(Id),
  event: OrNull(Type.Enum([...WEBHOOK_TRIGGERS])),
  status: Type.Enum([...DELIVERY_STATUSES]),
  attempts: Type.Integer({ minimum: 0 }),
  nextAttemptAt: Time,
  lastError: OrNull(Type.String()),
  externalId: OrNull(Type.String()),
});

export const WebhookRecord = Type.Object({
  ...Stamps,
  environmentId: Id,
  name: OrNull(Type.String()),
  url: Type.String(),
  source: Type.Enum([...WEBHOOK_SOURCES]),
  triggers: Type.Array(Type.Enum([...WEBHOOK_TRIGGERS])),
  /** Empty: every survey of the environment. */
  surveyIds: Type.Array(Id),
});

/** The answer to a create: the webhook and its signing secret (`whsec_…`), never shown again. */
export const CreatedWebhook = Type.Object({
  ...WebhookRecord.properties,
  secret: Type.String({ pattern: '^whsec_' }),
});

export const SlackChannel = Type.Object({
  id: Type.String(),
  name: Type.String(),
  isPrivate: Type.Boolean(),
});
export const NotionDatabase = Type.Object({ id: Type.String(), title: Type.String() });

/** A browser is sent on (connect, authorize): the same address as `Location`. */
export const Redirect = Type.Object({ url: Type.String() });

/**
 * Named schemas: the document lists each once under `components/schemas` and refers to it
 * wherever it appears (document.ts), so a client generator names the types after them.
 */
export const NAMED_SCHEMAS: Record<string, TSchema> = {
  Error: ErrorBody,
  ResponseAnswer,
  Display,
  Contact,
  UserState,
  IdentifiedContact,
  PresignedUpload,
  EnvironmentState,
  Response: ResponseRecord,
  Survey: SurveyRecord,
  Segment: SegmentRecord,
  SegmentFilterItem,
  Block,
  Element,
  Ending,
  Quota,
  NoCodeConfig,
  AttributeKey: AttributeKeyRecord,
  ActionClass: ActionClassRecord,
  WidgetSettings,
  Integration: IntegrationRecord,
  IntegrationLink: LinkRecord,
  Delivery: DeliveryRecord,
  Webhook: WebhookRecord,
  CreatedWebhook,
  SlackChannel,
  NotionDatabase,
};

/**
 * A survey's summary, in Formbricks' shape (docs/api.md, "Survey summaries"). The items of
 * `summary` differ by element `type`; each holds the element's definition and `responseCount`.
 */
export const SurveySummary = Type.Object({
  meta: Type.Object({
    displayCount: Type.Integer(),
    totalResponses: Type.Integer(),
    startsPercentage: Type.Number(),
    completedResponses: Type.Integer(),
    completedPercentage: Type.Number(),
    dropOffCount: Type.Integer(),
    dropOffPercentage: Type.Number(),
    ttcAverage: Type.Number(),
    quotasCompleted: Type.Integer(),
    quotasCompletedPercentage: Type.Number(),
  }),
  dropOff: Type.Array(
    Type.Object({
      elementId: Type.String(),
      elementType: Type.String(),
      headline: Type.String(),
      ttc: Type.Number(),
      impressions: Type.Integer(),
      dropOffCount: Type.Integer(),
      dropOffPercentage: Type.Number(),
    }),
  ),
  summary: Type.Array(Type.Object({ type: Type.String(), responseCount: Type.Integer() })),
  quotas: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      limit: Type.Integer(),
      count: Type.Integer(),
      percentage: Type.Number(),
    }),
  ),
});
