/** A small CloudFormation evaluator and readers of a packaged template's resources, for template tests. */
import { expect } from 'vitest';
import { METRICS } from '../../lib/metrics/metrics.ts';

export interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  Condition?: string;
  DependsOn?: string[];
}
export interface Template {
  Resources: Record<string, Resource>;
  Conditions?: Record<string, unknown>;
}
export type Resources = Record<string, Resource>;

const NO_VALUE = Symbol('AWS::NoValue');

/**
 * The template as CloudFormation deploys it: each resource whose `Condition` is false left
 * out, each `Fn::If` replaced by the branch its condition picks, each `AWS::NoValue` removed.
 * The conditions compare literals only (stage parameters), so they are evaluated here.
 */
export function deployedResources(template: Template): Resources {
  const conditions = template.Conditions ?? {};
  const scalar = (value: unknown) => {
    if (typeof value === 'object' && value !== null)
      throw new Error(`not a literal: ${JSON.stringify(value)}`);
    return String(value);
  };
  const holds = (condition: unknown): boolean => {
    const [[fn, args] = []] = Object.entries(condition as Record<string, unknown[]>);
    if (fn === 'Fn::Equals') return scalar(args?.[0]) === scalar(args?.[1]);
    if (fn === 'Fn::Not') return !holds(args?.[0]);
    if (fn === 'Fn::And') return (args ?? []).every(holds);
    if (fn === 'Fn::Or') return (args ?? []).some(holds);
    if (fn === 'Condition') return holds(conditions[String(args)]);
    throw new Error(`cannot evaluate condition ${JSON.stringify(condition)}`);
  };
  const named = (name: unknown) => {
    if (!(String(name) in conditions)) throw new Error(`no condition ${String(name)}`);
    return holds(conditions[String(name)]);
  };
  const resolve = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(resolve).filter((item) => item !== NO_VALUE);
    if (typeof node !== 'object' || node === null) return node;
    const entries = Object.entries(node);
    if (entries.length === 1 && entries[0]?.[0] === 'Fn::If') {
      const [name, then, otherwise] = entries[0][1] as unknown[];
      return resolve(named(name) ? then : otherwise);
    }
    if (entries.length === 1 && entries[0]?.[0] === 'Ref' && entries[0][1] === 'AWS::NoValue')
      return NO_VALUE;
    return Object.fromEntries(
      entries.map(([key, value]) => [key, resolve(value)]).filter(([, value]) => value !== NO_VALUE),
    );
  };
  return Object.fromEntries(
    Object.entries(template.Resources)
      .filter(([, resource]) => resource.Condition === undefined || named(resource.Condition))
      .map(([id, resource]) => [id, resolve(resource) as Resource]),
  );
}

/** The value of a template condition built from literal strings only (Fn::Equals, Fn::And, Condition). */
export function evaluateCondition(conditions: Record<string, unknown>, node: unknown): boolean {
  const n = node as Record<string, unknown[] | string>;
  if (typeof n.Condition === 'string') return evaluateCondition(conditions, conditions[n.Condition]);
  if (Array.isArray(n['Fn::Equals'])) {
    const [a, b] = n['Fn::Equals'];
    if (typeof a !== 'string' || typeof b !== 'string') throw new Error(`not literal strings: ${a}, ${b}`);
    return a === b;
  }
  if (Array.isArray(n['Fn::And'])) return n['Fn::And'].every((part) => evaluateCondition(conditions, part));
  throw new Error(`unexpected condition ${JSON.stringify(node)}`);
}

/** An intrinsic as text: a `Fn::Join` of strings, `Ref`s (`<Name>`) and `Fn::GetAtt`s (`<Name.Attr>`). */
export function joined(value: unknown): string {
  if (typeof value === 'string') return value;
  const node = value as { Ref?: string; 'Fn::GetAtt'?: string[]; 'Fn::Join'?: [string, unknown[]] };
  if (node.Ref !== undefined) return `<${node.Ref}>`;
  if (node['Fn::GetAtt'] !== undefined) return `<${node['Fn::GetAtt'].join('.')}>`;
  if (node['Fn::Join'] !== undefined) return node['Fn::Join'][1].map(joined).join(node['Fn::Join'][0]);
  throw new Error(`cannot read ${JSON.stringify(value)}`);
}

export const resourcesOfType = (from: Resources, type: string) =>
  Object.entries(from).filter(([, r]) => r.Type === type);

/** A function's environment variables. */
export const environmentOf = (from: Resources, id: string): Record<string, unknown> => {
  const environment = from[id]?.Properties.Environment as { Variables?: Record<string, unknown> } | undefined;
  return environment?.Variables ?? {};
};

