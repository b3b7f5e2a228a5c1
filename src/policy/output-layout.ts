import { isMap, parseDocument } from 'yaml';
import { UsageError } from './usage-error.js';
import type { Manifest } from './types.js';
import { OPS_DIR_NAME } from './rules/crr.js';
import { COMMON_LABELS } from '../install/spec.js';
import { KRUISE_API_VERSION, KRUISE_GROUPS, groupOf } from '../contracts/groups.js';
import { KRUISE_KINDS, OPERATION_KINDS } from '../contracts/resources.js';
import {
  MUTATING_WEBHOOK_CONFIGURATION,
  NAMES,
  SIDECARSET_CRD,
  VALIDATING_WEBHOOK_CONFIGURATION,
  WEBHOOK_CERT_SECRET,
} from '../contracts/names.js';
import { ARGOCD_HEALTH_LUA, healthKey } from './argocd-health.js';
import { isPrePullJob, PRE_PULL_ACTIVE_DEADLINE_SECONDS } from './pre-pull.js';

/**
 * The file synth writes into every output directory. Its presence is the proof that synth created the directory,
 * and so may replace it: synth never replaces a directory without it unless that directory is empty.
 */
export const OUTPUT_MARKER = '.cdk8s-kruise-synth';
export const OUTPUT_MARKER_CONTENT =
  'This directory is written by `cdk8s-kruise synth`, which replaces all of it on every run.\n' +
  'Do not keep hand-written files here. Deleting this file stops synth from replacing the directory.\n';

/**
 * Apply phases, in order. Pre-pull holds the ImagePullJobs synth emits for changed images (`--pre-pull`), so the
 * app's rollout finds them on the nodes. Operations are never applied by a sync: they live outside the synced tree.
 */
export enum Phase {
  CRDS = 0,
  RUNTIME = 1,
  PRE_PULL = 2,
  APP = 3,
  OPS = 4,
}

/** The phases a sync applies, in order. */
export const SYNCED_PHASES = [Phase.CRDS, Phase.RUNTIME, Phase.PRE_PULL, Phase.APP] as const;
export type SyncedPhase = (typeof SYNCED_PHASES)[number];

/**
 * Argo CD sync waves per phase: CRDs, then the runtime (webhooks ready), then the app; unannotated objects are wave 0.
 * Pre-pull jobs are Sync hooks of the runtime's wave: Argo CD waits for them (their health check) before wave 0.
 */
export const SYNC_WAVES: Record<SyncedPhase, string> = {
  [Phase.CRDS]: '-2',
  [Phase.RUNTIME]: '-1',
  [Phase.PRE_PULL]: '-1',
  [Phase.APP]: '0',
};
/**
 * Argo CD hook annotations of a pre-pull job: a hook is run by each sync and removed by Argo CD once it succeeded (or
 * before the next sync creates it again), so a job its TTL deleted is not drift that self-heal would re-create.
 */
export const ARGOCD_PRE_PULL_HOOK: Readonly<Record<string, string>> = {
  'argocd.argoproj.io/hook': 'Sync',
  'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation,HookSucceeded',
};
export const SYNC_WAVE_ANNOTATION = 'argocd.argoproj.io/sync-wave';
export const SYNC_OPTIONS_ANNOTATION = 'argocd.argoproj.io/sync-options';
/** Lets Argo CD dry-run a sync whose custom resources' CRDs are created by the same sync. */
export const SKIP_DRY_RUN = 'SkipDryRunOnMissingResource=true';

/**
 * Prune/delete protection on the CRDs. Deleting a CRD deletes every object of its kind, so a sync that stops
 * listing the CRDs (KruiseRuntime removed, the output moved, the Application or Kustomization deleted) would take
 * every CloneSet and its pods with it. Argo CD: neither pruned nor deleted with the Application; Flux: left out of
 * garbage collection. Removing the CRDs is a deliberate `cdk8s-kruise uninstall`.
 */
export const ARGOCD_CRD_PROTECTION = 'Prune=false,Delete=false';
export const FLUX_PRUNE_ANNOTATION = 'kustomize.toolkit.fluxcd.io/prune';
export const FLUX_PRUNE_DISABLED = 'disabled';

/** Who consumes the output: plain kubectl / kustomize, Argo CD, or Flux. */
export const GITOPS_TARGETS = ['plain', 'argocd', 'flux'] as const;
export type GitOpsTarget = (typeof GITOPS_TARGETS)[number];

