// SidecarSet injection (pure): matching, container placement, init containers, native sidecars, volumes,
// shared volumes, transferEnv, pull secrets, patchPodMetadata, IS_INJECTED and the hash annotations.
import { describe, expect, it } from 'vitest';
import type { SidecarSet } from '../../../../../src/api/kinds/sidecarset.js';
import {
  sidecarSetHash,
  sidecarSetHashWithoutImage,
  sidecarSetRevisionHash,
  sidecarSetRevisionName,
} from '../../../../../src/runtime/control/sidecarset-pod.js';
import type { Pod } from '../../../../../src/runtime/core/types.js';
import { injectSidecarSets, partitionFraction, type InjectionInput } from '../../../../../src/runtime/webhooks/sidecarset/decision.js';

function set(name: string, spec: Partial<SidecarSet['spec']>, annotations?: Record<string, string>): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name, ...(annotations ? { annotations } : {}) },
    spec: { selector: { matchLabels: { app: 'web' } }, ...spec },
  };
}

function pod(extra: Partial<NonNullable<Pod['spec']>> = {}, labels: Record<string, string> = { app: 'web' }): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-0', labels, annotations: { team: 'a' } },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'nginx',
          env: [
            { name: 'TZ', value: 'UTC' },
            { name: 'REGION', value: 'eu' },
          ],
          volumeMounts: [
            { name: 'data', mountPath: '/data' },
            { name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
          ],
        },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
      ...extra,
    },
  } as Pod;
}

function run(p: Pod, sets: SidecarSet[], over: Partial<InjectionInput> = {}) {
  return injectSidecarSets({
    pod: p,
    namespace: 'ns',
    namespaceLabels: { env: 'prod' },
    sidecarSets: sets,
    now: '2026-01-01T00:00:00Z',
    metadataKeyAllowed: () => true,
    ...over,
  });
}

const names = (cs: Array<{ name: string }> | undefined) => (cs ?? []).map((c) => c.name);
const logtail = { name: 'logtail', image: 'logtail:1', volumeMounts: [{ name: 'logs', mountPath: '/var/log/app' }] };

describe('SidecarSet matching', () => {
  it.each([
    ['selector matches', set('s', {}), true],
    ['empty selector matches nothing', set('s', { selector: {} }), false],
    ['no selector matches nothing', set('s', { selector: undefined }), false],
    ['other namespace', set('s', { namespace: 'other' }), false],
    ['same namespace', set('s', { namespace: 'ns' }), true],
    ['namespaceSelector matches', set('s', { namespaceSelector: { matchLabels: { env: 'prod' } } }), true],
    ['namespaceSelector does not match', set('s', { namespaceSelector: { matchLabels: { env: 'dev' } } }), false],
    ['selector expression', set('s', { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] } }), true],
    ['paused injection', set('s', { injectionStrategy: { paused: true } }), false],
  ])('%s', (_n, s, injected) => {
    const p = pod();
    const r = run(p, [{ ...s, spec: { ...s.spec, containers: [{ name: 'side', image: 'x' }] } }]);
    expect('injected' in r && r.injected.length === 1).toBe(injected);
    expect(names(p.spec!.containers).includes('side')).toBe(injected);
  });
});

