/**
 * Advanced DaemonSet admission, pure: upstream's defaulting (burstReplicas, history, update strategy, the deprecated
 * Surging type) and upstream's checks beyond the schema (selector against the template, restartPolicy, the rolling
 * update's maxUnavailable/maxSurge/partition, the immutable selector). Each refusal names the field and the fix.
 * Unlike upstream, an inPlaceUpdate hook is accepted: the bundled controller carries it out (docs/runtime.md).
 */
import { selectorMatches } from '../../../contracts/index.js';
import type { AdmissionResult, JsonPatchOp } from '../../core/webhook/server.js';
import type { KubeObject } from '../../core/types.js';

interface RollingUpdateLike {
  rollingUpdateType?: string;
  maxUnavailable?: number | string;
  maxSurge?: number | string;
  partition?: number | string;
  [k: string]: unknown;
}

interface DaemonSetLike extends KubeObject {
  spec?: {
    selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] };
    template?: { metadata?: { labels?: Record<string, string> }; spec?: { restartPolicy?: string; activeDeadlineSeconds?: number } };
    updateStrategy?: { type?: string; rollingUpdate?: RollingUpdateLike };
    burstReplicas?: number | string;
    revisionHistoryLimit?: number;
    [k: string]: unknown;
  };
}

/** The JSON patch that fills upstream's defaults in (only absent fields), as upstream's defaulting does. */
export function defaultDaemonSet(obj: DaemonSetLike): JsonPatchOp[] {
  const spec = obj.spec;
  if (!spec || typeof spec !== 'object') return [];
  const ops: JsonPatchOp[] = [];
  if (spec.burstReplicas === undefined) ops.push({ op: 'add', path: '/spec/burstReplicas', value: 250 });
  if (spec.revisionHistoryLimit === undefined) ops.push({ op: 'add', path: '/spec/revisionHistoryLimit', value: 10 });
  const us = spec.updateStrategy;
  if (us === undefined) {
    ops.push({
      op: 'add',
      path: '/spec/updateStrategy',
      value: { type: 'RollingUpdate', rollingUpdate: { rollingUpdateType: 'Standard', maxUnavailable: 1, maxSurge: 0 } },
    });
    return ops;
  }
  if (typeof us !== 'object' || us === null) return ops;
  if (us.type === undefined) ops.push({ op: 'add', path: '/spec/updateStrategy/type', value: 'RollingUpdate' });
  if ((us.type ?? 'RollingUpdate') !== 'RollingUpdate') return ops;
  const ru = us.rollingUpdate;
  if (ru === undefined) {
    ops.push({
      op: 'add',
      path: '/spec/updateStrategy/rollingUpdate',
      value: { rollingUpdateType: 'Standard', maxUnavailable: 1, maxSurge: 0 },
    });
    return ops;
  }
  if (typeof ru !== 'object' || ru === null) return ops;
  const surging = ru.rollingUpdateType === 'Surging';
  // The deprecated Surging type means Standard with one surge pod and none unavailable, unless set otherwise.
  if (surging && ru.maxSurge === undefined) ops.push({ op: 'add', path: '/spec/updateStrategy/rollingUpdate/maxSurge', value: 1 });
  if (surging && ru.maxUnavailable === undefined)
    ops.push({ op: 'add', path: '/spec/updateStrategy/rollingUpdate/maxUnavailable', value: 0 });
  if (ru.rollingUpdateType === undefined || surging) {
    ops.push({
      op: ru.rollingUpdateType === undefined ? 'add' : 'replace',
      path: '/spec/updateStrategy/rollingUpdate/rollingUpdateType',
      value: 'Standard',
    });
  }
  if (!surging && ru.maxUnavailable === undefined && ru.maxSurge === undefined) {
    ops.push({ op: 'add', path: '/spec/updateStrategy/rollingUpdate/maxUnavailable', value: 1 });
    ops.push({ op: 'add', path: '/spec/updateStrategy/rollingUpdate/maxSurge', value: 0 });
  }
  return ops;
}

function deny(name: string | undefined, pointer: string, message: string, fix: string): AdmissionResult {
  return {
    allowed: false,
    code: 422,
    reason: 'Invalid',
    message: `DaemonSet ${name ?? ''} is invalid: ${pointer}: ${message} (fix: ${fix})`,
  };
}

/** A count or percentage's number (a percentage's digits); undefined when malformed. */
function valueOf(v: number | string): number | undefined {
  if (typeof v === 'number') return v;
  const m = /^(-?\d+)%$/.exec(v);
  if (m) return Number(m[1]);
  return /^-?\d+$/.test(v) ? Number(v) : undefined;
}