/** Directory (inside the output) of one-shot operations; no kustomization lists it. */
export const OPS_DIR = OPS_DIR_NAME;
/** Flux layout: one directory per phase, applied in this order by Flux Kustomizations that depend on each other. */
export const FLUX_DIRS: Record<SyncedPhase, string> = {
  [Phase.CRDS]: 'crds',
  [Phase.RUNTIME]: 'runtime',
  [Phase.PRE_PULL]: 'pre-pull',
  [Phase.APP]: 'app',
};
/** Flux layout: the Flux Kustomization objects (outside the three synced directories). */
export const FLUX_FILE = 'flux/kustomizations.yaml';
/** Argo CD: an Application with the ignoreDifferences the runtime's own writes need (outside the synced tree). */
export const ARGOCD_FILE = 'argocd/application.yaml';
/** Argo CD: the argocd-cm entries with the health checks of the Kruise kinds the app uses (outside the synced tree). */
export const ARGOCD_HEALTH_FILE = 'argocd/argocd-cm-health.yaml';
/** The Application's source when none is given: a placeholder the docs say to set (flag, cdk8s.yaml or plugin). */
export const DEFAULT_REPO_URL = 'https://git.example.com/your/repo.git';
export const DEFAULT_TARGET_REVISION = 'HEAD';

export interface SynthDoc {
  /** The chart file cdk8s wrote it to, relative to its output dir (`0001-app.k8s.yaml`). */
  readonly chartFile: string;
  readonly object: Record<string, unknown>;
  /** The document's text exactly as cdk8s wrote it (kept verbatim unless an annotation is added). */
  readonly text: string;
}

/** The documents of parsed cdk8s chart files, each with its chart file and its text as cdk8s wrote it. */
export function synthDocs(manifests: readonly Manifest[]): SynthDoc[] {
  return manifests
    .filter((m) => m.source)
    .map((m) => ({ chartFile: m.source!.file, object: m.object, text: m.source!.fileText.slice(m.source!.start, m.source!.end) }));
}

export function phaseOf(obj: Record<string, unknown>): Phase {
  if (obj.kind === 'CustomResourceDefinition' && String(obj.apiVersion).startsWith('apiextensions.k8s.io/')) return Phase.CRDS;
  const labels = ((obj.metadata as Record<string, unknown> | undefined)?.labels ?? {}) as Record<string, unknown>;
  if (Object.entries(COMMON_LABELS).every(([k, v]) => labels[k] === v)) return Phase.RUNTIME;
  if (isPrePullJob(obj)) return Phase.PRE_PULL;
  if (isOperation(obj)) return Phase.OPS;
  return Phase.APP;
}

/** True for a one-shot operation kind (ContainerRecreateRequest). */
export function isOperation(obj: Record<string, unknown>): boolean {
  return (
    typeof obj.apiVersion === 'string' &&
    KRUISE_GROUPS.has(groupOf(obj.apiVersion)) &&
    OPERATION_KINDS.some((k) => KRUISE_KINDS[k].kind === obj.kind)
  );
}

/**
 * The chart's id from the file name cdk8s gave it: directories joined with `_`, the extension and cdk8s's
 * dependency-order prefix (`0002-`) removed. Output names derive from it alone, so adding, removing or reordering
 * charts renames no other file; only renaming a chart does.
 */
export function chartIdOf(chartFile: string): string {
  return chartFile
    .replace(/\\/g, '/')
    .split('/')
    .map((part) => part.replace(/^\d{4}-/, ''))
    .join('_')
    .replace(/\.k8s\.ya?ml$|\.ya?ml$/i, '');
}

/**
 * Output file of a document: one file for all CRDs, one for the runtime install, one for all pre-pull jobs, one per
 * app chart and per chart's operations.
 */
export function outputFileOf(doc: SynthDoc, phase: Phase, gitops: GitOpsTarget = 'plain'): string {
  const dir = gitops === 'flux' && phase !== Phase.OPS ? `${FLUX_DIRS[phase]}/` : '';
  if (phase === Phase.CRDS) return `${dir}00-crds.yaml`;
  if (phase === Phase.RUNTIME) return `${dir}10-runtime.yaml`;
  if (phase === Phase.PRE_PULL) return `${dir}15-pre-pull.yaml`;
  if (phase === Phase.OPS) return `${OPS_DIR}/${chartIdOf(doc.chartFile)}.yaml`;
  return `${dir}20-app-${chartIdOf(doc.chartFile)}.yaml`;
}

