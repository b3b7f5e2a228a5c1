// Validation of a cdk8s chart in process, with the construct path of each finding's resource: the way a unit test
// of a cdk8s app checks its charts. cdk8s is not imported (the library root loads no cdk8s): charts and API objects
// are recognised by the marks cdk8s itself puts on them.
import { validateManifests, type RuleSelection } from './engine.js';
import type { Finding } from './types.js';

/** cdk8s marks its constructs with these symbols (`Chart.isChart`, `ApiObject.isApiObject`). */
const CHART = Symbol.for('cdk8s.Chart');
const API_OBJECT = Symbol.for('cdk8s.ApiObject');

/** The parts of a cdk8s construct read here: its tree and, for a chart, its rendering. */
export interface ConstructLike {
  readonly node: { readonly path: string; findAll(): readonly unknown[] };
}

interface ApiObjectLike extends ConstructLike {
  readonly kind: string;
  readonly name: string;
  readonly metadata?: { readonly namespace?: string };
}

interface ChartLike extends ConstructLike {
  toJson(): unknown[];
}

function marked(o: unknown, mark: symbol): boolean {
  return typeof o === 'object' && o !== null && mark in o;
}

/**
 * Validates the objects a chart renders (as `Testing.synth(chart)` returns them) and names, in each finding, the
 * construct path of its resource (`constructPath`, e.g. `my-app/logtail/Resource`). Charts nested in it are included;
 * given an `App` (or any construct above charts), validates the objects of every chart below it together, so rules that compare objects across
 * charts see them all. Findings of every severity are returned: assert "no errors" with
 * `expect(errorsOf(validateChart(chart))).toEqual([])`.
 */
export function validateChart(scope: ConstructLike, selection: RuleSelection = {}): Finding[] {
  if (!scope || typeof scope !== 'object' || typeof scope.node?.findAll !== 'function')
    throw new TypeError('validateChart needs a cdk8s Chart or App (a construct), e.g. validateChart(chart)');
  const below = scope.node.findAll();
  // The scope itself when it is a chart (findAll starts with it), and the charts nested below it: each chart renders
  // only its own objects, not those of a chart nested in it.
  const charts = below.filter((c) => marked(c, CHART)) as ChartLike[];
  if (charts.length === 0) throw new TypeError(`validateChart: ${scope.node.path || 'the app'} holds no cdk8s Chart`);
  const objects = charts.flatMap((c) => c.toJson());
  const paths = new Map<string, Array<{ namespace?: string; path: string }>>();
  for (const o of below) {
    if (!marked(o, API_OBJECT)) continue;
    const a = o as ApiObjectLike;
    const key = `${a.kind}\0${a.name}`;
    paths.set(key, [...(paths.get(key) ?? []), { namespace: a.metadata?.namespace, path: a.node.path }]);
  }
  return validateManifests(objects, selection).map((f) => {
    const p = constructPathOf(paths.get(`${f.resource.kind}\0${f.resource.name}`), f.resource.namespace);
    return p === undefined ? f : { ...f, constructPath: p };
  });
}

/** The one construct of that kind and name, or the one of them in the finding's namespace. */
function constructPathOf(
  candidates: Array<{ namespace?: string; path: string }> | undefined,
  namespace: string | undefined,
): string | undefined {
  if (!candidates) return undefined;
  if (candidates.length === 1) return candidates[0]!.path;
  const inNamespace = candidates.filter((c) => c.namespace === namespace);
  return inNamespace.length === 1 ? inNamespace[0]!.path : undefined;
}

/**
 * The findings that fail a synth (severity `error`), without warnings and notes: the one-liner for a test is
 * `expect(errorsOf(validateChart(chart))).toEqual([])`, which shows the errors when it fails.
 */
export function errorsOf(findings: readonly Finding[]): Finding[] {
  return findings.filter((f) => f.severity === 'error');
}
