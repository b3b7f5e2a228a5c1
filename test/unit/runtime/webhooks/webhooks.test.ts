import { readdirSync, readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { defaultCrr, validateCrrSpec, validateCrrUpdate } from '../../../../src/runtime/webhooks/containerrecreaterequest/decision.js';
import { schemaOnlyValidator, validateWith } from '../../../../src/runtime/webhooks/kruisevalidation/decision.js';
import { policyObjectValidator } from '../../../../src/cli/policy-validator.js';

const validateWithPolicy = (o: Parameters<typeof validateWith>[1]) => validateWith(policyObjectValidator, o);
import type { Pod } from '../../../../src/runtime/core/types.js';
import { parseFeatureGates } from '../../../../src/contracts/features.js';
import {
  DAEMON,
  DAEMON_NAMESPACED,
  MANAGER,
  MANAGER_DAEMON_CONFIG,
  MANAGER_NAMESPACED,
  daemonScopes,
  findCoveringRule,
  managerScopes,
  toPolicyRules,
} from '../../../../src/contracts/index.js';
import { parseDuration } from '../../../../src/cli/commands/controller.js';

function pod(
  over: Partial<{ phase: string; deleting: boolean; conditions: Array<{ type: string; status: string }>; nodeName: string | null }> = {},
): Pod {
  return {
    metadata: { name: 'p', namespace: 'ns', uid: 'uid-1', ...(over.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: {
      ...(over.nodeName === null ? {} : { nodeName: over.nodeName ?? 'node-a' }),
      containers: [
        { name: 'app', image: 'a' },
        { name: 'envoy', image: 'e', lifecycle: { preStop: { exec: { command: ['sleep', '1'] } } }, ports: [{ containerPort: 15000 }] },
      ],
    },
    status: {
      phase: over.phase ?? 'Running',
      conditions: over.conditions,
      containerStatuses: [
        { name: 'app', containerID: 'containerd://aaa', restartCount: 0, state: { running: {} } },
        { name: 'envoy', containerID: 'containerd://eee', restartCount: 2, state: { running: {} } },
      ],
    },
  };
}

const crr = (containers: Array<Record<string, unknown>> = [{ name: 'envoy' }], extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'ContainerRecreateRequest',
  metadata: { name: 'c', namespace: 'ns' },
  spec: { podName: 'p', containers, ...extra },
});

describe('CRR defaulting', () => {
  it('fills labels, statusContext, preStop, ports and failurePolicy', () => {
    const r = defaultCrr(crr(), pod(), false);
    expect(r.allowed).toBe(true);
    if (!r.allowed) return;
    expect(r.patch).toEqual([
      {
        op: 'add',
        path: '/metadata/labels',
        value: { 'crr.apps.kruise.io/pod-uid': 'uid-1', 'crr.apps.kruise.io/node-name': 'node-a', 'crr.apps.kruise.io/active': 'true' },
      },
      { op: 'add', path: '/spec/containers/0/statusContext', value: { containerID: 'containerd://eee', restartCount: 2 } },
      { op: 'add', path: '/spec/containers/0/preStop', value: { exec: { command: ['sleep', '1'] } } },
      { op: 'add', path: '/spec/containers/0/ports', value: [{ containerPort: 15000 }] },
      { op: 'add', path: '/spec/strategy', value: { failurePolicy: 'Fail' } },
    ]);
  });

  it('adds type=virtual-kubelet on virtual nodes and merges into existing labels with escaped pointers', () => {
    const c = crr();
    (c.metadata as Record<string, unknown>).labels = { mine: 'x' };
    const r = defaultCrr(c, pod(), true);
    if (!r.allowed) throw new Error('denied');
    expect(r.patch).toContainEqual({ op: 'add', path: '/metadata/labels/crr.apps.kruise.io~1pod-uid', value: 'uid-1' });
    expect(r.patch).toContainEqual({ op: 'add', path: '/metadata/labels/type', value: 'virtual-kubelet' });
  });

  it("defaults the stop's grace period to the pod's, keeping one the CRR names", () => {
    const graced = pod();
    graced.spec!.terminationGracePeriodSeconds = 45;
    const r = defaultCrr(crr(), graced, false);
    if (!r.allowed) throw new Error('denied');
    expect(r.patch).toContainEqual({
      op: 'add',
      path: '/spec/strategy',
      value: { failurePolicy: 'Fail', terminationGracePeriodSeconds: 45 },
    });
    const partial = defaultCrr(crr([{ name: 'envoy' }], { strategy: { failurePolicy: 'Ignore' } }), graced, false);
    if (!partial.allowed) throw new Error('denied');
    expect(partial.patch).toContainEqual({ op: 'add', path: '/spec/strategy/terminationGracePeriodSeconds', value: 45 });
    const own = defaultCrr(
      crr([{ name: 'envoy' }], { strategy: { failurePolicy: 'Ignore', terminationGracePeriodSeconds: 5 } }),
      graced,
      false,
    );
    if (!own.allowed) throw new Error('denied');
    expect(own.patch?.some((p) => p.path.startsWith('/spec/strategy'))).toBe(false);
  });

  it('keeps an explicit failurePolicy', () => {
    const r = defaultCrr(crr([{ name: 'envoy' }], { strategy: { failurePolicy: 'Ignore', forceRecreate: true } }), pod(), false);
    if (!r.allowed) throw new Error('denied');
    expect(r.patch?.some((p) => p.path.startsWith('/spec/strategy'))).toBe(false);
  });

  it.each([
    ['Succeeded pod', pod({ phase: 'Succeeded' }), /not active \(phase Succeeded\)/],
    ['Failed pod', pod({ phase: 'Failed' }), /not active \(phase Failed\)/],
    ['deleting pod', pod({ deleting: true }), /being deleted/],
    ['unscheduled pod', pod({ nodeName: null }), /not scheduled/],
    ['missing pod', undefined, /pod "p" does not exist/],
  ])('rejects a CRR for a %s', (_n, p, msg) => {
    const r = defaultCrr(crr(), p, false);
    expect(r.allowed).toBe(false);
    if (!r.allowed) expect(r.message).toMatch(msg);
  });

  it('lets a CRR through for an inactive pod marked SidecarTerminated', () => {
    const r = defaultCrr(crr(), pod({ phase: 'Succeeded', conditions: [{ type: 'SidecarTerminated', status: 'True' }] }), false);
    expect(r.allowed).toBe(true);
  });

  it('rejects unknown containers with the index and name', () => {
    const r = defaultCrr(crr([{ name: 'nope' }]), pod(), false);
    expect(r.allowed).toBe(false);
    if (!r.allowed) expect(r.message).toBe('spec.containers[0].name: Not found: pod p has no container "nope"');
  });

  it.each([
    [{ podName: '', containers: [{ name: 'a' }] }, /spec.podName: Required/],
    [{ podName: 'p', containers: [] }, /spec.containers: Required/],
    [{ podName: 'p', containers: [{ name: 'a' }, { name: 'a' }] }, /Duplicate value: "a"/],
    [{ podName: 'p', containers: [{ name: 'a' }], activeDeadlineSeconds: 1 }, /at least 3/],
    [{ podName: 'p', containers: [{ name: 'a' }], strategy: { failurePolicy: 'Maybe' } }, /Unsupported value/],
  ])('validates the spec %#', (spec, msg) => {
    expect(validateCrrSpec({ metadata: {}, spec } as never)).toMatch(msg);
  });

  it('spec and node-name label are immutable on update', () => {
    const old = { ...crr(), metadata: { name: 'c', labels: { 'crr.apps.kruise.io/node-name': 'a' } } };
    expect(validateCrrUpdate({ ...old, spec: { ...old.spec, podName: 'q' } } as never, old as never).allowed).toBe(false);
    expect(
      validateCrrUpdate({ ...old, metadata: { name: 'c', labels: { 'crr.apps.kruise.io/node-name': 'b' } } } as never, old as never)
        .allowed,
    ).toBe(false);
    expect(
      validateCrrUpdate(
        { ...old, metadata: { name: 'c', labels: { 'crr.apps.kruise.io/node-name': 'a', 'crr.apps.kruise.io/active': 'false' } } } as never,
        old as never,
      ).allowed,
    ).toBe(true);
  });
});

describe('kind validation with the policy rules', () => {
  it('admits the SidecarSet the examples ship, even with server-populated metadata and status', () => {
    const distDir = new URL('../../../../dist/', import.meta.url);
    const docs = readdirSync(distDir)
      .filter((f) => /\.ya?ml$/.test(f))
      .flatMap((f) => parseAllDocuments(readFileSync(new URL(f, distDir), 'utf8')).map((d) => d.toJS()));
    const ss = docs.find((o) => o?.kind === 'SidecarSet');
    expect(ss, 'dist/ ships a SidecarSet').toBeDefined();
    ss.metadata = {
      ...ss.metadata,
      uid: 'u',
      resourceVersion: '1',
      generation: 1,
      creationTimestamp: '2026-01-01T00:00:00Z',
      managedFields: [{ manager: 'kubectl' }],
    };
    ss.status = { observedGeneration: 1, matchedPods: 0, updatedPods: 0, readyPods: 0 };
    expect(validateWithPolicy(ss)).toEqual({ allowed: true });
  });

  it('without an injected validator, refuses what the API model schema refuses (unknown field), naming the pointer', () => {
    const typo = {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'logtail' },
      spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'logtail', image: 'busybox' }], updateStrategyy: {} },
    };
    const r = validateWith(schemaOnlyValidator, typo);
    expect(r.allowed).toBe(false);
    if (!r.allowed) expect(r.message).toMatch(/KRUISE-SCHEMA \/spec(\/updateStrategyy)?: .*updateStrategyy/);
  });

  it('refuses a SidecarSet the policy engine flags, naming rule, pointer and fix', () => {
    const bad = {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'logtail' },
      spec: { containers: [{ name: 'logtail', image: 'busybox' }] },
    };
    const r = validateWithPolicy(bad);
    expect(r.allowed).toBe(false);
    if (!r.allowed) {
      expect(r.message).toMatch(/^SidecarSet logtail is invalid: KRUISE-/);
      expect(r.message).toMatch(/\(fix: /);
    }
  });
});