export interface OutputFile {
  /** Path relative to the output directory, `/`-separated. */
  readonly name: string;
  readonly content: string;
  /** For manifest files: the chart file each document came from, in document order. */
  readonly sources?: readonly string[];
}

export interface LayoutOptions {
  readonly syncWaves?: boolean;
  readonly gitops?: GitOpsTarget;
  /** The output directory as a path from the Git repository root (Flux `spec.path`); default `./dist`. */
  readonly repoPath?: string;
  /** Argo CD: the Application's `source.repoURL` (default: a placeholder). */
  readonly repoURL?: string;
  /** Argo CD: the Application's `source.targetRevision` (default HEAD). */
  readonly targetRevision?: string;
  /**
   * Pre-pull is on for some workload. Flux: the pre-pull directory and its Kustomization are written even while no
   * job is due, since the Flux Kustomizations are applied once and must already hold the phase when a job appears.
   */
  readonly prePull?: boolean;
}

/**
 * Lays the synthesized documents out for GitOps: files in apply order (CRDs, runtime, app charts in chart order),
 * each document's text kept byte-for-byte unless an annotation is added, plus kustomization.yaml files listing the
 * files in that order. One-shot operations go to `ops/`, which no kustomization lists. The result depends only on
 * the input, so repeated synths produce identical bytes.
 */
export function layout(docs: readonly SynthDoc[], opts: LayoutOptions = {}): OutputFile[] {
  const gitops = opts.gitops ?? 'plain';
  if (opts.repoURL !== undefined) checkRepoURL(opts.repoURL);
  if (opts.targetRevision !== undefined) checkTargetRevision(opts.targetRevision);
  const syncWaves = opts.syncWaves || gitops === 'argocd';
  // Kinds whose CRD this output creates: under Argo CD their objects skip the dry run (the CRD is not there yet).
  const ownCrdKinds = new Set(
    docs
      .filter((d) => phaseOf(d.object) === Phase.CRDS)
      .map((d) => {
        const spec = (d.object.spec ?? {}) as { group?: string; names?: { kind?: string } };
        return `${spec.group}/${spec.names?.kind}`;
      }),
  );
  const files = new Map<string, { phase: Phase; order: number; texts: string[]; sources: string[]; chart: string }>();
  docs.forEach((doc, order) => {
    const phase = phaseOf(doc.object);
    const name = outputFileOf(doc, phase, gitops);
    let f = files.get(name);
    if (!f) files.set(name, (f = { phase, order, texts: [], sources: [], chart: doc.chartFile }));
    if ((phase === Phase.APP || phase === Phase.OPS) && f.chart !== doc.chartFile) {
      throw new Error(`charts "${f.chart}" and "${doc.chartFile}" would both be written to ${name}; give one of the charts another id`);
    }
    let text = doc.text;
    if (syncWaves && phase !== Phase.OPS) text = withAnnotation(text, SYNC_WAVE_ANNOTATION, SYNC_WAVES[phase]);
    if (phase === Phase.CRDS && gitops === 'argocd') text = withAnnotation(text, SYNC_OPTIONS_ANNOTATION, ARGOCD_CRD_PROTECTION);
    if (phase === Phase.CRDS && gitops === 'flux') text = withAnnotation(text, FLUX_PRUNE_ANNOTATION, FLUX_PRUNE_DISABLED);
    if (phase === Phase.PRE_PULL && gitops === 'argocd')
      for (const [k, v] of Object.entries(ARGOCD_PRE_PULL_HOOK)) text = withAnnotation(text, k, v);
    if (
      gitops === 'argocd' &&
      phase === Phase.APP &&
      ownCrdKinds.has(`${groupOf(String(doc.object.apiVersion))}/${String(doc.object.kind)}`)
    )
      text = withAnnotation(text, SYNC_OPTIONS_ANNOTATION, SKIP_DRY_RUN);
    f.texts.push(text);
    f.sources.push(doc.chartFile);
  });
  const ordered = [...files.entries()].sort((a, b) => a[1].phase - b[1].phase || a[1].order - b[1].order);
  const out: OutputFile[] = ordered.map(([name, f]) => ({
    name,
    content: f.texts.map((t) => `---\n${stripMarker(t).trimEnd()}\n`).join(''),
    sources: f.sources,
  }));
  const synced = ordered.filter(([, f]) => f.phase !== Phase.OPS);
  if (gitops === 'flux') {
    const present = SYNCED_PHASES.filter((p) => synced.some(([, f]) => f.phase === p) || (p === Phase.PRE_PULL && opts.prePull));
    for (const p of present) {
      const dir = FLUX_DIRS[p];
      const names = synced.filter(([, f]) => f.phase === p).map(([n]) => n.slice(dir.length + 1));
      out.push({ name: `${dir}/kustomization.yaml`, content: kustomization(names) });
    }
    out.push({ name: FLUX_FILE, content: fluxKustomizations(present, docs, opts.repoPath ?? './dist') });
  } else {
    out.push({ name: 'kustomization.yaml', content: kustomization(synced.map(([n]) => n)) });
  }
  if (gitops === 'argocd') {
    out.push({ name: ARGOCD_FILE, content: argoApplication(docs, opts) });
    const health = argoHealth(docs);
    if (health) out.push({ name: ARGOCD_HEALTH_FILE, content: health });
  }
  return out;
}

