/**
 * Which app features one object uses, found by walking it against the classification in the feature table
 * (`src/contracts/features.ts`): its kind, its field paths, and the Kruise annotations, labels and env keys in it; and
 * what that means for a target runtime (what it does not carry out, and what to do instead). The install (synth
 * warnings, gate, daemon and webhook inference), the policy rules and the runtime's validating webhook all use this
 * one walker, so they cannot disagree about what an object uses.
 *
 * @module
 */
import {
  ANNOTATION_FEATURES,
  AppFeature,
  BUNDLED_KINDS,
  ENV_FEATURES,
  FEATURES,
  fieldTableOf,
  INERT,
  KIND_ANNOTATION_FEATURES,
  KIND_FEATURES,
  kindFeatureOf,
  LABEL_FEATURES,
  type FieldTable,
  type PartClass,
  type RuntimeName,
} from '../contracts/features.js';
import { groupOf, KRUISE_API_VERSION } from '../contracts/groups.js';

/** One place an object uses a feature. */
export interface FeatureUseAt {
  readonly feature: AppFeature;
  /** JSON pointer inside the object to the part that uses the feature (`""`: the object, by its kind). */
  readonly pointer: string;
}

type Resolved = AppFeature | typeof INERT;

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function escapePointer(segment: string | number): string {
  return String(segment).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** What a classification says about one value: its feature, INERT, or nothing (a condition the value does not meet). */
function resolve(cls: PartClass | undefined, value: unknown): Resolved | undefined {
  if (cls === undefined) return undefined;
  if (typeof cls === 'object') return cls.when(value) ? cls.feature : undefined;
  return cls;
}

// ─── Field paths ────────────────────────────────────────────────────────────────────────────────────────────────

interface TrieNode {
  rule?: PartClass;
  subtree: boolean;
  readonly children: Map<string, TrieNode>;
}

/** `spec.containers[].x` → `['spec', 'containers', '[]', 'x']`; a trailing `.**` marks a subtree. */
export function parseFieldPath(path: string): { readonly segments: string[]; readonly subtree: boolean } {
  const parts = path === '' ? [] : path.split('.');
  const subtree = parts[parts.length - 1] === '**';
  if (subtree) parts.pop();
  const segments: string[] = [];
  for (let part of parts) {
    let items = 0;
    while (part.endsWith('[]')) {
      part = part.slice(0, -2);
      items++;
    }
    if (part) segments.push(part);
    for (let i = 0; i < items; i++) segments.push('[]');
  }
  return { segments, subtree };
}

const TRIES = new WeakMap<FieldTable, TrieNode>();

function trieOf(table: FieldTable): TrieNode {
  let root = TRIES.get(table);
  if (root) return root;
  root = { subtree: false, children: new Map() };
  for (const [path, rule] of Object.entries(table)) {
    const { segments, subtree } = parseFieldPath(path);
    let node = root;
    for (const s of segments) {
      let next = node.children.get(s);
      if (!next) node.children.set(s, (next = { subtree: false, children: new Map() }));
      node = next;
    }
    node.rule = rule;
    node.subtree = subtree;
  }
  TRIES.set(table, root);
  return root;
}

/**
 * How `table` classifies the schema node at `path` (no `.**`): its own entry, or the subtree entry of the nearest
 * ancestor that has one; undefined when neither exists (the node is unclassified).
 */
export function classifyFieldPath(table: FieldTable, path: string): PartClass | undefined {
  let node: TrieNode | undefined = trieOf(table);
  let covering: PartClass | undefined;
  for (const s of parseFieldPath(path).segments) {
    if (node.subtree) covering = node.rule;
    node = node.children.get(s);
    if (!node) return covering;
  }
  return node.rule ?? covering;
}

/**
 * Walks `value` along the trie. A part whose own classification differs from what it inherits starts a use; a
 * subtree, or a part the table does not go into, belongs wholly to what it resolved to.
 */
function walkFields(
  value: unknown,
  node: TrieNode,
  inherited: Resolved,
  path: (string | number)[],
  add: (f: AppFeature, pointer: string) => void,
): void {
  const own = resolve(node.rule, value);
  const cls = own ?? inherited;
  if (cls !== inherited && cls !== INERT) add(cls, pointerOf(path));
  if (node.subtree || node.children.size === 0) return;
  if (Array.isArray(value)) {
    const items = node.children.get('[]');
    if (!items) return;
    for (let i = 0; i < value.length; i++) {
      path.push(i);
      walkFields(value[i], items, cls, path, add);
      path.pop();
    }
    return;
  }
  if (!isRecord(value)) return;
  const anyKey = node.children.get('*');
  for (const key in value) {
    // `[]` names array items in the trie, never an object key.
    const child = (key === '[]' ? undefined : node.children.get(key)) ?? anyKey;
    if (!child) continue;
    path.push(key);
    walkFields(value[key], child, cls, path, add);
    path.pop();
  }
}

function pointerOf(path: readonly (string | number)[]): string {
  return path.length ? `/${path.map(escapePointer).join('/')}` : '';
}

// ─── Keys: annotations, labels, env ─────────────────────────────────────────────────────────────────────────────

/**
 * Visits annotation maps and container env at any depth (pod templates nested in Jobs, CronJobs, CloneSets,
 * SidecarSet containers and patchPodMetadata are all seen) and the object's own labels. The path is kept as a stack
 * and turned into a JSON pointer only on a hit: most of a manifest is scalars. `own` classifies the object's own
 * annotations where its kind gives them another meaning (KIND_ANNOTATION_FEATURES).
 */
function scanKeys(
  obj: Record<string, unknown>,
  add: (f: AppFeature, pointer: string) => void,
  own: Readonly<Record<string, PartClass>> | undefined,
): void {
  const labels = isRecord(obj.metadata) && isRecord(obj.metadata.labels) ? obj.metadata.labels : undefined;
  if (labels) {
    for (const key in labels) {
      const f = resolve(LABEL_FEATURES[key], labels[key]);
      if (f !== undefined && f !== INERT) add(f, `/metadata/labels/${escapePointer(key)}`);
    }
  }
  const path: (string | number)[] = [];
  const at = (...more: (string | number)[]) => pointerOf([...path, ...more]);
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const v: unknown = value[i];
        if (typeof v !== 'object' || v === null) continue;
        path.push(i);
        visit(v);
        path.pop();
      }
      return;
    }
    if (!isRecord(value)) return;
    for (const key in value) {
      const v = value[key];
      if (typeof v !== 'object' || v === null) continue;
      // Status is written by controllers, never by the app.
      if (key === 'status' && path.length === 0) continue;
      if ((key === 'containers' || key === 'initContainers') && Array.isArray(v)) {
        v.forEach((c, i) => scanEnv(c, at(key, i), add));
      } else if (key === 'annotations' && isRecord(v)) {
        const mine = own && path.length === 1 && path[0] === 'metadata' ? own : undefined;
        for (const k in v) {
          const f = resolve(mine && k in mine ? mine[k] : ANNOTATION_FEATURES[k], v[k]);
          if (f !== undefined && f !== INERT) add(f, at(key, k));
        }
        continue;
      }
      path.push(key);
      visit(v);
      path.pop();
    }
  };
  visit(obj);
}

