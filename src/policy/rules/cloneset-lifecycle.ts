import { toPointer } from '../locate.js';
import { arr, isKind, isObj, labelValueError, obj, qualifiedNameError } from '../k8s.js';
import type { Manifest, Rule, RuleFinding } from '../types.js';
import { quoteValue } from '../../api/quote.js';
import {
  ANNOTATION_IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS,
  ANNOTATION_IMAGE_PREDOWNLOAD_PARALLELISM,
  ANNOTATION_IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS,
} from '../../contracts/keys.js';

const HOOKS = ['preDelete', 'inPlaceUpdate', 'preNormal'] as const;

interface Hook {
  readonly manifest: Manifest;
  readonly name: (typeof HOOKS)[number];
  readonly value: Record<string, unknown>;
  readonly pointer: string;
}

/**
 * The workloads whose `spec.lifecycle` hooks work alike (the same handlers, pod states and readiness): the rules
 * below read all three. The rule ids keep the CloneSet prefix they were published with.
 */
const HOOKED_KINDS = ['CloneSet', 'StatefulSet', 'DaemonSet'] as const;

function hooks(manifests: readonly Manifest[]): Hook[] {
  const out: Hook[] = [];
  for (const m of manifests) {
    if (!HOOKED_KINDS.some((kind) => isKind(m, 'apps.kruise.io', kind))) continue;
    const lifecycle = obj(obj(m.object.spec).lifecycle);
    for (const name of HOOKS) {
      if (isObj(lifecycle[name])) out.push({ manifest: m, name, value: lifecycle[name], pointer: `/spec/lifecycle/${name}` });
    }
  }
  return out;
}

export const cloneSetHookWithoutHandler: Rule = {
  id: 'KRUISE-CLONESET-001',
  severity: 'warning',
  title: 'Lifecycle hook with neither finalizersHandler nor labelsHandler',
  doc:
    'A lifecycle hook of a CloneSet, Advanced StatefulSet or Advanced DaemonSet holds a pod in its Preparing state ' +
    "while the pod carries any of the hook's finalizers (finalizersHandler) or labels (labelsHandler). A hook with " +
    'neither is never "hooked": the controller passes the pod through at once and the hook does nothing.',
  check(manifests) {
    return hooks(manifests)
      .filter((h) => arr(h.value.finalizersHandler).length === 0 && Object.keys(obj(h.value.labelsHandler)).length === 0)
      .map((h) => ({
        manifest: h.manifest,
        jsonPointer: h.pointer,
        message: `lifecycle.${h.name} has neither finalizersHandler nor labelsHandler, so it never holds a pod`,
        hint: `Add finalizersHandler (e.g. ["example.io/unready-blocker"]) or labelsHandler (e.g. {"example.io/block": "true"}), or remove lifecycle.${h.name}.`,
      }));
  },
};

export const cloneSetMarkNotReadyPreNormal: Rule = {
  id: 'KRUISE-CLONESET-002',
  severity: 'warning',
  title: 'markPodNotReady on the preNormal hook has no effect',
  doc:
    "markPodNotReady makes the workload's controller set the pod's KruisePodReady condition to False while a preDelete or " +
    'inPlaceUpdate hook holds it, so traffic drains first. A pod in PreparingNormal is new and not serving yet; ' +
    'the flag is ignored on preNormal.',
  check(manifests) {
    return hooks(manifests)
      .filter((h) => h.name === 'preNormal' && h.value.markPodNotReady === true)
      .map((h) => ({
        manifest: h.manifest,
        jsonPointer: `${h.pointer}/markPodNotReady`,
        message: 'lifecycle.preNormal.markPodNotReady is true, which has no effect on preNormal',
        hint: 'Remove markPodNotReady from preNormal; use it on preDelete or inPlaceUpdate to drain traffic.',
      }));
  },
};