function stripMarker(text: string): string {
  return text.replace(/^---[ \t]*\r?\n/, '');
}

function kustomization(resources: readonly string[]): string {
  return [
    '# Generated by `cdk8s-kruise synth`. Files are listed in apply order (CRDs, runtime, app) and fifo keeps',
    '# that order, so `kubectl apply -k` and Flux apply them as listed. One-shot operations (ops/) are not listed.',
    'apiVersion: kustomize.config.k8s.io/v1beta1',
    'kind: Kustomization',
    'sortOptions:',
    '  order: fifo',
    resources.length > 0 ? 'resources:' : 'resources: []',
    ...resources.map((r) => `  - ${r}`),
    '',
  ].join('\n');
}

function runtimeNamespace(docs: readonly SynthDoc[]): string {
  const manager = docs.find(
    (d) => d.object.kind === 'Deployment' && (d.object.metadata as { name?: string } | undefined)?.name === NAMES.managerDeployment,
  );
  return (manager?.object.metadata as { namespace?: string } | undefined)?.namespace ?? 'kruise-system';
}

/** Workloads of the runtime install that must be rolled out before the app (the manager serves the webhooks). */
function runtimeWorkloads(docs: readonly SynthDoc[]): Array<{ kind: string; name: string; namespace: string }> {
  return docs
    .filter((d) => phaseOf(d.object) === Phase.RUNTIME && (d.object.kind === 'Deployment' || d.object.kind === 'DaemonSet'))
    .map((d) => {
      const m = d.object.metadata as { name: string; namespace?: string };
      return { kind: String(d.object.kind), name: m.name, namespace: m.namespace ?? runtimeNamespace(docs) };
    });
}

const FLUX_NAMES: Record<SyncedPhase, string> = {
  [Phase.CRDS]: 'cdk8s-kruise-crds',
  [Phase.RUNTIME]: 'cdk8s-kruise-runtime',
  [Phase.PRE_PULL]: 'cdk8s-kruise-pre-pull',
  [Phase.APP]: 'cdk8s-kruise-app',
};

/**
 * Flux Kustomizations for the three directories: each depends on the previous one, and Flux applies the next only
 * once the previous is Ready (CRDs Established; the runtime's Deployment/DaemonSet rolled out, so its webhooks
 * serve). The source is the GitRepository `flux bootstrap` creates.
 */