function scanEnv(c: unknown, pointer: string, add: (f: AppFeature, pointer: string) => void): void {
  if (!isRecord(c) || !Array.isArray(c.env)) return;
  c.env.forEach((e, i) => {
    if (!isRecord(e) || typeof e.name !== 'string') return;
    const f = resolve(ENV_FEATURES[e.name], typeof e.value === 'string' ? e.value : undefined);
    if (f !== undefined && f !== INERT) add(f, `${pointer}/env/${i}`);
  });
}

/**
 * In-place update of a container whose env reads pod labels or annotations: a property of the pod template and the
 * update strategy together, so no single path or key says it.
 */
function detectInPlaceEnvFromMetadata(obj: Record<string, unknown>, add: (f: AppFeature, pointer: string) => void): void {
  const spec = isRecord(obj.spec) ? obj.spec : undefined;
  const strategy = isRecord(spec?.updateStrategy) ? spec.updateStrategy : undefined;
  // CloneSet keeps the type in updateStrategy.type; Advanced StatefulSet in rollingUpdate.podUpdatePolicy.
  const type = strategy?.type;
  const podUpdatePolicy = isRecord(strategy?.rollingUpdate) ? strategy.rollingUpdate.podUpdatePolicy : undefined;
  if (![type, podUpdatePolicy].some((t) => t === 'InPlaceIfPossible' || t === 'InPlaceOnly')) return;
  const template = isRecord(spec?.template) ? spec.template : undefined;
  const podSpec = isRecord(template?.spec) ? template.spec : undefined;
  const containers = Array.isArray(podSpec?.containers) ? podSpec.containers : [];
  containers.forEach((c, ci) => {
    if (!isRecord(c) || !Array.isArray(c.env)) return;
    c.env.forEach((e, ei) => {
      const fieldPath = isRecord(e) && isRecord(e.valueFrom) && isRecord(e.valueFrom.fieldRef) ? e.valueFrom.fieldRef.fieldPath : undefined;
      if (typeof fieldPath === 'string' && /^metadata\.(labels|annotations)\[/.test(fieldPath)) {
        add(AppFeature.INPLACE_UPDATE_ENV_FROM_METADATA, `/spec/template/spec/containers/${ci}/env/${ei}/valueFrom/fieldRef/fieldPath`);
      }
    });
  });
}

/** Every feature `obj` uses, with a JSON pointer to where each use starts. */
export function featureUsesIn(obj: Record<string, unknown>): FeatureUseAt[] {
  const { apiVersion, kind } = obj;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return [];
  const uses: FeatureUseAt[] = [];
  const add = (feature: AppFeature, pointer: string) => uses.push({ feature, pointer });
  const kindFeature = kindFeatureOf(apiVersion, kind);
  if (kindFeature) add(kindFeature, '');
  const table = fieldTableOf(apiVersion, kind);
  if (table) walkFields(obj, trieOf(table), kindFeature ?? INERT, [], add);
  if (kindFeature === AppFeature.CLONESET || kindFeature === AppFeature.ADVANCED_STATEFULSET) detectInPlaceEnvFromMetadata(obj, add);
  scanKeys(obj, add, KIND_ANNOTATION_FEATURES[`${groupOf(apiVersion)}/${kind}`]);
  return uses;
}

// ─── What a use means for a target runtime ──────────────────────────────────────────────────────────────────────

/** Rule ids under which the policy engine and the runtime's validating webhook report unsupported uses. */
export const RUNTIME_SUPPORT_RULE_IDS = Object.freeze({
  /** A use the target runtime does not carry out (or that no runtime does): a warning. */
  unsupported: 'KRUISE-RUNTIME-001',
});

/** Extra advice for features that have a compile-time alternative to a runtime. */
const ALTERNATIVES: Partial<Record<AppFeature, string>> = {
  [AppFeature.CONTAINER_EXIT_PRIORITY]:
    'Compile it to native sidecars instead (context cdk8s-kruise:kubernetesVersion >= 1.29), which the kubelet orders itself.',
};

/** Advice for features no runtime carries out, where "nothing acts on them" would understate what happens. */
const NO_RUNTIME_ADVICE: Partial<Record<AppFeature, string>> = {};

/** What upstream OpenKruise would do with a use only the bundled runtime carries out, where "ignores it" understates it. */
const UPSTREAM_OUTCOME: Partial<Record<AppFeature, string>> = {
  [AppFeature.ENHANCED_LIVENESS_PROBE]:
    "Upstream OpenKruise's pod webhook (gate EnhancedLivenessProbe) would remove the containers' liveness probes from the pod and " +
    'nothing would restart a container whose probe fails: the pods would run with no liveness checking at all. Use target bundled ' +
    "(the cdk8s-kruise runtime runs the probes and restarts within the pod's disruption budget), or drop the annotation to keep " +
    "the kubelet's liveness probes.",
  [AppFeature.DAEMONSET_PRENORMAL_INPLACE_HOOKS]:
    "Upstream OpenKruise's DaemonSet webhook refuses an inPlaceUpdate hook, and its controller ignores preNormal (a new pod " +
    'counts as available without waiting for the hook). Use target bundled (the cdk8s-kruise runtime holds the pods in both hooks ' +
    'as it does for a CloneSet), or keep only preDelete, which both runtimes carry out.',
};

const KIND_LEVEL: ReadonlySet<AppFeature> = new Set([...Object.values(KIND_FEATURES), AppFeature.OTHER_KRUISE_KIND]);

/** `A, B and C`. */
function listOf(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** What the bundled runtime serves, for advice on kinds it does not. */
export const BUNDLED_SERVES = `${listOf(BUNDLED_KINDS)} (${KRUISE_API_VERSION})`;

/** One use a target runtime does not carry out: what, and what to do instead. */
export interface SupportJudgement {
  readonly feature: AppFeature;
  readonly pointer: string;
  /** `uses <feature> at <pointer>, which <runtime> does not carry out` (or `which no runtime carries out`). */
  readonly problem: string;
  /** The problem without the pointer, for reports that show the pointer on their own. */
  readonly summary: string;
  /** Names only a runtime that carries the feature out, or says that none does. */
  readonly advice: string;
  /**
   * An error rather than a warning: under the upstream target a feature only the bundled runtime carries out (upstream's
   * webhooks refuse or ignore it). A feature no runtime carries out is a warning under both.
   */
  readonly refused: boolean;
  /** Neither runtime carries the feature out: reported whatever the target. */
  readonly noRuntime: boolean;
}

/** The object a use is in, for advice that names its kind. */
export interface UseSubject {
  readonly apiVersion: string;
  readonly kind: string;
}

/** What `target` makes of `use` in `subject`: undefined when it carries the feature out. */
export function judgeUse(use: FeatureUseAt, target: RuntimeName, subject: UseSubject): SupportJudgement | undefined {
  const { carriedOutBy } = FEATURES[use.feature];
  if (carriedOutBy[target]) return undefined;
  const other: RuntimeName = target === 'bundled' ? 'upstream' : 'bundled';
  const alternative = ALTERNATIVES[use.feature];
  const at = use.pointer ? ` at ${use.pointer}` : '';
  const noRuntime = !carriedOutBy[other];
  let advice: string;
  if (noRuntime) {
    advice =
      NO_RUNTIME_ADVICE[use.feature] ??
      `No runtime carries it out yet, neither the bundled runtime nor upstream OpenKruise: the manifests are emitted, but nothing acts on them.${alternative ? ` ${alternative}` : ''}`;
  } else if (other === 'upstream') {
    advice =
      KIND_LEVEL.has(use.feature) && use.pointer === ''
        ? `The bundled runtime serves ${BUNDLED_SERVES}; upstream OpenKruise ${use.feature === AppFeature.OTHER_KRUISE_KIND ? 'may serve' : 'serves'} ` +
          `${subject.apiVersion} ${subject.kind}: use target openkruise.`
        : 'Use target openkruise (upstream OpenKruise carries it out).';
  } else {
    advice =
      UPSTREAM_OUTCOME[use.feature] ??
      `Use target bundled (the cdk8s-kruise runtime carries it out).${alternative ? ` ${alternative}` : ''}`;
  }
  const refused = !noRuntime && target === 'upstream' && carriedOutBy.bundled;
  const runtime = target === 'upstream' ? 'upstream OpenKruise' : 'this version of the bundled runtime';
  const which = noRuntime ? 'which no runtime carries out' : `which ${runtime} does not carry out`;
  return {
    feature: use.feature,
    pointer: use.pointer,
    problem: `uses ${use.feature}${at}, ${which}`,
    summary: `uses ${use.feature}, ${which}`,
    advice,
    refused,
    noRuntime,
  };
}

/**
 * Drops the judgements of one object that sit inside another of them at least as severe (a StatefulSet field of an
 * Advanced StatefulSet the runtime does not serve at all): the enclosing one already says it.
 */
export function outermost<T extends Pick<SupportJudgement, 'pointer' | 'refused' | 'noRuntime'>>(judgements: readonly T[]): T[] {
  // A use no runtime carries out is only covered by another such use: its advice holds under any target.
  const covers = (y: T, x: T) =>
    y !== x &&
    (y.refused || !x.refused) &&
    (y.noRuntime || !x.noRuntime) &&
    x.pointer !== y.pointer &&
    x.pointer.startsWith(`${y.pointer}/`);
  return judgements.filter((x) => !judgements.some((y) => covers(y, x)));
}

/** True when neither runtime carries `feature` out (reported whatever the target). */
export function noRuntimeCarriesOut(feature: AppFeature): boolean {
  const { bundled, upstream } = FEATURES[feature].carriedOutBy;
  return !bundled && !upstream;
}

/**
 * The uses in `obj` that `target` does not carry out, as AdmissionReview warnings (`<rule> <pointer>: <problem>.
 * Fix: <advice>`): what the runtime's validating webhook answers for an object it admits.
 */
export function unsupportedUseWarnings(obj: Record<string, unknown>, target: RuntimeName): string[] {
  const subject = { apiVersion: String(obj.apiVersion), kind: String(obj.kind) };
  const out: string[] = [];
  const judged = featureUsesIn(obj).flatMap((use) => judgeUse(use, target, subject) ?? []);
  for (const j of outermost(judged)) {
    out.push(`${RUNTIME_SUPPORT_RULE_IDS.unsupported} ${j.pointer || '/'}: ${j.summary}. Fix: ${j.advice}`);
  }
  return out;
}