/** The path of an API Gateway resource (`{ Ref: id }`), from its parents' path parts. */
export function pathOf(from: Resources, resourceId: unknown): string {
  const id = (resourceId as { Ref?: string }).Ref;
  const resource = id === undefined ? undefined : from[id];
  if (resource === undefined) return '';
  return `${pathOf(from, resource.Properties.ParentId)}/${String(resource.Properties.PathPart)}`;
}

/** The stage settings on the framework's Deployment (infra/stage-throttling.cjs, stage-logging.cjs add them). */
export function stageOf(from: Resources): Record<string, unknown> {
  const deployments = resourcesOfType(from, 'AWS::ApiGateway::Deployment');
  expect(deployments).toHaveLength(1);
  return (deployments[0]?.[1].Properties.StageDescription ?? {}) as Record<string, unknown>;
}

export type Statement = { Effect: string; Action: string[]; Resource: unknown[]; Condition?: unknown };
/** Every statement of a role's inline policies. */
export const statementsOf = (from: Resources, roleId: string): Statement[] => {
  const policies = from[roleId]?.Properties.Policies as { PolicyDocument: { Statement: Statement[] } }[];
  return policies.flatMap((policy) => policy.PolicyDocument.Statement);
};
/** The id of a function's role. */
export const roleOf = (from: Resources, fn: string) => {
  const role = from[fn]?.Properties.Role as { 'Fn::GetAtt'?: [string, string] } | undefined;
  return role?.['Fn::GetAtt']?.[0] ?? '';
};

export interface MetricRef {
  Namespace: string;
  MetricName: string;
  Dimensions?: { Name: string; Value: unknown }[];
}
/** The metrics an alarm reads: its own, or each MetricStat of its metric math. */
export const alarmMetricStats = (from: Resources, id: string): MetricRef[] => {
  const properties = from[id]?.Properties as unknown as MetricRef & {
    Metrics?: { MetricStat?: { Metric: MetricRef } }[];
  };
  if (properties.Metrics === undefined) return [properties];
  return properties.Metrics.flatMap((metric) => (metric.MetricStat ? [metric.MetricStat.Metric] : []));
};
export const dimensionsOf = (dimensions: MetricRef['Dimensions'] = []) =>
  Object.fromEntries(dimensions.map(({ Name, Value }) => [Name, String(Value)]));
/** `namespace Name{dimension=value}` of an alarm's metrics, the service and stage dimensions left out. */
export const alarmedMetrics = (from: Resources, id: string) =>
  alarmMetricStats(from, id).map((metric) => {
    const { service: _service, stage: _stage, ...own } = dimensionsOf(metric.Dimensions);
    const labels = Object.entries(own).map(([name, value]) => `${name}=${value}`);
    return `${metric.Namespace} ${metric.MetricName}${labels.length === 0 ? '' : `{${labels.join(',')}}`}`;
  });

/** A widget's metric lines: `[namespace, name, dimension, value, …, options?]` or `[{ expression }]`. */
export type MetricLine = (string | Record<string, unknown>)[];
export interface Widget {
  type: string;
  x: number;
  y: number;
  width: number;
  height: number;
  properties: { title?: string; metrics?: MetricLine[]; alarms?: string[]; stat?: string };
}

/**
 * The dashboard's widgets, the body's `${…}` substitutions (CloudFormation's Fn::Sub) kept as
 * their names, and the names themselves: the JSON must parse with them in place.
 */
export function dashboardOf(source: Resources, name: string) {
  const dashboards = Object.values(source).filter((r) => r.Type === 'AWS::CloudWatch::Dashboard');
  expect(dashboards).toHaveLength(1);
  const [dashboard] = dashboards;
  expect(dashboard?.Properties.DashboardName).toBe(name);
  const body = (dashboard?.Properties.DashboardBody as { 'Fn::Sub'?: string } | undefined)?.['Fn::Sub'] ?? '';
  const substitutions = [...body.matchAll(/\$\{([^}]+)\}/g)].map((match) => match[1] ?? '');
  const widgets = (JSON.parse(body) as { widgets: Widget[] }).widgets;
  return { widgets, substitutions };
}