describe('SidecarSet injection', () => {
  it('places Before/After containers, replaces a same-named one in place, sorts init containers after the pod’s own', () => {
    const p = pod({ initContainers: [{ name: 'migrate', image: 'm' }] });
    p.spec!.containers.push({ name: 'envoy', image: 'old-envoy' });
    run(p, [
      set('mesh', {
        containers: [
          { name: 'envoy', image: 'envoy:2' },
          { name: 'agent', image: 'a', podInjectPolicy: 'AfterAppContainer' },
          { name: 'first', image: 'f', podInjectPolicy: 'BeforeAppContainer' },
        ],
        initContainers: [
          { name: 'z-init', image: 'z' },
          { name: 'a-init', image: 'a' },
        ],
      }),
    ]);
    expect(names(p.spec!.containers)).toEqual(['first', 'app', 'envoy', 'agent']);
    expect(p.spec!.containers[2]!.image).toBe('envoy:2');
    expect(names(p.spec!.initContainers)).toEqual(['migrate', 'a-init', 'z-init']);
    // BeforeAppContainer puts an init container before the pod's own, as upstream.
    const q = pod({ initContainers: [{ name: 'migrate', image: 'm' }] });
    run(q, [
      set('mesh', {
        initContainers: [
          { name: 'z-init', image: 'z', podInjectPolicy: 'AfterAppContainer' },
          { name: 'b-init', image: 'b', podInjectPolicy: 'BeforeAppContainer' },
          { name: 'a-init', image: 'a' },
        ],
      }),
    ]);
    expect(names(q.spec!.initContainers)).toEqual(['b-init', 'migrate', 'a-init', 'z-init']);
    for (const c of [...p.spec!.containers.filter((c) => c.name !== 'app'), ...p.spec!.initContainers!.slice(1)]) {
      expect(c.env).toContainEqual({ name: 'IS_INJECTED', value: 'true' });
      expect(c).not.toHaveProperty('podInjectPolicy');
    }
    expect(p.spec!.containers.find((c) => c.name === 'app')!.env).not.toContainEqual({ name: 'IS_INJECTED', value: 'true' });
  });

  it('adds only the volumes injected containers use, keeps the pod’s own of the same name, dedups pull secrets', () => {
    const p = pod({ imagePullSecrets: [{ name: 'regcred' }] });
    run(p, [
      set('logs', {
        containers: [logtail],
        volumes: [
          { name: 'logs', emptyDir: {} },
          { name: 'unused', emptyDir: {} },
          { name: 'data', hostPath: { path: '/x' } },
        ],
        imagePullSecrets: [{ name: 'regcred' }, { name: 'sidecar-cred' }],
      }),
    ]);
    expect(p.spec!.volumes).toEqual([
      { name: 'data', emptyDir: {} },
      { name: 'logs', emptyDir: {} },
    ]);
    expect(p.spec!.imagePullSecrets).toEqual([{ name: 'regcred' }, { name: 'sidecar-cred' }]);
  });

  it('shareVolumePolicy enabled mounts the app containers’ volumes (not the service-account token)', () => {
    const p = pod();
    run(p, [
      set('logs', { containers: [{ ...logtail, shareVolumePolicy: { type: 'enabled' } }], volumes: [{ name: 'logs', emptyDir: {} }] }),
    ]);
    expect(p.spec!.containers[0]!.volumeMounts).toEqual([
      { name: 'logs', mountPath: '/var/log/app' },
      { name: 'data', mountPath: '/data' },
    ]);
  });

  it('a shared mount’s subPathExpr brings the env it names from the app container, after transferEnv; own env wins', () => {
    const p = pod({
      containers: [
        {
          name: 'app',
          image: 'nginx',
          env: [
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'OD_NAME', value: 'od' },
            { name: 'TZ', value: 'UTC' },
          ],
          volumeMounts: [{ name: 'data', mountPath: '/data', subPathExpr: 'foo/$(POD_NAME)/$(OD_NAME)/$(UNDEFINED)/$(TZ)' }],
        },
        // An earlier injected sidecar is no app container: its env is not taken.
        {
          name: 'old',
          image: 'o',
          env: [
            { name: 'IS_INJECTED', value: 'true' },
            { name: 'X', value: 'x' },
          ],
          volumeMounts: [{ name: 'data', mountPath: '/o', subPathExpr: '$(X)' }],
        },
      ],
    });
    const shared = { ...logtail, shareVolumePolicy: { type: 'enabled' as const }, env: [{ name: 'TZ', value: 'CET' }] };
    run(p, [
      set('logs', {
        containers: [{ ...shared, transferEnv: [{ sourceContainerName: 'app', envName: 'OD_NAME' }] }],
        volumes: [{ name: 'logs', emptyDir: {} }],
      }),
    ]);
    const side = p.spec!.containers[0]!;
    expect(side.env).toEqual([
      { name: 'TZ', value: 'CET' },
      { name: 'IS_INJECTED', value: 'true' },
      { name: 'OD_NAME', value: 'od' },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ]);
    expect(side.volumeMounts).toContainEqual({
      name: 'data',
      mountPath: '/data',
      subPathExpr: 'foo/$(POD_NAME)/$(OD_NAME)/$(UNDEFINED)/$(TZ)',
    });
  });

  it('HotUpgrade: <name>-1 works with the image, <name>-2 idles on hotUpgradeEmptyImage, both read their versions from annotations', () => {
    const p = pod();
    p.metadata.annotations!['kruise.io/sidecarset-working-hotupgrade-container'] = '{"zz":"zz-2"}';
    run(p, [
      set('hot', {
        containers: [
          {
            name: 'envoy',
            image: 'envoy:1',
            env: [{ name: 'OWN', value: '1' }],
            upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'envoy-empty:1' },
          },
        ],
      }),
    ]);
    const [one, two] = p.spec!.containers;
    expect([one!.name, one!.image, two!.name, two!.image]).toEqual(['envoy-1', 'envoy:1', 'envoy-2', 'envoy-empty:1']);
    expect(one).not.toHaveProperty('upgradeStrategy');
    const version = (c: string) => [
      { name: 'SIDECARSET_VERSION', valueFrom: { fieldRef: { fieldPath: `metadata.annotations['version.sidecarset.kruise.io/${c}']` } } },
      {
        name: 'SIDECARSET_VERSION_ALT',
        valueFrom: { fieldRef: { fieldPath: `metadata.annotations['versionalt.sidecarset.kruise.io/${c}']` } },
      },
    ];
    expect(one!.env).toEqual([{ name: 'OWN', value: '1' }, { name: 'IS_INJECTED', value: 'true' }, ...version('envoy-1')]);
    expect(two!.env).toEqual([{ name: 'OWN', value: '1' }, { name: 'IS_INJECTED', value: 'true' }, ...version('envoy-2')]);
    expect(p.metadata.annotations).toMatchObject({
      'version.sidecarset.kruise.io/envoy-1': '1',
      'versionalt.sidecarset.kruise.io/envoy-1': '0',
      'version.sidecarset.kruise.io/envoy-2': '0',
      'versionalt.sidecarset.kruise.io/envoy-2': '1',
      // Added to what the pod recorded, keys sorted.
      'kruise.io/sidecarset-working-hotupgrade-container': '{"envoy":"envoy-1","zz":"zz-2"}',
    });
    // The hash annotations list the sidecar by its SidecarSet name, as upstream.
    expect(JSON.parse(p.metadata.annotations!['kruise.io/sidecarset-hash']!).hot.sidecarList).toEqual(['envoy']);
  });

  it('without shareVolumePolicy no subPathExpr env is copied', () => {
    const p = pod({
      containers: [
        {
          name: 'app',
          image: 'nginx',
          env: [{ name: 'A', value: '1' }],
          volumeMounts: [{ name: 'data', mountPath: '/d', subPathExpr: '$(A)' }],
        },
      ],
    });
    run(p, [set('logs', { containers: [logtail], volumes: [{ name: 'logs', emptyDir: {} }] })]);
    expect(p.spec!.containers[0]!.env).toEqual([{ name: 'IS_INJECTED', value: 'true' }]);
  });

  it('transferEnv copies env by container name and through sourceContainerNameFrom', () => {
    const p = pod({}, { app: 'web', main: 'app' });
    run(p, [
      set('t', {
        containers: [
          {
            name: 'side',
            image: 's',
            env: [{ name: 'OWN', value: '1' }],
            transferEnv: [
              { sourceContainerName: 'app', envName: 'TZ' },
              { sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.labels['main']" } }, envNames: ['REGION', 'MISSING'] },
              { sourceContainerName: 'nope', envName: 'TZ' },
            ],
          },
        ],
      }),
    ]);
    // Upstream's order (checked against it by test/e2e/sidecarset-compat.test.ts): own env, IS_INJECTED, transferred.
    expect(p.spec!.containers[0]!.env).toEqual([
      { name: 'OWN', value: '1' },
      { name: 'IS_INJECTED', value: 'true' },
      { name: 'TZ', value: 'UTC' },
      { name: 'REGION', value: 'eu' },
    ]);
  });

  it('native sidecars: containers become initContainers with restartPolicy Always, Before ones first', () => {
    const p = pod({ initContainers: [{ name: 'migrate', image: 'm' }] });
    run(p, [
      set(
        'native',
        {
          containers: [
            { name: 'proxy', image: 'p' },
            { name: 'shipper', image: 's', podInjectPolicy: 'AfterAppContainer' },
          ],
        },
        { 'kruise.cdk8s.io/native-sidecars': 'true' },
      ),
    ]);
    expect(names(p.spec!.containers)).toEqual(['app']);
    expect(names(p.spec!.initContainers)).toEqual(['proxy', 'migrate', 'shipper']);
    expect(p.spec!.initContainers![0]!.restartPolicy).toBe('Always');
    expect(p.spec!.initContainers![1]!.restartPolicy).toBeUndefined();
  });

  it('writes the hash, hash-without-image and injected-list annotations in upstream’s shape', () => {
    const p = pod();
    p.metadata.annotations!['kruise.io/sidecarset-injected-list'] = 'earlier';
    const logs = set('logs', { containers: [logtail], volumes: [{ name: 'logs', emptyDir: {} }] });
    run(p, [logs, set('b-metrics', { containers: [{ name: 'metrics', image: 'm' }] })]);
    const a = p.metadata.annotations!;
    expect(a['kruise.io/sidecarset-injected-list']).toBe('b-metrics,earlier,logs');
    expect(JSON.parse(a['kruise.io/sidecarset-hash']!).logs).toEqual({
      updateTimestamp: '2026-01-01T00:00:00Z',
      hash: sidecarSetHash(logs),
      sidecarSetName: 'logs',
      sidecarList: ['logtail'],
      controllerRevision: sidecarSetRevisionName(logs),
    });
    const withoutImage = JSON.parse(a['kruise.io/sidecarset-hash-without-image']!).logs;
    expect(withoutImage.hash).toBe(sidecarSetHashWithoutImage(logs));
    // As upstream: the without-image entry names no revision.
    expect(withoutImage.controllerRevision).toBeUndefined();
    expect(Object.keys(JSON.parse(a['kruise.io/sidecarset-hash']!)).sort()).toEqual(['b-metrics', 'logs']);
  });

  it('takes the hashes from `hashes` when the caller memoizes them (the webhook does, per cached set)', () => {
    const logs = set('logs', { containers: [logtail], volumes: [{ name: 'logs', emptyDir: {} }] });
    const asked: SidecarSet[] = [];
    const hashes = (s: SidecarSet) => {
      asked.push(s);
      return { hash: sidecarSetHash(s), withoutImage: sidecarSetHashWithoutImage(s), revision: sidecarSetRevisionHash(s) };
    };
    const memoized = pod();
    run(memoized, [logs], { hashes });
    const plain = pod();
    run(plain, [logs]);
    expect(memoized).toEqual(plain);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.every((s) => s === logs)).toBe(true);
    // What it answers is what is written: a wrong memo would show in the annotations and the revision name.
    const wrong = pod();
    run(wrong, [logs], { hashes: () => ({ hash: 'h1234567890xyz', withoutImage: 'w1', revision: 'r1234567890xyz' }) });
    const entry = JSON.parse(wrong.metadata.annotations!['kruise.io/sidecarset-hash']!).logs;
    expect(entry.hash).toBe('h1234567890xyz');
    expect(entry.controllerRevision).toBe('logs-r123456789');
    expect(JSON.parse(wrong.metadata.annotations!['kruise.io/sidecarset-hash-without-image']!).logs.hash).toBe('w1');
  });

  it('sidecarList is sorted by name, as upstream writes it', () => {
    const p = pod();
    run(p, [
      set('two', {
        containers: [
          { name: 'zeta', image: 'z' },
          { name: 'alpha', image: 'a', podInjectPolicy: 'AfterAppContainer' },
        ],
      }),
    ]);
    expect(JSON.parse(p.metadata.annotations!['kruise.io/sidecarset-hash']!).two.sidecarList).toEqual(['alpha', 'zeta']);
  });

  it('patchPodMetadata: Retain, Overwrite, MergePatchJson, and keys outside the whitelist are skipped with a warning', () => {
    const p = pod();
    p.metadata.annotations = { keep: 'mine', over: 'mine', json: '{"a":1,"b":2}' };
    const r = run(
      p,
      [
        set('meta', {
          containers: [{ name: 's', image: 's' }],
          patchPodMetadata: [
            { annotations: { keep: 'theirs', fresh: 'theirs' } },
            { annotations: { over: 'theirs' }, patchPolicy: 'Overwrite' },
            { annotations: { json: '{"b":null,"c":3}' }, patchPolicy: 'MergePatchJson' },
            { annotations: { 'secret.example.com/x': 'y' }, patchPolicy: 'Overwrite' },
          ],
        }),
      ],
      { metadataKeyAllowed: (_s, k) => !k.startsWith('secret.') },
    );
    expect(p.metadata.annotations).toMatchObject({ keep: 'mine', fresh: 'theirs', over: 'theirs', json: '{"a":1,"c":3}' });
    expect(p.metadata.annotations).not.toHaveProperty('secret.example.com/x');
    expect('warnings' in r && r.warnings.join()).toMatch(/secret\.example\.com\/x.*whitelist/);
  });

  it('refuses a pod two SidecarSets would inject the same container name into, naming both', () => {
    const r = run(pod(), [set('a', { containers: [{ name: 'x', image: '1' }] }), set('b', { containers: [{ name: 'x', image: '2' }] })]);
    expect(r).toEqual({ deny: expect.stringMatching(/SidecarSets a and b both inject a container named "x"/) });
  });

  it('injectionStrategy.revision pins new pods to a revision; Partial lets the draw give selected pods the latest', () => {
    const latest = set('logs', {
      containers: [{ name: 'logtail', image: 'logtail:2' }],
      injectionStrategy: { revision: { revisionName: 'logs-old', policy: 'Always' } },
    });
    const old = { name: 'logs-old', data: { spec: { containers: [{ name: 'logtail', image: 'logtail:1' }] } } };
    const pinned = pod();
    run(pinned, [latest], { pinnedRevision: () => old });
    expect(pinned.spec!.containers[0]!.image).toBe('logtail:1');
    expect(JSON.parse(pinned.metadata.annotations!['kruise.io/sidecarset-hash']!).logs.controllerRevision).toBe('logs-old');

    const partial = set('logs', {
      containers: [{ name: 'logtail', image: 'logtail:2' }],
      injectionStrategy: { revision: { revisionName: 'logs-old', policy: 'Partial' } },
      updateStrategy: { partition: '80%' },
    });
    const lucky = pod();
    run(lucky, [partial], { pinnedRevision: () => old, random: () => 0.9 });
    expect(lucky.spec!.containers[0]!.image).toBe('logtail:2');
    const held = pod();
    run(held, [partial], { pinnedRevision: () => old, random: () => 0.5 });
    expect(held.spec!.containers[0]!.image).toBe('logtail:1');

    expect(run(pod(), [latest], { pinnedRevision: () => undefined })).toEqual({
      deny: expect.stringMatching(/injectionStrategy\.revision revisionName "logs-old" names no ControllerRevision/),
    });
  });

  it('canary upgrade (Partial pin, update selector, no partition): selected new pods get the latest, the others the pin', () => {
    const canary = set('logs', {
      containers: [{ name: 'logtail', image: 'logtail:2', env: [{ name: 'SOME_ENV', value: 'x' }] }],
      updateStrategy: { selector: { matchLabels: { version: 'canary' } } },
      injectionStrategy: { revision: { customVersion: '0', policy: 'Partial' } },
    });
    const stable = { name: 'logs-stable', data: { spec: { containers: [{ name: 'logtail', image: 'logtail:1' }] } } };
    const image = (version: string, strategy: SidecarSet['spec']['updateStrategy'], draw: number) => {
      const p = pod({}, { app: 'web', version });
      run(p, [set('logs', { ...canary.spec, updateStrategy: strategy })], { pinnedRevision: () => stable, random: () => draw });
      return p.spec!.containers.find((c) => c.name === 'logtail')!.image;
    };
    const selector = canary.spec.updateStrategy!.selector;
    // As upstream, whatever the draw: no partition, or a number of pods (upstream's default is 0), keeps none.
    for (const draw of [0, 0.5, 0.999]) {
      expect(image('canary', { selector }, draw)).toBe('logtail:2');
      expect(image('canary', { selector, partition: 0 }, draw)).toBe('logtail:2');
      expect(image('canary', { selector, partition: 1 }, draw)).toBe('logtail:2');
      expect(image('stable', { selector }, draw)).toBe('logtail:1');
      // Paused: every new pod gets the pinned revision.
      expect(image('canary', { selector, paused: true }, draw)).toBe('logtail:1');
    }
    expect(partitionFraction(undefined)).toBe(0);
    expect(partitionFraction(3)).toBe(0);
    expect(partitionFraction('30%')).toBe(0.3);
    expect(partitionFraction('150%')).toBe(1);
  });

  it('a pinned revision replaces the injected fields: what it does not record (or records as null) was not set then', () => {
    const latest = set('logs', {
      containers: [{ name: 'logtail', image: 'logtail:2', volumeMounts: [{ name: 'logs', mountPath: '/logs' }] }],
      volumes: [{ name: 'logs', emptyDir: {} }],
      imagePullSecrets: [{ name: 'new-secret' }],
      injectionStrategy: { revision: { revisionName: 'logs-old', policy: 'Always' } },
    });
    const old = {
      name: 'logs-old',
      data: {
        spec: {
          $patch: 'replace',
          containers: [{ name: 'logtail', image: 'logtail:1', volumeMounts: [{ name: 'logs', mountPath: '/logs' }] }],
          volumes: [{ name: 'logs', hostPath: { path: '/var/log/old' } }],
          initContainers: null,
          // imagePullSecrets absent: revisions written before the keys were always present.
        },
      },
    };
    const p = pod();
    run(p, [latest], { pinnedRevision: () => old });
    expect(p.spec!.containers[0]).toMatchObject({ name: 'logtail', image: 'logtail:1' });
    const named = (xs: unknown) => (xs ?? []) as { name: string }[];
    expect(named(p.spec!.volumes).find((v) => v.name === 'logs')).toEqual({ name: 'logs', hostPath: { path: '/var/log/old' } });
    expect(named(p.spec!.imagePullSecrets).map((s) => s.name)).not.toContain('new-secret');
    // The latest version injects its own.
    const fresh = pod();
    run(fresh, [set('logs', { ...latest.spec, injectionStrategy: {} })]);
    expect(named(fresh.spec!.imagePullSecrets).map((s) => s.name)).toContain('new-secret');
  });

  it('refuses a pod when the pinned revision data is not a SidecarSet revision (edited by hand), naming it', () => {
    const latest = set('logs', {
      containers: [{ name: 'logtail', image: 'logtail:2' }],
      injectionStrategy: { revision: { revisionName: 'logs-old' } },
    });
    for (const data of [{}, { spec: 'x' }, { spec: { containers: { name: 'logtail' } } }]) {
      const r = run(pod(), [latest], { pinnedRevision: () => ({ name: 'logs-old', data: data as never }) });
      expect(r).toEqual({ deny: expect.stringMatching(/SidecarSet logs: ControllerRevision logs-old cannot be injected: its data/) });
    }
  });

  it('hash-without-image changes with anything but the image', () => {
    const a = set('s', { containers: [{ name: 'c', image: '1' }] });
    const b = set('s', { containers: [{ name: 'c', image: '2' }] });
    const c = set('s', { containers: [{ name: 'c', image: '2', args: ['-v'] }] });
    expect(sidecarSetHash(a)).not.toBe(sidecarSetHash(b));
    expect(sidecarSetHashWithoutImage(a)).toBe(sidecarSetHashWithoutImage(b));
    expect(sidecarSetHashWithoutImage(b)).not.toBe(sidecarSetHashWithoutImage(c));
    expect(sidecarSetHash(a)).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{64}$/);
  });

  it('an init container’s podInjectPolicy AfterAppContainer (the CRD default) hashes as unset; BeforeAppContainer counts', () => {
    const native = { name: 'proxy', image: 'p:1', restartPolicy: 'Always' as const };
    const before = set('s', { containers: [{ name: 'c', image: '1' }], initContainers: [native] });
    const defaulted = set('s', {
      containers: [{ name: 'c', image: '1' }],
      initContainers: [{ ...native, podInjectPolicy: 'AfterAppContainer' }],
    });
    expect(sidecarSetHash(defaulted)).toBe(sidecarSetHash(before));
    expect(sidecarSetHashWithoutImage(defaulted)).toBe(sidecarSetHashWithoutImage(before));
    const first = set('s', { ...before.spec, initContainers: [{ ...native, podInjectPolicy: 'BeforeAppContainer' }] });
    expect(sidecarSetHashWithoutImage(first)).not.toBe(sidecarSetHashWithoutImage(before));
    // The native init container itself still counts.
    expect(sidecarSetHash(set('s', { ...before.spec, initContainers: [{ ...native, image: 'p:2' }] }))).not.toBe(sidecarSetHash(before));
  });
});

