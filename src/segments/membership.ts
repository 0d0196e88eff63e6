// Which segments a contact is in, as the user route lists them (spec §3.2), from stored membership
// where it holds and by evaluation where it cannot (docs/segments.md, "Membership").
//
// Stored membership covers the segments whose result depends only on the contact's attributes
// (store/segment-members.ts keeps it, in the transaction that changes the attributes or the
// segments). It is valid for the attributes it was computed from, named by their digest: the user
// route answers an identify before the contact processor has applied it, so when the sent
// attributes changed the contact, the digests differ and those segments are evaluated for the
// merged contact instead. Segments that read the device, the clock or the contact's history are
// always evaluated here.
import { createHash } from 'node:crypto';
import type { DeviceType } from './filters.ts';
import {
  hasFilters,
  isMember,
  requestDependentIds,
  type InteractionHistory,
  type KeyType,
  type SegmentDefinition,
} from './evaluate.ts';

/** A digest of a contact's attributes, key order ignored: what stored membership was computed from. */
export function attributesDigest(attributes: Readonly<Record<string, string>>): string {
  const sorted = Object.keys(attributes)
    .sort()
    .map((key) => [key, attributes[key]]);
  return createHash('sha256').update(JSON.stringify(sorted)).digest('base64url').slice(0, 22);
}

/**
 * An environment's segments as the evaluator reads them, in creation order, with what is derived
 * from them once (environmentSegments), not at each identify.
 */
export interface EnvironmentSegments {
  segments: readonly SegmentDefinition[];
  keyTypes: ReadonlyMap<string, KeyType>;
  byId: ReadonlyMap<string, SegmentDefinition>;
  /** The segments evaluated at each request (evaluate.ts, requestDependentIds). */
  requestDependent: ReadonlySet<string>;
  /** The segments whose membership is stored: with filters, and not request-dependent. */
  stored: readonly SegmentDefinition[];
}

export function environmentSegments(
  segments: readonly SegmentDefinition[],
  keyTypes: ReadonlyMap<string, KeyType>,
): EnvironmentSegments {
  const byId = new Map(segments.map((s) => [s.id, s]));
  const requestDependent = requestDependentIds(byId);
  const stored = segments.filter((s) => hasFilters(s) && !requestDependent.has(s.id));
  return { segments, keyTypes, byId, requestDependent, stored };
}

/** A contact's stored membership: the segments it is in, for the attributes of `digest`. */
export interface StoredMembership {
  digest: string;
  segmentIds: ReadonlySet<string>;
}

/**
 * Which of the stored segments each contact's attributes are in, by contact (a segment that cannot
 * be evaluated counts them out); empty when the environment has no segment to store.
 */
export function membersOfStored(
  env: EnvironmentSegments,
  contacts: readonly { id: string; attributes: Readonly<Record<string, string>> }[],
  now: Date,
): Map<string, string[]> {
  if (env.stored.length === 0) return new Map();
  const segments = env.byId;
  return new Map(
    contacts.map(({ id, attributes }) => [
      id,
      env.stored
        .filter((s) => safely(() => isMember(s, { attributes, keyTypes: env.keyTypes, segments, now })))
        .map((s) => s.id),
    ]),
  );
}

/**
 * The segment ids of a contact for the user route: every segment without filters first (everyone
 * is in those, spec §3.2 step 4), then those it is in, in creation order.
 */
export function segmentIdsOf(input: {
  env: EnvironmentSegments;
  attributes: Readonly<Record<string, string>>;
  stored: StoredMembership | undefined;
  device: DeviceType | undefined;
  /** The contact's displays and responses; needed only when some segment is request-dependent. */
  history: InteractionHistory | undefined;
  now: Date;
}): string[] {
  const { env, attributes } = input;
  const storedHolds = input.stored !== undefined && input.stored.digest === attributesDigest(attributes);
  const everyone = env.segments.filter((s) => !hasFilters(s)).map((s) => s.id);
  const members = env.segments.filter((segment) => {
    if (!hasFilters(segment)) return false;
    if (storedHolds && !env.requestDependent.has(segment.id)) return input.stored!.segmentIds.has(segment.id);
    return safely(() =>
      isMember(segment, {
        attributes,
        keyTypes: env.keyTypes,
        segments: env.byId,
        device: input.device,
        now: input.now,
        history: input.history,
      }),
    );
  });
  return [...everyone, ...members.map((s) => s.id)];
}

/** Spec §3.2 step 5: a segment that cannot be evaluated affects only itself (not a member). */
function safely(evaluate: () => boolean): boolean {
  try {
    return evaluate();
  } catch {
    return false;
  }
}
