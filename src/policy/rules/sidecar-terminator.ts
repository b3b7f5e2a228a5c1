import { SIDECAR_ENV, VIRTUAL_KUBELET_LABEL } from '../contracts.js';
import { arr, containers, envVar, imageReferenceError, memo, obj, podTemplates, type Container, type PodTemplate } from '../k8s.js';
import type { Manifest, Rule, RuleFinding } from '../types.js';
import { listNames, quoteValue } from '../../api/quote.js';
import { parseExitPriorityPatterns, parseTerminateSidecars } from '../../api/container-patterns.js';
import { ANNOTATION_CONTAINER_EXIT_PRIORITY_PATTERNS, ANNOTATION_TERMINATE_SIDECARS } from '../../contracts/keys.js';

interface MarkedPod {
  readonly t: PodTemplate;
  readonly all: Container[];
  readonly kill: Array<{ c: Container; env: number }>;
  readonly withImage: Array<{ c: Container; env: number; image: unknown }>;
  readonly ignoreOnly: Array<{ c: Container; env: number }>;
}

function isTrue(v: unknown): boolean {
  return typeof v === 'string' && v.toLowerCase() === 'true';
}

/** Pod templates that carry any Job sidecar terminator marker (computed once per run, shared by the rules). */
const markedPods = memo(markedPodsOf);

function markedPodsOf(manifests: readonly Manifest[]): MarkedPod[] {
  const out: MarkedPod[] = [];
  for (const m of manifests) {
    for (const t of podTemplates(m)) {
      const all = containers(t);
      const kill: MarkedPod['kill'] = [];
      const withImage: MarkedPod['withImage'] = [];
      const ignoreOnly: MarkedPod['ignoreOnly'] = [];
      for (const c of all) {
        const k = envVar(c, SIDECAR_ENV.whenJobExit);
        const w = envVar(c, SIDECAR_ENV.whenJobExitWithImage);
        const ign = envVar(c, SIDECAR_ENV.ignoreExitCode);
        if (k && isTrue(k.value)) kill.push({ c, env: k.index });
        if (w && w.value !== undefined && w.value !== '') withImage.push({ c, env: w.index, image: w.value });
        if (ign && isTrue(ign.value) && !(k && isTrue(k.value))) ignoreOnly.push({ c, env: ign.index });
      }
      if (kill.length + withImage.length + ignoreOnly.length > 0) out.push({ t, all, kill, withImage, ignoreOnly });
    }
  }
  return out;
}

function sidecarNames(p: MarkedPod): Set<string> {
  return new Set([...p.kill.map((s) => s.c.name), ...p.withImage.map((s) => s.c.name)]);
}

export const sidecarRestartPolicy: Rule = {
  id: 'KRUISE-SIDECAR-001',
  severity: 'error',
  title: 'Job sidecar marker on a pod whose restartPolicy is Always',
  doc:
    'The Job sidecar terminator skips every pod whose restartPolicy is Always (the default for Pods and the only value ' +
    'Deployments, StatefulSets, DaemonSets, ReplicaSets and CloneSets allow): such pods never finish, so the marked ' +
    'sidecar would never be stopped and the marker only misleads. Mark sidecars only in pods with restartPolicy Never ' +
    'or OnFailure (Jobs, CronJobs, BroadcastJobs, bare Pods).',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const p of markedPods(manifests)) {
      const policy = p.t.spec.restartPolicy ?? 'Always';
      if (policy !== 'Always') continue;
      const first = p.kill[0] ?? p.withImage[0] ?? p.ignoreOnly[0]!;
      out.push({
        manifest: p.t.manifest,
        jsonPointer: `${first.c.pointer}/env/${first.env}`,
        message: `container ${quoteValue(first.c.name)} is marked as a Job sidecar, but the pod's restartPolicy is ${p.t.spec.restartPolicy === undefined ? 'Always (the default)' : 'Always'}, so the sidecar terminator never acts on it`,
        hint: 'Use restartPolicy Never or OnFailure (a Job), or remove the KRUISE_TERMINATE_SIDECAR_* env vars from this workload.',
      });
    }
    return out;
  },
};