describe('feature gates', () => {
  it('parses, defaults and cascades like upstream', () => {
    expect(parseFeatureGates(undefined).get('SidecarTerminator')).toBe(false);
    expect(parseFeatureGates('SidecarTerminator=true').get('SidecarTerminator')).toBe(true);
    expect(parseFeatureGates('SidecarTerminator=true,KruiseDaemon=false').get('SidecarTerminator')).toBe(false);
    expect(() => parseFeatureGates('Nope=true')).toThrow(/unknown gate "Nope"/);
    expect(() => parseFeatureGates('SidecarTerminator')).toThrow(/not Name=true\|false/);
    // Upstream's "parent on forces children on": image pre-download needs the ImagePullJob controller.
    expect(parseFeatureGates('PreDownloadImageForInPlaceUpdate=true,ImagePullJobGate=false').get('ImagePullJobGate')).toBe(true);
    // ...unless the daemon is off, which turns pre-download off first.
    const noDaemon = parseFeatureGates('PreDownloadImageForInPlaceUpdate=true,KruiseDaemon=false');
    expect([noDaemon.get('PreDownloadImageForInPlaceUpdate'), noDaemon.get('ImagePullJobGate')]).toEqual([false, false]);
  });
});

describe('durations', () => {
  it('parses Go-style durations', () => {
    expect(parseDuration('15s')).toBe(15_000);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(() => parseDuration('15')).toThrow(/not a duration/);
  });
});

