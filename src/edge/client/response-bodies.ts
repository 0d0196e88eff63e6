// The bodies of the client response routes, v1 and v2 (compat notes "Rules"; widget contract §2,
// calls 5 and 6). Unknown keys are ignored (the widget sends `pinAuthToken`, which Chorus does not
// use). Every optional field may be `null`, which means absent: Formbricks' own schemas accept them
// nullish and the widget sends `null` for the ids it does not have, so refusing them would make it
// drop the response for good.
import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { ID_PATTERN } from '../../ids.ts';
import { nullable } from '../validation.ts';
import type { WithoutNulls } from './context.ts';

const Id = Type.String({ pattern: ID_PATTERN });
// Bounded far above any survey (DEFINITION_LIMITS): each key costs validation and quota work.
const Answers = Type.Record(Type.String(), Type.Unknown(), { maxProperties: 5000 });
const Ttc = Type.Record(Type.String(), Type.Number(), { maxProperties: 5000 });
const Variables = Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()]), {
  maxProperties: 1000,
});
const Language = Type.String({ minLength: 1, maxLength: 64 });
const Text255 = Type.String({ minLength: 1, maxLength: 255 });
const Meta = Type.Object({
  source: nullable(Type.String()),
  url: nullable(Type.String()),
  action: nullable(Type.String()),
});

/** What v1 and v2 creates share. */
const Created = Type.Object({
  surveyId: Id,
  finished: Type.Boolean(),
  data: Answers,
  displayId: nullable(Id),
  singleUseId: nullable(Text255),
  endingId: nullable(Text255),
  language: nullable(Language),
  variables: nullable(Variables),
  ttc: nullable(Ttc),
  meta: nullable(Meta),
});
/** A create once its `null`s are removed, without the field naming the respondent. */
export type CreateBody = WithoutNulls<Static<typeof Created>>;

/** v1: the identified user is named by `userId` (enterprise). */
export const CreateBodyV1 = Compile(Type.Object({ ...Created.properties, userId: nullable(Text255) }));

/**
 * v2 (the widget's create): the identified user is named by `contactId` (enterprise), as returned by
 * the user route; a `userId` is ignored, as Formbricks' v2 schema omits it. `recaptchaToken` is
 * accepted and not checked: Chorus has no reCAPTCHA configuration, so no survey of it requires one.
 */
export const CreateBodyV2 = Compile(
  Type.Object({ ...Created.properties, contactId: nullable(Id), recaptchaToken: nullable(Type.String()) }),
);

/**
 * The management API's create (Formbricks' `ZResponseInput`): also for imports, so the respondent's
 * `meta` is taken as sent (user agent, country and IP address included), and `createdAt`/`updatedAt`
 * may be given (checked by the route). `environmentId` may be left out when the API key can write to
 * exactly one environment.
 */
export const ManagementCreateBody = Compile(
  Type.Object({
    ...Created.properties,
    environmentId: nullable(Id),
    userId: nullable(Text255),
    meta: nullable(
      Type.Object({
        source: nullable(Type.String()),
        url: nullable(Type.String()),
        action: nullable(Type.String()),
        country: nullable(Type.String({ maxLength: 255 })),
        ipAddress: nullable(Type.String({ maxLength: 255 })),
        userAgent: nullable(
          Type.Object({
            browser: nullable(Type.String({ maxLength: 255 })),
            device: nullable(Type.String({ maxLength: 255 })),
            os: nullable(Type.String({ maxLength: 255 })),
          }),
        ),
      }),
    ),
    createdAt: nullable(Type.String({ maxLength: 64 })),
    updatedAt: nullable(Type.String({ maxLength: 64 })),
  }),
);

/** PUT, v1 and v2 alike. */
export const UpdateBody = Compile(
  Type.Object({
    finished: nullable(Type.Boolean()),
    data: nullable(Answers),
    endingId: nullable(Text255),
    language: nullable(Language),
    variables: nullable(Variables),
    ttc: nullable(Ttc),
  }),
);