function fluxKustomizations(present: readonly SyncedPhase[], docs: readonly SynthDoc[], repoPath: string): string {
  const base = repoPath.replace(/\/+$/, '');
  const objects: string[] = [];
  present.forEach((p, i) => {
    const prev = i > 0 ? present[i - 1] : undefined;
    const checks = p === Phase.RUNTIME ? runtimeWorkloads(docs) : [];
    objects.push(
      [
        'apiVersion: kustomize.toolkit.fluxcd.io/v1',
        'kind: Kustomization',
        'metadata:',
        `  name: ${FLUX_NAMES[p]}`,
        '  namespace: flux-system',
        'spec:',
        '  interval: 10m',
        '  retryInterval: 1m',
        // A pre-pull ends within its deadline, pulled or not; the app waits for it at most that long.
        `  timeout: ${p === Phase.PRE_PULL ? `${Math.ceil(PRE_PULL_ACTIVE_DEADLINE_SECONDS / 60) + 1}m` : '5m'}`,
        `  path: ${base}/${FLUX_DIRS[p]}`,
        '  prune: true',
        '  sourceRef:',
        '    kind: GitRepository',
        '    name: flux-system',
        ...(prev !== undefined ? ['  dependsOn:', `    - name: ${FLUX_NAMES[prev]}`] : []),
        // Flux ignores healthChecks when wait is true. CRDs: wait for every one to be Established. Runtime: health
        // checks on its workloads (the manager serves the webhooks). Pre-pull: wait for every job to finish (pulled
        // or not: a failed pull is the rollout's to report). App: no wait, since custom resources whose controller
        // reports no status would keep it from ever becoming Ready.
        ...(p === Phase.CRDS ? ['  wait: true'] : []),
        ...(p === Phase.PRE_PULL
          ? [
              '  wait: true',
              '  healthCheckExprs:',
              `    - apiVersion: ${KRUISE_API_VERSION}`,
              '      kind: ImagePullJob',
              '      current: has(status.completionTime)',
            ]
          : []),
        ...(checks.length
          ? [
              '  healthChecks:',
              ...checks.flatMap((c) => [
                `    - apiVersion: apps/v1`,
                `      kind: ${c.kind}`,
                `      name: ${c.name}`,
                `      namespace: ${c.namespace}`,
              ]),
            ]
          : []),
      ].join('\n'),
    );
  });
  return (
    '# Generated by `cdk8s-kruise synth --gitops flux`. Apply once (`kubectl apply -f` this file, or list it in your\n' +
    '# cluster kustomization): Flux then applies crds/, runtime/, pre-pull/ and app/ in dependsOn order, each once the\n' +
    '# previous is healthy.\n' +
    objects.map((o) => `---\n${o}\n`).join('')
  );
}

/** An Argo CD Application for the output, ignoring the fields the runtime writes itself. */
function argoApplication(docs: readonly SynthDoc[], opts: LayoutOptions): string {
  const repoPath = opts.repoPath ?? './dist';
  const repoURL = opts.repoURL ?? DEFAULT_REPO_URL;
  const targetRevision = opts.targetRevision ?? DEFAULT_TARGET_REVISION;
  const ns = runtimeNamespace(docs);
  const hasRuntime = docs.some((d) => phaseOf(d.object) === Phase.RUNTIME);
  return [
    '# Generated by `cdk8s-kruise synth --gitops argocd`: an Argo CD Application for this output. repoURL and',
    '# targetRevision come from --repo-url/--target-revision or cdk8s.yaml; then `kubectl apply -n argocd -f` this file.',
    '# Objects carry sync waves (CRDs -2, runtime -1, app 0); custom resources whose CRD the same sync creates carry',
    `# ${SKIP_DRY_RUN}; the CRDs carry ${ARGOCD_CRD_PROTECTION}.`,
    'apiVersion: argoproj.io/v1alpha1',
    'kind: Application',
    'metadata:',
    '  name: cdk8s-kruise',
    '  namespace: argocd',
    'spec:',
    '  project: default',
    '  source:',
    `    repoURL: ${JSON.stringify(repoURL)}`,
    `    targetRevision: ${JSON.stringify(targetRevision)}`,
    `    path: ${repoPath.replace(/^\.\//, '').replace(/\/+$/, '')}`,
    '  destination:',
    '    server: https://kubernetes.default.svc',
    '  syncPolicy:',
    '    automated: { prune: true, selfHeal: true }',
    '    syncOptions:',
    '      - ServerSideApply=true',
    // Without it a sync would write the ignored fields back (an empty caBundle breaks every admission call).
    '      - RespectIgnoreDifferences=true',
    ...(hasRuntime
      ? [
          "  # The runtime fills the webhooks' and the conversion's caBundle and keeps its serving certificate in a Secret: not drift.",
          '  ignoreDifferences:',
          ...[
            ['MutatingWebhookConfiguration', MUTATING_WEBHOOK_CONFIGURATION],
            ['ValidatingWebhookConfiguration', VALIDATING_WEBHOOK_CONFIGURATION],
          ].flatMap(([kind, name]) => [
            '    - group: admissionregistration.k8s.io',
            `      kind: ${kind}`,
            `      name: ${name}`,
            '      jqPathExpressions:',
            "        - '.webhooks[]?.clientConfig.caBundle'",
          ]),
          // The SidecarSet CRD's conversion webhook: its caBundle too.
          '    - group: apiextensions.k8s.io',
          '      kind: CustomResourceDefinition',
          `      name: ${SIDECARSET_CRD}`,
          '      jsonPointers:',
          '        - /spec/conversion/webhook/clientConfig/caBundle',
          '    - group: ""',
          '      kind: Secret',
          `      name: ${WEBHOOK_CERT_SECRET}`,
          `      namespace: ${ns}`,
          '      jsonPointers:',
          '        - /data',
        ]
      : []),
    '',
  ].join('\n');
}