describe('resourcesPolicy', () => {
  const limited = (name: string, cpu: string, memory: string) => ({
    name,
    image: 'nginx',
    resources: { limits: { cpu, memory }, requests: { cpu, memory } },
  });
  const withPolicy = (mode: 'sum' | 'max', regex?: string) =>
    set('proxy', {
      containers: [
        {
          name: 'envoy',
          image: 'envoy',
          resourcesPolicy: {
            targetContainersMode: mode,
            ...(regex ? { targetContainersNameRegex: regex } : {}),
            resourcesExpr: { limits: { cpu: 'cpu*50%', memory: 'max(memory*25%, 64Mi)' }, requests: { cpu: 'cpu/4' } },
          },
        },
      ],
    });

  it('gives the injected sidecar the computed resources and drops the policy field', () => {
    const p = pod({ containers: [limited('app', '1', '512Mi'), limited('worker', '500m', '128Mi')] });
    expect(run(p, [withPolicy('sum')])).toEqual({ injected: ['proxy'], warnings: [] });
    const envoy = p.spec!.containers.find((c) => c.name === 'envoy')!;
    expect(envoy.resources).toEqual({ limits: { cpu: '750m', memory: '160Mi' }, requests: { cpu: '375m' } });
    expect(envoy).not.toHaveProperty('resourcesPolicy');

    const q = pod({ containers: [limited('app', '1', '512Mi'), limited('worker', '500m', '128Mi')] });
    run(q, [withPolicy('max')]);
    expect(q.spec!.containers.find((c) => c.name === 'envoy')!.resources).toEqual({
      limits: { cpu: '500m', memory: '128Mi' },
      requests: { cpu: '250m' },
    });
  });

  it('refuses the pod when no container matches the regex', () => {
    const p = pod({ containers: [limited('app', '1', '512Mi')] });
    expect(run(p, [withPolicy('sum', '^db$')])).toEqual({
      deny: 'SidecarSet proxy: resourcesPolicy of container envoy: no containers match the regex pattern "^db$"',
    });
  });
});