export const sidecarNoMainContainer: Rule = {
  id: 'KRUISE-SIDECAR-002',
  severity: 'error',
  title: 'Every container is marked as a Job sidecar (no main container)',
  doc:
    'The sidecar terminator stops sidecars once every main container (every container without a marker) has ' +
    'terminated. When all containers are marked there is no main container, so the condition is met at once and ' +
    'upstream kills the sidecars immediately, or the Job never runs its real work. At least one container must stay unmarked.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const p of markedPods(manifests)) {
      const sidecars = sidecarNames(p);
      if (p.all.length === 0 || sidecars.size === 0 || p.all.some((c) => !sidecars.has(c.name))) continue;
      out.push({
        manifest: p.t.manifest,
        jsonPointer: `${p.t.specPointer}/containers`,
        message: `all ${p.all.length} container(s) (${listNames(p.all.map((c) => String(c.name)))}) are marked as Job sidecars, so no main container remains`,
        hint: "Remove the KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT* env var from the container that does the Job's work.",
      });
    }
    return out;
  },
};

export const sidecarQuickExitImage: Rule = {
  id: 'KRUISE-SIDECAR-003',
  severity: 'error',
  title: 'Quick-exit image of a WITH_IMAGE sidecar is not a valid image reference',
  doc:
    "With KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE the terminator replaces the sidecar's image with the " +
    'env value (an image that exits at once) and kubelet restarts the container with it. An invalid reference makes ' +
    'the pod update or the pull fail, and the sidecar is never stopped.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const p of markedPods(manifests)) {
      for (const s of p.withImage) {
        const err = imageReferenceError(s.image);
        if (!err) continue;
        out.push({
          manifest: p.t.manifest,
          jsonPointer: `${s.c.pointer}/env/${s.env}/value`,
          message: `quick-exit image ${quoteValue(s.image)} of container ${quoteValue(s.c.name)} is not a valid image reference: ${err}`,
          hint: 'Use a reference like registry.example.com/tools/quick-exit:1.0 (lowercase repository, optional :tag or @sha256:digest).',
        });
      }
    }
    return out;
  },
};

function targetsVirtualNodes(spec: Record<string, unknown>): boolean {
  const { key, value } = VIRTUAL_KUBELET_LABEL;
  if (obj(spec.nodeSelector)[key] === value) return true;
  if (arr(spec.tolerations).some((t) => obj(t).key === key || obj(t).key === 'virtual-kubelet.io/provider')) return true;
  const terms = arr(obj(obj(obj(spec.affinity).nodeAffinity).requiredDuringSchedulingIgnoredDuringExecution).nodeSelectorTerms);
  return terms.some((term) =>
    arr(obj(term).matchExpressions).some((e) => obj(e).key === key && obj(e).operator === 'In' && arr(obj(e).values).includes(value)),
  );
}

export const sidecarWithImageOffVirtualNodes: Rule = {
  id: 'KRUISE-SIDECAR-004',
  severity: 'info',
  title: 'WITH_IMAGE sidecar in a pod not aimed at virtual-kubelet nodes',
  doc:
    'Upstream handles a WITH_IMAGE sidecar only when the pod runs on a virtual-kubelet node (Node label ' +
    'type=virtual-kubelet); on a normal node such a sidecar counts as a sidecar but is never stopped. Nothing in this ' +
    'pod (nodeSelector, required node affinity or a virtual-kubelet toleration) sends it to virtual nodes. That is fine ' +
    'when the cluster schedules it there by other means; otherwise add KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true too.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const p of markedPods(manifests)) {
      if (p.withImage.length === 0 || targetsVirtualNodes(p.t.spec)) continue;
      for (const s of p.withImage) {
        if (p.kill.some((k) => k.c.name === s.c.name)) continue;
        out.push({
          manifest: p.t.manifest,
          jsonPointer: `${s.c.pointer}/env/${s.env}`,
          message: `container ${quoteValue(s.c.name)} uses the quick-exit image, which only acts on virtual-kubelet nodes, and this pod does not target them`,
          hint: 'Add nodeSelector type: virtual-kubelet (and the provider toleration), or also set KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true for normal nodes.',
        });
      }
    }
    return out;
  },
};