/**
 * The argocd-cm entries with a health check for each Kruise kind the app uses (operations in ops/ included: Argo CD
 * shows them when they are created by hand), or undefined when it uses none. Applied with server-side apply, only
 * these keys are written; the rest of argocd-cm is left alone.
 */
function argoHealth(docs: readonly SynthDoc[]): string | undefined {
  const used = new Map<string, string>();
  for (const d of docs) {
    const apiVersion = String(d.object.apiVersion);
    const kind = String(d.object.kind);
    if (phaseOf(d.object) === Phase.CRDS || !KRUISE_GROUPS.has(groupOf(apiVersion))) continue;
    const lua = ARGOCD_HEALTH_LUA[kind];
    if (lua !== undefined) used.set(healthKey(apiVersion, kind), lua);
  }
  if (used.size === 0) return undefined;
  const data = [...used.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .flatMap(([key, lua]) => [
      `  ${key}: |`,
      ...lua
        .trimEnd()
        .split('\n')
        .map((l) => (l ? `    ${l}` : '')),
    ]);
  return [
    '# Generated by `cdk8s-kruise synth --gitops argocd`: health checks for the Kruise kinds this app uses, matching the',
    "# runtime's status. Merge them into Argo CD's argocd-cm (server-side apply writes only these keys):",
    '#   kubectl apply --server-side --field-manager=cdk8s-kruise -n argocd -f argocd/argocd-cm-health.yaml',
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: argocd-cm',
    '  namespace: argocd',
    '  labels:',
    '    app.kubernetes.io/name: argocd-cm',
    '    app.kubernetes.io/part-of: argocd',
    'data:',
    ...data,
    '',
  ].join('\n');
}

/** Adds an annotation unless the object already has one (an explicit value wins). */
function withAnnotation(text: string, key: string, value: string): string {
  const doc = parseDocument(stripMarker(text));
  const existing = doc.getIn(['metadata', 'annotations', key]);
  if (existing !== undefined) return text;
  if (!isMap(doc.getIn(['metadata', 'annotations'], true))) doc.setIn(['metadata', 'annotations'], doc.createNode({}));
  doc.setIn(['metadata', 'annotations', key], value);
  return doc.toString({ lineWidth: 0 });
}

/** The Argo Application's repoURL: an http(s), ssh or git URL, or scp-like `user@host:path`; one line, no spaces. */
export function checkRepoURL(v: unknown): string {
  const ok =
    typeof v === 'string' &&
    v.length <= 2048 &&
    /^[\x21-\x7e]+$/.test(v) &&
    (/^(https?|ssh|git):\/\/[^/]+/.test(v) || /^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^\s]+$/.test(v));
  if (!ok)
    throw new UsageError(
      `repoURL ${JSON.stringify(String(v).slice(0, 60))} is not a Git repository URL (https://, ssh://, git:// or user@host:path, no spaces)`,
    );
  return v as string;
}

/** The Argo Application's targetRevision: a branch, tag, commit or HEAD (a Git ref name: no spaces or control characters). */
export function checkTargetRevision(v: unknown): string {
  const ok = typeof v === 'string' && v.length > 0 && v.length <= 255 && /^[\x21-\x7e]+$/.test(v) && !/\.\.|[~^:?*[\\]/.test(v);
  if (!ok)
    throw new UsageError(
      `targetRevision ${JSON.stringify(String(v).slice(0, 60))} is not a branch, tag or commit (a Git ref name without spaces, "..", ~^:?*[ or \\)`,
    );
  return v as string;
}

/** Parses --gitops. */
export function parseGitOps(v: string): GitOpsTarget {
  if (!(GITOPS_TARGETS as readonly string[]).includes(v))
    throw new UsageError(`unknown --gitops target "${v.slice(0, 40)}"; use one of ${GITOPS_TARGETS.join(', ')}`);
  return v as GitOpsTarget;
}