function checkIntOrPercent(name: string | undefined, pointer: string, v: number | string, allowZero: boolean): AdmissionResult | undefined {
  const n = valueOf(v);
  if (n === undefined)
    return deny(
      name,
      pointer,
      `${JSON.stringify(v)} is neither a count nor a percentage`,
      'write a count such as 1 or a percentage such as "10%"',
    );
  if (n < 0 || (!allowZero && n === 0))
    return deny(name, pointer, `must be ${allowZero ? 'at least 0' : 'greater than 0'}`, 'use a positive count or percentage');
  if (typeof v === 'string' && v.endsWith('%') && n > 100)
    return deny(name, pointer, 'must not be greater than 100%', 'use at most "100%"');
  return undefined;
}

/** Upstream's checks on CREATE and UPDATE. */
export function validateDaemonSet(obj: DaemonSetLike): AdmissionResult | undefined {
  const name = obj.metadata.name;
  const spec = obj.spec ?? {};
  const sel = spec.selector;
  if (sel && Object.keys(sel.matchLabels ?? {}).length + (sel.matchExpressions ?? []).length === 0) {
    return deny(name, '/spec/selector', 'empty selector is invalid for daemonset', 'select the pods by at least one label of the template');
  }
  if (sel && !selectorMatches(sel, spec.template?.metadata?.labels ?? {})) {
    return deny(
      name,
      '/spec/template/metadata/labels',
      '`selector` does not match template `labels`',
      'give the template every label the selector asks for',
    );
  }
  const restart = spec.template?.spec?.restartPolicy;
  if (restart !== undefined && restart !== 'Always') {
    return deny(
      name,
      '/spec/template/spec/restartPolicy',
      `Unsupported value: "${restart}": supported values: "Always"`,
      'remove restartPolicy or set Always',
    );
  }
  if (spec.template?.spec?.activeDeadlineSeconds !== undefined) {
    return deny(
      name,
      '/spec/template/spec/activeDeadlineSeconds',
      'activeDeadlineSeconds in DaemonSet is not Supported',
      'remove activeDeadlineSeconds',
    );
  }
  const us = spec.updateStrategy;
  if (!us || (us.type ?? 'RollingUpdate') === 'OnDelete') return undefined;
  const ru = us.rollingUpdate;
  if (!ru)
    return deny(
      name,
      '/spec/updateStrategy/rollingUpdate',
      'Required value',
      'set rollingUpdate (or remove updateStrategy to get the defaults)',
    );
  const base = '/spec/updateStrategy/rollingUpdate';
  const hasUnavailable = ru.maxUnavailable !== undefined && valueOf(ru.maxUnavailable) !== 0;
  const hasSurge = ru.maxSurge !== undefined && valueOf(ru.maxSurge) !== 0;
  const bad =
    (hasUnavailable ? checkIntOrPercent(name, `${base}/maxUnavailable`, ru.maxUnavailable!, false) : undefined) ??
    (hasSurge ? checkIntOrPercent(name, `${base}/maxSurge`, ru.maxSurge!, false) : undefined) ??
    (ru.partition !== undefined ? checkIntOrPercent(name, `${base}/partition`, ru.partition, true) : undefined);
  if (bad) return bad;
  if (hasUnavailable && hasSurge) {
    return deny(
      name,
      `${base}/maxSurge`,
      'may not be set when maxUnavailable is non-zero',
      'set maxUnavailable to 0 to surge, or maxSurge to 0',
    );
  }
  if (!hasUnavailable && !hasSurge) {
    return deny(name, `${base}/maxUnavailable`, 'cannot be 0 when maxSurge is 0', 'set maxUnavailable or maxSurge to at least 1');
  }
  if (ru.rollingUpdateType === 'InPlaceIfPossible' && hasSurge) {
    return deny(
      name,
      `${base}/maxSurge`,
      'must be 0 for InPlaceIfPossible type',
      'remove maxSurge and use maxUnavailable, or use the Standard type',
    );
  }
  return undefined;
}

/** UPDATE: the selector never changes (upstream allows only the template, strategy, hooks and tuning to change). */
export function validateDaemonSetUpdate(obj: DaemonSetLike, old: DaemonSetLike): AdmissionResult | undefined {
  if (JSON.stringify(obj.spec?.selector ?? null) !== JSON.stringify(old.spec?.selector ?? null)) {
    return deny(obj.metadata.name, '/spec/selector', 'field is immutable', 'create a new DaemonSet with the new selector');
  }
  return undefined;
}
