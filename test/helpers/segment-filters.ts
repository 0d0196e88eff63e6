// Formbricks segment filter items (docs/segments.md, "Filters"), as a management client writes
// them: one builder per filter type, each item with fresh ids. Shared by the evaluator's unit tests
// and the tests that send filters over HTTP.
type Connector = 'and' | 'or' | null;

let n = 0;
const id = () => `f${++n}`;

function item<R extends Record<string, unknown>>(resource: R, connector: Connector) {
  return { id: id(), connector, resource: { id: id(), ...resource } };
}

export const attr = (key: string, operator: string, value: unknown, connector: Connector = null) =>
  item({ root: { type: 'attribute', contactAttributeKey: key }, qualifier: { operator }, value }, connector);

export const device = (value: string, connector: Connector = null, operator = 'equals') =>
  item({ root: { type: 'device', deviceType: value }, qualifier: { operator }, value }, connector);

/** A person filter (only `userId` means anything, spec §2.5). */
export const person = (identifier: string, operator: string, value: unknown, connector: Connector = null) =>
  item({ root: { type: 'person', personIdentifier: identifier }, qualifier: { operator }, value }, connector);

export const inSegment = (segmentId: string, operator = 'userIsIn', connector: Connector = null) =>
  item({ root: { type: 'segment', segmentId }, qualifier: { operator }, value: segmentId }, connector);

export const interaction = (operator: string, surveyIds: string[], amount: number, unit = 'days') =>
  item(
    {
      root: { type: 'surveyInteraction' },
      qualifier: { operator },
      value: { surveyScope: surveyIds.length ? 'specific' : 'any', surveyIds, within: { amount, unit } },
    },
    null,
  );

export const group = (items: unknown[], connector: Connector = null) => ({
  id: id(),
  connector,
  resource: items,
});