export const sidecarIgnoreExitCodeAlone: Rule = {
  id: 'KRUISE-SIDECAR-005',
  severity: 'warning',
  title: 'IGNORE_EXIT_CODE without WHEN_JOB_EXIT has no effect',
  doc:
    'KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE=true is honoured only on a container that also has ' +
    "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true (upstream reads it only for sidecars it stops itself). Alone it is ignored, so the pod's phase still " +
    "depends on the sidecar's exit code.",
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const p of markedPods(manifests)) {
      for (const s of p.ignoreOnly) {
        out.push({
          manifest: p.t.manifest,
          jsonPointer: `${s.c.pointer}/env/${s.env}`,
          message: `container ${quoteValue(s.c.name)} sets ${SIDECAR_ENV.ignoreExitCode} without ${SIDECAR_ENV.whenJobExit}=true, so it is ignored`,
          hint: `Add ${SIDECAR_ENV.whenJobExit}=true to the container, or remove ${SIDECAR_ENV.ignoreExitCode}.`,
        });
      }
    }
    return out;
  },
};

const escapePointer = (token: string) => token.replace(/~/g, '~0').replace(/\//g, '~1');

export const sidecarPatternUnusable: Rule = {
  id: 'KRUISE-SIDECAR-006',
  severity: 'warning',
  title: 'A container declared by name or pattern can never be matched, or its declaration is not used',
  doc:
    'The annotations kruise.cdk8s.io/terminate-sidecars and kruise.cdk8s.io/container-exit-priority-patterns name ' +
    'containers by exact name, name pattern or image pattern, so they reach containers other webhooks add after synth. ' +
    'The runtime leaves out an entry that can never match (an empty or invalid pattern, one that could backtrack ' +
    'exponentially, an invalid container name), uses SIGTERM instead of an unusable shutdown, and ignores a whole value ' +
    'that is not a JSON list. Job sidecar termination by pattern also needs restartPolicy Never or OnFailure.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const m of manifests) {
      for (const t of podTemplates(m)) {
        const annotations = obj(t.metadata.annotations);
        for (const [key, parse] of [
          [ANNOTATION_TERMINATE_SIDECARS, parseTerminateSidecars],
          [ANNOTATION_CONTAINER_EXIT_PRIORITY_PATTERNS, parseExitPriorityPatterns],
        ] as const) {
          const raw = annotations[key];
          if (raw === undefined) continue;
          const pointer = `${t.pointer}/metadata/annotations/${escapePointer(key)}`;
          if (typeof raw !== 'string') {
            out.push({
              manifest: m,
              jsonPointer: pointer,
              message: `annotation ${key} must be a string`,
              hint: 'Write the JSON list as a string value.',
            });
            continue;
          }
          for (const issue of parse(raw).issues) {
            out.push({
              manifest: m,
              jsonPointer: pointer,
              message: issue.message,
              hint:
                issue.kind === 'unusable'
                  ? 'Write a JSON list such as [{"name":"istio-proxy","ignoreExitCode":true}].'
                  : issue.kind === 'shutdown'
                    ? 'Fix the shutdown ({"exec":{"command":[...]}} or {"httpPost":{"port":15020,"path":"/quitquitquit"}}), or remove it to use SIGTERM.'
                    : 'Give exactly one of name, namePattern or imagePattern: a valid container name, or a non-empty regular expression without nested repeats or backreferences.',
            });
          }
          if (key === ANNOTATION_TERMINATE_SIDECARS && (t.spec.restartPolicy ?? 'Always') === 'Always') {
            out.push({
              manifest: m,
              jsonPointer: pointer,
              message: `annotation ${key} declares Job sidecars, but the pod's restartPolicy is Always, so the sidecar terminator never acts on it`,
              hint: 'Use restartPolicy Never or OnFailure (a Job), or remove the annotation.',
            });
          }
        }
      }
    }
    return out;
  },
};

export const SIDECAR_TERMINATOR_RULES = [
  sidecarRestartPolicy,
  sidecarNoMainContainer,
  sidecarQuickExitImage,
  sidecarWithImageOffVirtualNodes,
  sidecarIgnoreExitCodeAlone,
  sidecarPatternUnusable,
];
