/**
 * Advanced StatefulSet admission, pure: upstream's defaulting (replicas, history, pod management, update strategy,
 * claim retention) and its validation beyond the schema: reserveOrdinals entries, the combinations only Parallel
 * allows (maxUnavailable above 1, unorderedUpdate, scale-time maxUnavailable), the InPlaceUpdateReady gate the
 * in-place policies need, RestartPolicy Always, no activeDeadlineSeconds, a non-empty selector matching the template,
 * and on UPDATE the fields upstream keeps immutable. Each refusal names the field and how to fix it.
 */
import { CONDITION_INPLACE_UPDATE_READY, selectorMatches } from '../../../contracts/index.js';
import { templateResizes, VOLUME_CLAIM_UPDATE_ON_POD_ROLLING_UPDATE, type ClaimLike } from '../../control/volume-claim-resize.js';
import type { KubeObject } from '../../core/types.js';
import type { AdmissionResult, JsonPatchOp } from '../../core/webhook/server.js';

interface StatefulSetLike extends KubeObject {
  spec?: {
    replicas?: number;
    revisionHistoryLimit?: number;
    podManagementPolicy?: string;
    selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] };
    template?: {
      metadata?: { labels?: Record<string, string> };
      spec?: { readinessGates?: Array<{ conditionType?: string }>; restartPolicy?: string; activeDeadlineSeconds?: number };
    };
    updateStrategy?: {
      type?: string;
      rollingUpdate?: {
        partition?: number;
        maxUnavailable?: number | string;
        podUpdatePolicy?: string;
        minReadySeconds?: number;
        unorderedUpdate?: unknown;
      };
    };
    reserveOrdinals?: Array<number | string>;
    scaleStrategy?: { maxUnavailable?: number | string };
    persistentVolumeClaimRetentionPolicy?: { whenDeleted?: string; whenScaled?: string };
    volumeClaimTemplates?: ClaimLike[];
    volumeClaimUpdateStrategy?: { type?: string };
    [k: string]: unknown;
  };
}

/** The JSON patch that fills upstream's defaults in (only absent fields). */
export function defaultStatefulSet(obj: StatefulSetLike): JsonPatchOp[] {
  const spec = obj.spec;
  if (!spec || typeof spec !== 'object') return [];
  const ops: JsonPatchOp[] = [];
  if (spec.replicas === undefined) ops.push({ op: 'add', path: '/spec/replicas', value: 1 });
  if (spec.revisionHistoryLimit === undefined) ops.push({ op: 'add', path: '/spec/revisionHistoryLimit', value: 10 });
  if (spec.podManagementPolicy === undefined) ops.push({ op: 'add', path: '/spec/podManagementPolicy', value: 'OrderedReady' });
  const rollingDefaults = { partition: 0, maxUnavailable: 1, podUpdatePolicy: 'ReCreate', minReadySeconds: 0 };
  const us = spec.updateStrategy;
  if (us === undefined) {
    ops.push({ op: 'add', path: '/spec/updateStrategy', value: { type: 'RollingUpdate', rollingUpdate: rollingDefaults } });
  } else if (typeof us === 'object' && us !== null) {
    if (us.type === undefined) ops.push({ op: 'add', path: '/spec/updateStrategy/type', value: 'RollingUpdate' });
    if ((us.type ?? 'RollingUpdate') === 'RollingUpdate') {
      const ru = us.rollingUpdate;
      if (ru === undefined) ops.push({ op: 'add', path: '/spec/updateStrategy/rollingUpdate', value: rollingDefaults });
      else if (typeof ru === 'object' && ru !== null) {
        for (const [k, v] of Object.entries(rollingDefaults)) {
          if ((ru as Record<string, unknown>)[k] === undefined)
            ops.push({ op: 'add', path: `/spec/updateStrategy/rollingUpdate/${k}`, value: v });
        }
      }
    }
  }
  const pvc = spec.persistentVolumeClaimRetentionPolicy;
  if (pvc === undefined) {
    ops.push({ op: 'add', path: '/spec/persistentVolumeClaimRetentionPolicy', value: { whenDeleted: 'Retain', whenScaled: 'Retain' } });
  } else if (typeof pvc === 'object' && pvc !== null) {
    if (pvc.whenDeleted === undefined)
      ops.push({ op: 'add', path: '/spec/persistentVolumeClaimRetentionPolicy/whenDeleted', value: 'Retain' });
    if (pvc.whenScaled === undefined)
      ops.push({ op: 'add', path: '/spec/persistentVolumeClaimRetentionPolicy/whenScaled', value: 'Retain' });
  }
  return ops;
}

function deny(name: string | undefined, pointer: string, message: string, fix: string): AdmissionResult {
  return {
    allowed: false,
    code: 422,
    reason: 'Invalid',
    message: `StatefulSet.apps.kruise.io "${name ?? ''}" is invalid: ${pointer}: ${message} (fix: ${fix})`,
  };
}