describe('declared permissions', () => {
  it('has no wildcards and no duplicate (group, resource, verb)', () => {
    for (const list of [MANAGER, MANAGER_NAMESPACED, MANAGER_DAEMON_CONFIG, DAEMON, DAEMON_NAMESPACED]) {
      const seen = new Set<string>();
      for (const r of list) {
        expect(r.apiGroups.concat(r.resources, r.verbs)).not.toContain('*');
        expect(r.why.length).toBeGreaterThan(10);
        for (const g of r.apiGroups)
          for (const res of r.resources)
            for (const v of r.verbs) {
              const k = `${g}|${res}|${v}`;
              expect(seen.has(k), k).toBe(false);
              seen.add(k);
            }
      }
    }
  });

  const manager = managerScopes({ runtime: 'kruise-system', daemonConfig: 'kruise-daemon-config' });

  it('namespaced rules only cover calls in the own namespace; resourceNames restrict', () => {
    const lease = { apiGroup: 'coordination.k8s.io', resource: 'leases', verb: 'update' as const, namespace: 'kruise-system', name: 'x' };
    expect(findCoveringRule(lease, manager)).toBeDefined();
    expect(findCoveringRule({ ...lease, namespace: 'other' }, manager)).toBeUndefined();
    expect(findCoveringRule({ ...lease, namespace: 'kruise-daemon-config' }, manager)).toBeUndefined();
    const cfg = { apiGroup: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations', verb: 'patch' as const };
    expect(findCoveringRule({ ...cfg, name: 'kruise-mutating-webhook-configuration' }, manager)).toBeDefined();
    expect(findCoveringRule({ ...cfg, name: 'someone-elses' }, manager)).toBeUndefined();
  });

  it('the manager reads Secrets anywhere but writes them only in its own and the daemon-config namespace', () => {
    const secret = (verb: 'get' | 'create' | 'update' | 'delete' | 'list', namespace?: string) => ({
      apiGroup: '',
      resource: 'secrets',
      verb,
      namespace,
      name: verb === 'create' ? undefined : 's',
    });
    expect(findCoveringRule(secret('get', 'team-a'), manager)).toBeDefined();
    for (const verb of ['create', 'update'] as const) {
      expect(findCoveringRule(secret(verb, 'team-a'), manager), verb).toBeUndefined();
      expect(findCoveringRule(secret(verb, 'kruise-daemon-config'), manager)!.why, verb).toMatch(/pull secrets copied/);
    }
    // In its own namespace: create (RBAC cannot name it), and update the certificate Secret only.
    expect(findCoveringRule(secret('create', 'kruise-system'), manager)!.why).toMatch(/webhook CA/);
    expect(findCoveringRule(secret('update', 'kruise-system'), manager)).toBeUndefined();
    const certificate = {
      apiGroup: '',
      resource: 'secrets',
      verb: 'update' as const,
      namespace: 'kruise-system',
      name: 'kruise-webhook-certs',
    };
    expect(findCoveringRule(certificate, manager)!.why).toMatch(/webhook certificate Secret/);
    expect(findCoveringRule({ ...certificate, name: undefined }, manager)).toBeUndefined();
    // Listed and watched anywhere: the ImagePullJob controller follows registry-credential sources (read access
    // it already had by name), so a rotated source reaches its copy at once.
    expect(findCoveringRule(secret('list'), manager)!.why).toMatch(/registry-credential Secrets are watched/);
    // A pull-secret copy no unfinished job uses is deleted, in the daemon-config namespace only.
    expect(findCoveringRule(secret('delete', 'kruise-daemon-config'), manager)!.why).toMatch(/pull secrets copied/);
    expect(findCoveringRule(secret('delete', 'team-a'), manager)).toBeUndefined();
    expect(findCoveringRule(secret('delete', 'kruise-system'), manager)).toBeUndefined();
    // The scope follows the configured namespace, not a fixed name.
    const moved = managerScopes({ runtime: 'kruise-system', daemonConfig: 'cfg' });
    expect(findCoveringRule(secret('create', 'kruise-daemon-config'), moved)).toBeUndefined();
    expect(findCoveringRule(secret('create', 'cfg'), moved)).toBeDefined();
  });

  it('the daemon reads Secrets only in the daemon-config namespace and writes none', () => {
    const daemon = daemonScopes('kruise-daemon-config');
    const get = { apiGroup: '', resource: 'secrets', verb: 'get' as const, name: 'x' };
    expect(findCoveringRule({ ...get, namespace: 'kruise-daemon-config' }, daemon)).toBeDefined();
    expect(findCoveringRule({ ...get, namespace: 'default' }, daemon)).toBeUndefined();
    expect(findCoveringRule({ ...get, verb: 'create', namespace: 'kruise-daemon-config' }, daemon)).toBeUndefined();
  });

  it('renders RBAC rules without the why', () => {
    const r = toPolicyRules(MANAGER);
    expect(r[0]).not.toHaveProperty('why');
    expect(r.find((x) => x.resourceNames)).toBeDefined();
  });
});
