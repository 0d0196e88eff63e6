// What the dashboard and the alert rules ask Prometheus: their expressions, and the series selectors
// (metric name and label matchers) in each, read with a small PromQL scanner that knows the
// expressions Chorus writes (no string literals outside label matchers, no `@` modifiers).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RulesFile {
  groups: { name: string; rules: AlertRule[] }[];
}

export function readRules(file: string): RulesFile {
  return parse(readFileSync(file, 'utf8')) as RulesFile;
}

/** The Grafana variables in a query, as a query of the dashboard's own runs them. */
const VARIABLES: Record<string, string> = {
  job: '.+', // "All"
  __rate_interval: '1m',
  __interval: '15s',
  __range: '1h',
};

/** Every query of a Grafana dashboard (its panels' and its query variables'), variables replaced. */
export function dashboardQueries(file: string): { where: string; expr: string }[] {
  interface Panel {
    title?: string;
    targets?: { expr?: string; refId?: string }[];
    panels?: Panel[];
  }
  const dashboard = JSON.parse(readFileSync(file, 'utf8')) as {
    panels: Panel[];
    templating?: { list: { name: string; type: string; query?: string | { query?: string } }[] };
  };
  const queries: { where: string; expr: string }[] = [];
  const visit = (panel: Panel) => {
    for (const target of panel.targets ?? [])
      if (target.expr) queries.push({ where: `${panel.title} ${target.refId}`, expr: target.expr });
    panel.panels?.forEach(visit);
  };
  dashboard.panels.forEach(visit);
  for (const variable of dashboard.templating?.list ?? []) {
    if (variable.type !== 'query') continue;
    const query = typeof variable.query === 'string' ? variable.query : variable.query?.query;
    // label_values(<selector>, <label>): the selector is the series it reads.
    const selector = /^label_values\((.+),\s*\w+\)$/.exec(query ?? '')?.[1];
    if (selector) queries.push({ where: `variable ${variable.name}`, expr: selector });
  }
  return queries.map(({ where, expr }) => ({
    where,
    expr: expr.replace(/\$\{?(\w+)\}?/g, (whole, name: string) => VARIABLES[name] ?? whole),
  }));
}

const NOT_SELECTORS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool']);
/** Aggregations, which may stand before their `by (…)` rather than their parenthesis. */
const AGGREGATIONS = new Set(
  ['sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values'].concat([
    'bottomk',
    'topk',
    'quantile',
  ]),
);
const SET_OPERATORS = new Set(['and', 'or', 'unless']);

/** The series selectors of a PromQL expression: `name` or `name{matchers}`, as written. */
export function selectorsOf(expr: string): string[] {
  const plain = expr
    .replace(/\[[^\]]*\]/g, '') // range and subquery durations
    .replace(/\boffset\s+\w+/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '$1'); // label lists
  const selectors: string[] = [];
  for (const match of plain.matchAll(/(?<![\w.:])([A-Za-z_:][\w:]*)\s*(\{[^}]*\})?(\s*\()?/g)) {
    const [, name, matchers, call] = match;
    if (call || NOT_SELECTORS.has(name!) || SET_OPERATORS.has(name!) || AGGREGATIONS.has(name!)) continue;
    selectors.push(`${name}${matchers ? matchers.replace(/\s+/g, ' ') : ''}`);
  }
  return selectors;
}

export const metricOf = (selector: string) => /^[\w:]+/.exec(selector)![0];

/** `docs/x.md#anchor` → whether the Markdown file has a heading with that GitHub anchor. */
export function anchorExists(root: string, link: string): boolean {
  const [file, anchor] = link.split('#');
  if (!file || !anchor) return false;
  const headings = readFileSync(path.join(root, file), 'utf8')
    .split('\n')
    .filter((line) => /^#{1,6} /.test(line))
    .map((line) =>
      line
        .replace(/^#+ /, '')
        .trim()
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replace(/ /g, '-'),
    );
  return headings.includes(anchor);
}