/** Upstream's reserveOrdinals check: a non-negative int or a range `a-b` with a ≤ b. */
export function badReserveOrdinal(v: number | string): string | undefined {
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 ? undefined : `${v} is negative`;
  const m = /^(\d+)-(\d+)$/.exec(v);
  if (!m) return `"${v}" is not a valid range (write it as start-end, e.g. 3-5)`;
  return Number(m[1]) > Number(m[2]) ? `"${v}" starts after it ends` : undefined;
}

/** Upstream's maxUnavailable value: at least 1 (percentages rounded up against one pod), and above 1 only with Parallel. */
function maxUnavailableProblem(v: number | string, parallel: boolean): string | undefined {
  if (typeof v === 'number') {
    if (v < 1) return 'should not be less than 1';
  } else {
    const m = /^(\d+)%$/.exec(v);
    if (!m) return `"${v}" is neither a count nor a percentage`;
    if (Number(m[1]) < 1) return 'should not be less than 1';
  }
  if (!parallel && v !== 1) return 'can only work with Parallel PodManagementPolicyType';
  return undefined;
}

/** CREATE and UPDATE: upstream's spec validation (on the defaulted object). */
export function validateStatefulSet(obj: StatefulSetLike): AdmissionResult | undefined {
  const name = obj.metadata.name;
  const spec = obj.spec ?? {};
  const parallel = spec.podManagementPolicy === 'Parallel';
  for (const [i, v] of (spec.reserveOrdinals ?? []).entries()) {
    const bad = badReserveOrdinal(v);
    if (bad) return deny(name, `/spec/reserveOrdinals/${i}`, bad, 'list ordinals as non-negative integers or ranges like "3-5"');
  }
  const sel = spec.selector;
  if (!sel || Object.keys(sel.matchLabels ?? {}).length + (sel.matchExpressions ?? []).length === 0) {
    return deny(name, '/spec/selector', 'empty selector is invalid for statefulset', 'select the pods by at least one template label');
  }
  if (!selectorMatches(sel as never, spec.template?.metadata?.labels ?? {})) {
    return deny(
      name,
      '/spec/template/metadata/labels',
      '`selector` does not match template `labels`',
      'give the template the labels the selector asks for',
    );
  }
  const tspec = spec.template?.spec ?? {};
  if (tspec.restartPolicy !== undefined && tspec.restartPolicy !== 'Always') {
    return deny(name, '/spec/template/spec/restartPolicy', `Unsupported value: "${tspec.restartPolicy}"`, 'use Always (or leave it out)');
  }
  if (tspec.activeDeadlineSeconds !== undefined) {
    return deny(name, '/spec/template/spec/activeDeadlineSeconds', 'activeDeadlineSeconds in StatefulSet is not Supported', 'remove it');
  }
  const scaleMax = spec.scaleStrategy?.maxUnavailable;
  if (scaleMax !== undefined) {
    const bad = maxUnavailableProblem(scaleMax, parallel);
    if (bad) return deny(name, '/spec/scaleStrategy/maxUnavailable', bad, 'use Parallel with a count of at least 1, or remove it');
  }
  const us = spec.updateStrategy ?? {};
  if (us.type === 'OnDelete' && us.rollingUpdate !== undefined) {
    return deny(
      name,
      '/spec/updateStrategy/rollingUpdate',
      "only allowed for updateStrategy 'RollingUpdate'",
      'remove rollingUpdate or use RollingUpdate',
    );
  }
  const ru = us.rollingUpdate;
  if (ru) {
    if (ru.maxUnavailable !== undefined) {
      const bad = maxUnavailableProblem(ru.maxUnavailable, parallel);
      if (bad)
        return deny(
          name,
          '/spec/updateStrategy/rollingUpdate/maxUnavailable',
          bad,
          'use podManagementPolicy Parallel, or maxUnavailable 1',
        );
    }
    if ((ru.minReadySeconds ?? 0) > 300) {
      return deny(name, '/spec/updateStrategy/rollingUpdate/minReadySeconds', 'must be no more than 300 seconds', 'use at most 300');
    }
    if (ru.unorderedUpdate !== undefined && !parallel) {
      return deny(
        name,
        '/spec/updateStrategy/rollingUpdate/unorderedUpdate',
        'unorderedUpdate can only work with Parallel PodManagementPolicyType',
        'set podManagementPolicy to Parallel or remove unorderedUpdate',
      );
    }
    if (
      (ru.podUpdatePolicy === 'InPlaceIfPossible' || ru.podUpdatePolicy === 'InPlaceOnly') &&
      !(tspec.readinessGates ?? []).some((g) => g.conditionType === CONDITION_INPLACE_UPDATE_READY)
    ) {
      return deny(
        name,
        '/spec/template/spec/readinessGates',
        `must contains ${CONDITION_INPLACE_UPDATE_READY} when podUpdatePolicy is ${ru.podUpdatePolicy}`,
        `add readinessGates: [{conditionType: ${CONDITION_INPLACE_UPDATE_READY}}] to the pod template`,
      );
    }
  }
  return undefined;
}