export const cloneSetHandlerKeys: Rule = {
  id: 'KRUISE-CLONESET-003',
  severity: 'error',
  title: 'Lifecycle hook finalizer or label key is not a valid qualified name',
  doc:
    "The workload's controller and your hook controller add and remove these finalizers and labels on pods; the API " +
    'server rejects pod updates whose finalizers or label keys are not qualified names ([prefix/]name, name at most ' +
    '63 characters of alphanumerics, "-", "_", "."), and label values that are not valid label values. The hook ' +
    'then blocks forever.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const h of hooks(manifests)) {
      arr(h.value.finalizersHandler).forEach((f, i) => {
        const err = typeof f === 'string' ? qualifiedNameError(f) : 'it is not a string';
        if (err)
          out.push({
            manifest: h.manifest,
            jsonPointer: `${h.pointer}/finalizersHandler/${i}`,
            message: `finalizer ${quoteValue(f)} is not a valid qualified name: ${err}`,
            hint: 'Use a domain-prefixed name such as example.io/unready-blocker.',
          });
      });
      for (const [k, v] of Object.entries(obj(h.value.labelsHandler))) {
        const keyErr = qualifiedNameError(k);
        if (keyErr)
          out.push({
            manifest: h.manifest,
            jsonPointer: `${h.pointer}/labelsHandler${toPointer([k])}`,
            message: `label key ${quoteValue(k)} is not a valid qualified name: ${keyErr}`,
            hint: 'Use a key such as example.io/block-unready.',
          });
        const valErr = typeof v === 'string' ? labelValueError(v) : 'it is not a string';
        if (valErr)
          out.push({
            manifest: h.manifest,
            jsonPointer: `${h.pointer}/labelsHandler${toPointer([k])}`,
            message: `label value ${quoteValue(v)} of ${quoteValue(k)} is not a valid label value: ${valErr}`,
            hint: 'Quote the value and use at most 63 alphanumerics, "-", "_" or "." (e.g. "true").',
          });
      }
    }
    return out;
  },
};

/** The image pre-download annotations, what each accepts, and what an unreadable value reads as. */
const PREDOWNLOAD_ANNOTATIONS: ReadonlyArray<{ key: string; valid: RegExp; accepts: string; fallback: string }> = [
  {
    key: ANNOTATION_IMAGE_PREDOWNLOAD_PARALLELISM,
    valid: /^\+?\d{1,10}$/,
    accepts: 'a non-negative integer (nodes pulling at once)',
    fallback: '1',
  },
  {
    key: ANNOTATION_IMAGE_PREDOWNLOAD_TIMEOUT_SECONDS,
    valid: /^\+?0*[1-9]\d{0,9}$/,
    accepts: 'a positive integer (seconds per pull)',
    fallback: '300',
  },
  {
    key: ANNOTATION_IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS,
    valid: /^([+-]?\d{1,10}|\d{1,10}%)$/,
    accepts: 'an integer or a percentage of replicas such as "20%"',
    fallback: '0 (pre-download as soon as the update starts)',
  },
];
const INT32_MAX = 2 ** 31 - 1;

export const preDownloadAnnotationValues: Rule = {
  id: 'KRUISE-CLONESET-004',
  severity: 'warning',
  title: 'Image pre-download annotation with a value the controller cannot read',
  doc:
    'With gate PreDownloadImageForInPlaceUpdate, the CloneSet and Advanced StatefulSet controllers read ' +
    'apps.kruise.io/image-predownload-parallelism (a non-negative integer, default 1), ' +
    'apps.kruise.io/image-predownload-timeout-seconds (a positive integer, default 300) and ' +
    'apps.kruise.io/image-predownload-min-updated-ready-pods (an integer or a percentage of replicas, default 0); with ' +
    'gate PreDownloadImageForDaemonSetUpdate, the Advanced DaemonSet controller reads the first two. A ' +
    'value they cannot read, or one beyond a 32-bit integer, is silently replaced by the default.',
  check(manifests) {
    const out: RuleFinding[] = [];
    for (const m of manifests) {
      const daemonSet = isKind(m, 'apps.kruise.io', 'DaemonSet');
      if (!daemonSet && !isKind(m, 'apps.kruise.io', 'CloneSet') && !isKind(m, 'apps.kruise.io', 'StatefulSet')) continue;
      const annotations = obj(obj(m.object.metadata).annotations);
      for (const a of PREDOWNLOAD_ANNOTATIONS) {
        if (!(a.key in annotations)) continue;
        // Upstream's DaemonSet controller reads min-updated-ready-pods and leaves it unused: any value is as good.
        if (daemonSet && a.key === ANNOTATION_IMAGE_PREDOWNLOAD_MIN_UPDATED_READY_PODS) continue;
        const v = annotations[a.key];
        const text = typeof v === 'string' ? v.trim() : undefined;
        const n = text === undefined ? NaN : Math.abs(Number(text.replace(/%$/, '')));
        if (text !== undefined && a.valid.test(text) && n <= INT32_MAX) continue;
        out.push({
          manifest: m,
          jsonPointer: `/metadata/annotations${toPointer([a.key])}`,
          message: `${a.key} is ${quoteValue(v)}, not ${a.accepts}: the controller uses ${a.fallback} instead`,
          hint: `Write ${a.accepts} as a quoted string, or remove the annotation to use the default.`,
        });
      }
    }
    return out;
  },
};

export const CLONESET_RULES = [cloneSetHookWithoutHandler, cloneSetMarkNotReadyPreNormal, cloneSetHandlerKeys, preDownloadAnnotationValues];
