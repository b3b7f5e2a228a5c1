// KRUISE-CLONESET-004 over the values the runtime reads (src/runtime/control/image-predownload.ts): a finding exactly
// when the controller would fall back to the default.
import { describe, expect, it } from 'vitest';
import { validateInputs } from '../../../src/policy/engine.js';
import { minUpdatedReadyPods, preDownloadParallelism, preDownloadTimeoutSeconds } from '../../../src/runtime/control/image-predownload.js';

const P = 'apps.kruise.io/image-predownload-parallelism';
const T = 'apps.kruise.io/image-predownload-timeout-seconds';
const M = 'apps.kruise.io/image-predownload-min-updated-ready-pods';

function findings(kind: 'CloneSet' | 'StatefulSet' | 'DaemonSet', key: string, value: string) {
  const object = {
    apiVersion: kind === 'StatefulSet' ? 'apps.kruise.io/v1beta1' : 'apps.kruise.io/v1alpha1',
    kind,
    metadata: { name: 'web', namespace: 'default', annotations: { [key]: value } },
    spec: {},
  };
  return validateInputs([{ file: 'x.yaml', content: JSON.stringify(object) }], { rules: ['KRUISE-CLONESET-004'] }).findings;
}

/** Whether the runtime reads `value` as written (not as its fallback). */
const readsAsWritten: Record<string, (v: string) => boolean> = {
  [P]: (v) => preDownloadParallelism({ [P]: v }) === Number(v.trim()),
  [T]: (v) => preDownloadTimeoutSeconds({ [T]: v }) === Number(v.trim()),
  [M]: (v) =>
    v.trim().endsWith('%')
      ? minUpdatedReadyPods(v, 100) === Number(v.trim().slice(0, -1))
      : minUpdatedReadyPods(v, 10) === Number(v.trim()),
};

describe('KRUISE-CLONESET-004 agrees with the runtime', () => {
  it.each([
    [P, '2'],
    [P, '0'],
    [P, '+3'],
    [P, '-1'],
    [P, 'two'],
    [P, '50%'],
    [P, '4294967296'],
    [T, '60'],
    [T, '0'],
    [T, '-5'],
    [T, '1m'],
    [T, '2147483648'],
    [M, '3'],
    [M, '-2'],
    [M, '40%'],
    [M, '1.5'],
    [M, 'soon'],
    [M, '99999999999'],
    [M, ''],
  ])('%s: %j', (key, value) => {
    // An empty value is unreadable even where its fallback (0) happens to equal Number('').
    const expected = value.trim() !== '' && readsAsWritten[key]!(value) ? 0 : 1;
    expect(findings('CloneSet', key, value)).toHaveLength(expected);
    expect(findings('StatefulSet', key, value)).toHaveLength(expected);
    // The Advanced DaemonSet controller reads parallelism and timeout alike, and not min-updated-ready-pods.
    expect(findings('DaemonSet', key, value)).toHaveLength(key === M ? 0 : expected);
  });

  it('names the annotation, the value and the fallback', () => {
    const [f] = findings('CloneSet', M, 'soon');
    expect(f).toMatchObject({
      severity: 'warning',
      jsonPointer: '/metadata/annotations/apps.kruise.io~1image-predownload-min-updated-ready-pods',
    });
    expect(f!.message).toBe(
      'apps.kruise.io/image-predownload-min-updated-ready-pods is "soon", not an integer or a percentage of replicas such as "20%": the controller uses 0 (pre-download as soon as the update starts) instead',
    );
  });

  it('other kinds are not looked at', () => {
    const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', annotations: { [P]: 'x' } } };
    expect(validateInputs([{ file: 'x.yaml', content: JSON.stringify(object) }], { rules: ['KRUISE-CLONESET-004'] }).findings).toEqual([]);
  });
});