/** Spec fields upstream lets an UPDATE change; any other spec change is refused. */
const MUTABLE = new Set([
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'persistentVolumeClaimRetentionPolicy',
  'scaleStrategy',
  'volumeClaimTemplates',
  'volumeClaimUpdateStrategy',
  'reserveOrdinals',
  'lifecycle',
  'revisionHistoryLimit',
]);

/** A StorageClass as the claim-template check reads it. */
export interface StorageClassLike {
  readonly metadata: { readonly name?: string; readonly annotations?: Record<string, string>; readonly creationTimestamp?: string };
  readonly allowVolumeExpansion?: boolean;
}

/** What the claim-template check of an UPDATE needs: the gate, and the cluster's StorageClasses. */
export interface ClaimResizeAdmission {
  /** Gate StatefulSetAutoResizePVCGate. */
  readonly enabled: boolean;
  readonly storageClasses: () => readonly StorageClassLike[];
}

/** The default StorageClass as the API server picks it: the newest of those annotated default. */
export function defaultStorageClass(classes: readonly StorageClassLike[]): StorageClassLike | undefined {
  let found: StorageClassLike | undefined;
  for (const sc of classes) {
    if (sc.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] !== 'true') continue;
    if (!found || (sc.metadata.creationTimestamp ?? '') > (found.metadata.creationTimestamp ?? '')) found = sc;
  }
  return found;
}

/**
 * Under OnPodRollingUpdate (gate on), upstream's claim-template rule: templates keep their names, classes and access
 * modes, and a template whose size changes names a class that allows expansion (no class: the default one, if any).
 */
function claimTemplateProblem(obj: StatefulSetLike, old: StatefulSetLike, resize: ClaimResizeAdmission): AdmissionResult | undefined {
  const type = obj.spec?.volumeClaimUpdateStrategy?.type;
  if (!resize.enabled || type !== VOLUME_CLAIM_UPDATE_ON_POD_ROLLING_UPDATE) return undefined;
  const name = obj.metadata.name;
  const next = obj.spec?.volumeClaimTemplates ?? [];
  if (!Array.isArray(next)) return deny(name, '/spec/volumeClaimTemplates', 'must be a list', 'write volumeClaimTemplates as a list');
  const prev = old.spec?.volumeClaimTemplates;
  const result = templateResizes(next, Array.isArray(prev) ? prev : []);
  if ('pointer' in result) return deny(name, result.pointer, result.message, result.fix);
  const classes = result.resized.length > 0 ? resize.storageClasses() : [];
  for (const t of result.resized) {
    const i = next.indexOf(t);
    const className = t.spec?.storageClassName ?? undefined;
    const sc = className === undefined ? defaultStorageClass(classes) : classes.find((c) => c.metadata.name === className);
    if (!sc) {
      // No class named and no default one: nothing to check, as upstream.
      if (className === undefined) continue;
      return deny(
        name,
        `/spec/volumeClaimTemplates/${i}/spec/storageClassName`,
        `StorageClass ${JSON.stringify(className)} not found`,
        'create the StorageClass, or name one that exists',
      );
    }
    if (sc.allowVolumeExpansion === false) {
      return deny(
        name,
        `/spec/volumeClaimTemplates/${i}/spec/resources/requests/storage`,
        `storage class ${sc.metadata.name} does not support volume expansion`,
        `keep the size as it was, or use a StorageClass with allowVolumeExpansion: true (claims of ${sc.metadata.name} cannot grow)`,
      );
    }
  }
  return undefined;
}

/** UPDATE: only upstream's mutable spec fields change, and claim templates only as claim resizing allows. */
export function validateStatefulSetUpdate(
  obj: StatefulSetLike,
  old: StatefulSetLike,
  resize: ClaimResizeAdmission = { enabled: false, storageClasses: () => [] },
): AdmissionResult | undefined {
  const a = obj.spec ?? {};
  const b = old.spec ?? {};
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (MUTABLE.has(k)) continue;
    if (JSON.stringify(a[k] ?? null) !== JSON.stringify(b[k] ?? null)) {
      return deny(
        obj.metadata.name,
        '/spec',
        "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'reserveOrdinals', 'lifecycle', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy', `volumeClaimTemplates`, `VolumeClaimUpdateStrategy` and 'updateStrategy' are forbidden",
        `keep spec.${k} as it was, or create a new StatefulSet`,
      );
    }
  }
  return claimTemplateProblem(obj, old, resize);
}
