/**
 * CloneSet admission, pure: upstream's defaulting (replicas, history, update strategy) and the checks the
 * policy rules cannot make on one object alone (an immutable selector, what InPlaceOnly lets change), plus
 * the strategy combinations upstream's webhook refuses. Each refusal names the field and how to fix it.
 */
import {
  CLONESET_DEFAULT_MAX_UNAVAILABLE,
  CLONESET_DEFAULT_REVISION_HISTORY_LIMIT,
  firstChangeNotInPlace,
} from '../../../contracts/index.js';
import type { AdmissionResult, JsonPatchOp } from '../../core/webhook/server.js';
import type { KubeObject } from '../../core/types.js';

interface CloneSetLike extends KubeObject {
  spec?: {
    replicas?: number;
    revisionHistoryLimit?: number;
    selector?: unknown;
    template?: { metadata?: unknown; spec?: { containers?: Array<Record<string, unknown>>; [k: string]: unknown } };
    updateStrategy?: { type?: string; partition?: number | string; maxUnavailable?: number | string; maxSurge?: number | string };
    [k: string]: unknown;
  };
}

/** The JSON patch that fills upstream's defaults in (only absent fields). */
export function defaultCloneSet(obj: CloneSetLike): JsonPatchOp[] {
  const spec = obj.spec;
  if (!spec || typeof spec !== 'object') return [];
  const ops: JsonPatchOp[] = [];
  if (spec.replicas === undefined) ops.push({ op: 'add', path: '/spec/replicas', value: 1 });
  if (spec.revisionHistoryLimit === undefined)
    ops.push({ op: 'add', path: '/spec/revisionHistoryLimit', value: CLONESET_DEFAULT_REVISION_HISTORY_LIMIT });
  const us = spec.updateStrategy;
  if (us === undefined) {
    ops.push({
      op: 'add',
      path: '/spec/updateStrategy',
      value: { type: 'ReCreate', partition: 0, maxUnavailable: CLONESET_DEFAULT_MAX_UNAVAILABLE, maxSurge: 0 },
    });
  } else if (typeof us === 'object' && us !== null) {
    if (us.type === undefined) ops.push({ op: 'add', path: '/spec/updateStrategy/type', value: 'ReCreate' });
    if (us.partition === undefined) ops.push({ op: 'add', path: '/spec/updateStrategy/partition', value: 0 });
    if (us.maxUnavailable === undefined)
      ops.push({ op: 'add', path: '/spec/updateStrategy/maxUnavailable', value: CLONESET_DEFAULT_MAX_UNAVAILABLE });
    if (us.maxSurge === undefined) ops.push({ op: 'add', path: '/spec/updateStrategy/maxSurge', value: 0 });
  }
  return ops;
}

function below1(v: number | string | undefined, replicas: number): boolean {
  if (v === undefined) return false;
  if (typeof v === 'number') return v < 1;
  const m = /^(\d+)%$/.exec(v);
  return m ? Math.ceil((Number(m[1]) * replicas) / 100) < 1 : false;
}

function deny(name: string | undefined, pointer: string, message: string, fix: string): AdmissionResult {
  return {
    allowed: false,
    code: 422,
    reason: 'Invalid',
    message: `CloneSet ${name ?? ''} is invalid: ${pointer}: ${message} (fix: ${fix})`,
  };
}

/** Strategy and deadline checks on CREATE and UPDATE (upstream's validation of v1alpha1 CloneSets). */
export function validateStrategy(obj: CloneSetLike): AdmissionResult | undefined {
  const us = obj.spec?.updateStrategy ?? {};
  const name = obj.metadata.name;
  const replicas = obj.spec?.replicas ?? 1;
  if (us.type === 'OnDelete') {
    return deny(
      name,
      '/spec/updateStrategy/type',
      'OnDelete is not supported by apps.kruise.io/v1alpha1 CloneSets',
      'use ReCreate, InPlaceIfPossible or InPlaceOnly',
    );
  }
  if (us.type === 'InPlaceOnly' && us.maxSurge !== undefined && !below1(us.maxSurge, replicas)) {
    return deny(
      name,
      '/spec/updateStrategy/maxSurge',
      'must be 0 with InPlaceOnly (no pod is ever recreated)',
      'remove maxSurge or use InPlaceIfPossible',
    );
  }
  // A deadline no longer than minReadySeconds would expire before any pod could count as available.
  const pds = obj.spec?.progressDeadlineSeconds;
  const minReady = typeof obj.spec?.minReadySeconds === 'number' ? obj.spec.minReadySeconds : 0;
  if (typeof pds === 'number' && pds !== 2147483647 && pds <= minReady) {
    return deny(
      name,
      '/spec/progressDeadlineSeconds',
      `must be greater than minReadySeconds (${minReady})`,
      'raise progressDeadlineSeconds, or remove it (or set 2147483647) for no deadline',
    );
  }
  // With no replicas there is nothing to update (a CloneSet scaled to 0, or created at 0 and scaled later).
  if (
    replicas > 0 &&
    us.maxUnavailable !== undefined &&
    below1(us.maxUnavailable, replicas) &&
    us.maxSurge !== undefined &&
    below1(us.maxSurge, replicas)
  ) {
    return deny(
      name,
      '/spec/updateStrategy/maxUnavailable',
      'maxUnavailable and maxSurge are both below one pod, so an update could never make progress',
      'set maxUnavailable or maxSurge to at least 1',
    );
  }
  return undefined;
}

/** UPDATE: the selector never changes; InPlaceOnly lets only container images of the pod spec change. */
export function validateCloneSetUpdate(obj: CloneSetLike, old: CloneSetLike): AdmissionResult | undefined {
  const name = obj.metadata.name;
  if (JSON.stringify(obj.spec?.selector ?? null) !== JSON.stringify(old.spec?.selector ?? null)) {
    return deny(name, '/spec/selector', 'field is immutable', 'create a new CloneSet with the new selector');
  }
  if (obj.spec?.updateStrategy?.type === 'InPlaceOnly') {
    if (firstChangeNotInPlace(obj.spec.template?.spec, old.spec?.template?.spec)) {
      return deny(
        name,
        '/spec/template/spec',
        'InPlaceOnly allows only spec.containers[*].image to change',
        'change only images, or switch updateStrategy.type to InPlaceIfPossible or ReCreate',
      );
    }
  }
  return undefined;
}