export interface ParsedMetric {
  namespace: string;
  name: string;
  dimensions: Record<string, string>;
  options: Record<string, unknown>;
}
export const parseLine = (
  line: MetricLine,
): ParsedMetric | { expression: string; options: Record<string, unknown> } => {
  const last = line.at(-1);
  const options = typeof last === 'object' ? (last as Record<string, unknown>) : {};
  if (typeof options.expression === 'string') return { expression: options.expression, options };
  const [namespace, name, ...rest] = line.filter((part): part is string => typeof part === 'string');
  const dimensions: Record<string, string> = {};
  for (let i = 0; i + 1 < rest.length; i += 2) dimensions[rest[i] ?? ''] = rest[i + 1] ?? '';
  return { namespace: namespace ?? '', name: name ?? '', dimensions, options };
};
/** Every metric line of the widgets (metric math left out), with the widget it is on. */
export const metricsOfWidgets = (widgets: Widget[]) =>
  widgets.flatMap((widget) =>
    (widget.properties.metrics ?? []).map(parseLine).flatMap((m) => ('name' in m ? [{ ...m, widget }] : [])),
  );

interface ByteMatch {
  SearchString: string;
  PositionalConstraint: 'CONTAINS' | 'ENDS_WITH' | 'EXACTLY' | 'STARTS_WITH';
}
/** Whether a WAF scope-down statement of byte matches on the URI path matches `path`. */
export function matchesPath(statement: Record<string, unknown>, path: string): boolean {
  const or = statement.OrStatement as { Statements: Record<string, unknown>[] } | undefined;
  if (or !== undefined) return or.Statements.some((part) => matchesPath(part, path));
  const match = statement.ByteMatchStatement as ByteMatch;
  const search = match.SearchString;
  switch (match.PositionalConstraint) {
    case 'CONTAINS':
      return path.includes(search);
    case 'ENDS_WITH':
      return path.endsWith(search);
    case 'STARTS_WITH':
      return path.startsWith(search);
    default:
      return path === search;
  }
}

/**
 * A metric of the service's own namespace, as the functions write it (lib/metrics): a name
 * of the catalogue, the service and this stage as dimensions, and each of the metric's own
 * dimensions with one of its values.
 */
export function expectServiceMetric(
  name: string,
  dimensions: Record<string, string>,
  where: string,
  stage = 'prod',
) {
  expect(Object.keys(METRICS), where).toContain(name);
  const own = METRICS[name as keyof typeof METRICS] as Record<string, readonly string[]>;
  expect(Object.keys(dimensions).sort(), `${where}: ${name}`).toEqual(
    ['service', 'stage', ...Object.keys(own)].sort(),
  );
  expect(dimensions, `${where}: ${name}`).toMatchObject({ service: 'parcel-auth', stage });
  for (const [dimension, values] of Object.entries(own)) {
    expect(values, `${where}: ${name} ${dimension}`).toContain(dimensions[dimension]);
  }
}

export function expectDashboardMetricsExist(source: Resources, widgets: Widget[], stage: string) {
  const webAcl = source.WebAcl?.Properties as { Name: string; Rules: unknown[] } | undefined;
  const ruleNames = JSON.stringify(webAcl?.Rules ?? []);
  for (const metric of metricsOfWidgets(widgets)) {
    const where = `${metric.widget.properties.title}: ${metric.namespace} ${metric.name}`;
    const ref = (value: string | undefined) => /^\$\{(\w+)\}$/.exec(value ?? '')?.[1] ?? '';
    switch (metric.namespace) {
      case 'parcel-auth':
        expectServiceMetric(metric.name, metric.dimensions, where, stage);
        break;
      case 'AWS/Lambda':
        expect(source[ref(metric.dimensions.FunctionName)]?.Type, where).toBe('AWS::Lambda::Function');
        break;
      case 'AWS/DynamoDB':
        expect(source[ref(metric.dimensions.TableName)]?.Type, where).toBe('AWS::DynamoDB::Table');
        break;
      case 'AWS/ApiGateway':
        expect(metric.dimensions, where).toEqual({ ApiName: `${stage}-parcel-auth`, Stage: stage });
        break;
      case 'AWS/WAFV2':
        expect(metric.dimensions.WebACL, where).toBe(`parcel-auth-${stage}`);
        expect(ruleNames, where).toContain(`"MetricName":"${metric.dimensions.Rule}"`);
        break;
      default:
        throw new Error(`unexpected namespace in ${where}`);
    }
  }
  // Metric math uses only ids defined in its widget.
  for (const widget of widgets) {
    const lines = (widget.properties.metrics ?? []).map(parseLine);
    const ids = new Set(lines.map((line) => line.options.id).filter((id) => typeof id === 'string'));
    for (const line of lines) {
      if (!('expression' in line)) continue;
      for (const id of line.expression.match(/\b[a-z]\w*\b/g) ?? [])
        expect(ids, widget.properties.title).toContain(id);
    }
  }
}
