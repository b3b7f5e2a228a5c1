import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApiObject, Chart, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AppFeature,
  CAPABILITIES_ENV,
  InstalledRuntime,
  KruiseRuntime,
  RuntimeTarget,
  type KruiseRuntimeProps,
  type RuntimeCapabilities,
} from '../../../constructs/kruise-runtime.js';
import { CAPABILITIES_CONFIGMAP, CAPABILITIES_KEY, capabilitiesJson } from '../../../src/install/capabilities.js';

type Obj = Record<string, any>;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'kruise-platform-'));
  dirs.push(d);
  return d;
}

function sidecarJob(chart: Chart, id = 'job') {
  const job = new kplus.Job(chart, id, { containers: [{ name: 'main', image: 'busybox' }] });
  job.addContainer({
    name: 'sidecar',
    image: 'envoy',
    envVariables: { KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT: kplus.EnvValue.fromValue('true') },
  });
  return job;
}
function cloneSet(chart: Chart, id = 'web') {
  return new ApiObject(chart, id, {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: id, namespace: 'team' },
    spec: {
      selector: { matchLabels: { app: id } },
      template: { metadata: { labels: { app: id } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
  });
}

/** The platform app: a bundled runtime asked for the union of the apps' features. */
function platform(props: KruiseRuntimeProps = {}) {
  const app = Testing.app();
  const runtime = new KruiseRuntime(app, 'kruise', props);
  return { app, runtime };
}

/** Writes the platform's synthesized charts into a directory, as its synth output. */
function platformOutput(props: KruiseRuntimeProps): string {
  const { app } = platform(props);
  const dir = tempDir();
  app.charts.forEach((c, i) =>
    writeFileSync(
      path.join(dir, `${i}-${c.node.id}.k8s.yaml`),
      Testing.synth(c)
        .map((d) => `---\n${JSON.stringify(d)}\n`)
        .join(''),
    ),
  );
  return dir;
}

function appAgainst(installed: InstalledRuntime, build: (c: Chart) => void) {
  const app = Testing.app();
  const runtime = new KruiseRuntime(app, 'kruise', { target: RuntimeTarget.PLATFORM, installedRuntime: installed });
  const chart = new Chart(app, 'team');
  build(chart);
  return { app, runtime, chart };
}

describe('platform install (target BUNDLED with features)', () => {
  it('turns on the gates, the daemon and the pod webhook the requested features need, with none of them in the app', () => {
    const { runtime } = platform({ features: [AppFeature.SIDECAR_TERMINATOR_KILL, AppFeature.SIDECARSET] });
    const docs = Testing.synth(runtime) as Obj[];
    const manager = docs.find((d) => d.kind === 'Deployment')!;
    expect(manager.spec.template.spec.containers[0].args).toContain(
      '--feature-gates=KruiseDaemon=true,PodWebhook=true,SidecarTerminator=true',
    );
    expect(docs.some((d) => d.kind === 'DaemonSet')).toBe(true);
    const mutating = docs.find((d) => d.kind === 'MutatingWebhookConfiguration')!;
    expect(mutating.webhooks.map((w: Obj) => w.name)).toContain('mpod.kb.io');
  });

  it('publishes its capabilities in a ConfigMap, the same document capabilities() returns', () => {
    const { runtime } = platform({ features: [AppFeature.IMAGE_PULL_JOB] });
    const docs = Testing.synth(runtime) as Obj[];
    const cm = docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === CAPABILITIES_CONFIGMAP)!;
    expect(cm.metadata.namespace).toBe('kruise-system');
    const caps = JSON.parse(cm.data[CAPABILITIES_KEY]) as RuntimeCapabilities;
    expect(caps).toEqual(runtime.capabilities());
    expect(caps).toMatchObject({
      apiVersion: 'kruise.cdk8s.io/v1alpha1',
      kind: 'RuntimeCapabilities',
      runtime: 'bundled',
      daemon: true,
      podWebhook: false,
    });
    expect(caps.featureGates).toMatchObject({ ImagePullJobGate: true, KruiseDaemon: true, SidecarTerminator: false });
    expect(caps.features).toContain(AppFeature.IMAGE_PULL_JOB);
    expect(caps.servedKinds).toContain('apps.kruise.io/v1alpha1/CloneSet');
  });

  it('rejects a feature that is not an AppFeature, and features outside target BUNDLED', () => {
    expect(() => platform({ features: ['sidecars' as AppFeature] })).toThrow(/kruise: features: "sidecars" is not an AppFeature/);
    expect(() => platform({ target: RuntimeTarget.OPENKRUISE, features: [AppFeature.SIDECARSET] })).toThrow(
      /features only applies to target BUNDLED/,
    );
  });

  it('reports a requested feature the bundled runtime does not carry out, naming the construct', () => {
    // The bundled runtime does not serve AdvancedCronJob (upstream does): its objects stay valid and nothing acts on
    // them, so the report warns rather than fails.
    const { app } = platform({ features: [AppFeature.ADVANCED_CRON_JOB] });
    new Chart(app, 'x');
    const report = (app.node.findChild('kruise') as KruiseRuntime).report();
    expect(report.errors).toEqual([]);
    expect(report.warnings).toEqual([
      'KruiseRuntime kruise (kruise) uses AdvancedCronJob at /features/0, which this version of the bundled runtime does not ' +
        'carry out. Use target openkruise (upstream OpenKruise carries it out).',
    ]);
  });
});

describe('app on a platform install (target PLATFORM)', () => {
  const dist = platformOutput({ features: [AppFeature.SIDECAR_TERMINATOR_KILL] });

  it('emits no install objects and no CRD chart, and passes when the platform has what it uses', () => {
    const { app, runtime } = appAgainst(InstalledRuntime.fromFile(dist), (c) => {
      sidecarJob(c);
      cloneSet(c);
    });
    expect(runtime.crds).toBeUndefined();
    expect(Testing.synth(runtime)).toEqual([]);
    expect(app.charts.map((c) => c.node.id)).toEqual(['kruise', 'team']);
    expect(() => app.synthYaml()).not.toThrow();
    expect(runtime.capabilities()?.featureGates.SidecarTerminator).toBe(true);
  });

  it('fails the synth for a feature the platform lacks, naming the feature, the gate and the fix', () => {
    const { app } = appAgainst(InstalledRuntime.fromFile(dist), (c) => {
      new ApiObject(c, 'pull', {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'ImagePullJob',
        metadata: { name: 'pull', namespace: 'team' },
        spec: { image: 'nginx' },
      });
    });
    expect(() => app.synthYaml()).toThrow(
      new RegExp(
        "ImagePullJob team/pull \\(team/pull\\) uses ImagePullJob, but in the platform's runtime \\(bundled [^,]+, from .*\\) " +
          "feature gate ImagePullJobGate is off\\. Add AppFeature\\.IMAGE_PULL_JOB to the platform KruiseRuntime's `features` " +
          '\\(or featureGates \\{ ImagePullJobGate: true, KruiseDaemon: true \\}\\), synth the platform and commit its new output where .* reads it',
      ),
    );
  });

  it('reads the runtime manifest file and a capabilities JSON file alike', () => {
    const { runtime } = platform({ features: [AppFeature.CONTAINER_RECREATE_REQUEST] });
    const json = path.join(tempDir(), 'kruise-runtime.capabilities.json');
    writeFileSync(json, capabilitiesJson(runtime.capabilities()!));
    const fromJson = appAgainst(InstalledRuntime.fromFile(json), () => {});
    expect(fromJson.runtime.capabilities()).toEqual(runtime.capabilities());
    const fromDoc = appAgainst(InstalledRuntime.fromDocument(runtime.capabilities()!), () => {});
    expect(fromDoc.runtime.capabilities()).toEqual(runtime.capabilities());
  });

  it('reads what `synth --capabilities-from-cluster` passes in the environment by default', () => {
    const { runtime } = platform();
    const json = path.join(tempDir(), 'from-cluster.json');
    writeFileSync(json, capabilitiesJson(runtime.capabilities()!));
    const before = process.env[CAPABILITIES_ENV];
    try {
      delete process.env[CAPABILITIES_ENV];
      expect(() => new KruiseRuntime(Testing.app(), 'kruise', { target: RuntimeTarget.PLATFORM })).toThrow(
        /kruise: target PLATFORM: no runtime capabilities: CDK8S_KRUISE_CAPABILITIES is not set\. Run the synth as `cdk8s-kruise synth --capabilities-from-cluster`/,
      );
      process.env[CAPABILITIES_ENV] = json;
      const rt = new KruiseRuntime(Testing.app(), 'kruise', { target: RuntimeTarget.PLATFORM });
      expect(rt.capabilities()?.namespace).toBe('kruise-system');
    } finally {
      if (before === undefined) delete process.env[CAPABILITIES_ENV];
      else process.env[CAPABILITIES_ENV] = before;
    }
  });

  it('refuses missing, empty, foreign and hostile sources with the construct path and the file', () => {
    const dir = tempDir();
    const at = (name: string, content: string) => {
      const p = path.join(dir, name);
      writeFileSync(p, content);
      return p;
    };
    const make = (source: InstalledRuntime) => () => appAgainst(source, () => {});
    expect(make(InstalledRuntime.fromFile(path.join(dir, 'nope.json')))).toThrow(
      /kruise: target PLATFORM: cannot read runtime capabilities from ".*nope\.json": ENOENT/,
    );
    expect(make(InstalledRuntime.fromFile(at('app.yaml', 'apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n')))).toThrow(
      /app\.yaml holds no ConfigMap kruise-runtime-capabilities/,
    );
    expect(make(InstalledRuntime.fromFile(at('bad.json', '{"apiVersion": 1}')))).toThrow(
      /bad\.json: unknown field|bad\.json: apiVersion\/kind must be/,
    );
    const bomb = `a: &a [x, x, x, x, x, x, x, x, x]\n${Array.from({ length: 12 }, (_, i) => `b${i}: &b${i} [*${i === 0 ? 'a' : `b${i - 1}`}, *${i === 0 ? 'a' : `b${i - 1}`}]`).join('\n')}\n# kruise-runtime-capabilities\n`;
    expect(make(InstalledRuntime.fromFile(at('bomb.yaml', bomb)))).toThrow(/bomb\.yaml/);
    const empty = path.join(dir, 'empty');
    mkdirSync(empty);
    expect(make(InstalledRuntime.fromFile(empty))).toThrow(/empty holds no ConfigMap kruise-runtime-capabilities in its manifests/);
    expect(() => InstalledRuntime.fromFile('')).toThrow(/path must be a non-empty string/);
    expect(() => InstalledRuntime.fromDocument({ apiVersion: 'x' })).toThrow(
      /InstalledRuntime\.fromDocument: unknown field|apiVersion\/kind/,
    );
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: CAPABILITIES_CONFIGMAP },
      data: { [CAPABILITIES_KEY]: '{"apiVersion":"kruise.cdk8s.io/v1alpha1","kind":"RuntimeCapabilities","runtime":"bundled"}' },
    };
    expect(make(InstalledRuntime.fromFile(at('cm.yaml', JSON.stringify(cm))))).toThrow(
      /cm\.yaml \(ConfigMap kruise-runtime-capabilities\): missing field "version"/,
    );
  });

  it('checks against an upstream install described by hand (runtime "upstream"), with upstream\'s needs and schema', () => {
    const upstream = {
      apiVersion: 'kruise.cdk8s.io/v1alpha1',
      kind: 'RuntimeCapabilities',
      runtime: 'upstream',
      version: '1.9.1',
      namespace: 'kruise-system',
      // The chart's default featureGates value.
      featureGates: { ImagePullJobGate: true, KruiseDaemon: true, PodWebhook: true, WorkloadSpread: true },
      daemon: true,
      podWebhook: true,
      servedKinds: ['apps.kruise.io/v1alpha1/CloneSet', 'apps.kruise.io/v1alpha1/WorkloadSpread'],
      features: [],
    };
    const spread = (c: Chart) =>
      new ApiObject(c, 'ws', {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'WorkloadSpread',
        metadata: { name: 'ws', namespace: 'team' },
        spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets: [{ name: 'a', maxReplicas: 2 }] },
      });
    const ok = appAgainst(InstalledRuntime.fromDocument(upstream), spread);
    expect(() => ok.app.synthYaml()).not.toThrow();
    const off = appAgainst(
      InstalledRuntime.fromDocument({ ...upstream, featureGates: { ...upstream.featureGates, WorkloadSpread: false } }),
      spread,
    );
    expect(() => off.app.synthYaml()).toThrow(
      /WorkloadSpread team\/ws \(team\/ws\) uses WorkloadSpread, but in the platform's runtime \(upstream 1\.9\.1, from a capabilities document\) feature gate WorkloadSpread is off/,
    );
    const sidecar = appAgainst(InstalledRuntime.fromDocument(upstream), (c) => sidecarJob(c));
    expect(() => sidecar.app.synthYaml()).toThrow(/feature gate SidecarTerminator is off/);
  });

  it('refuses install props that would change nothing under target PLATFORM', () => {
    expect(
      () =>
        new KruiseRuntime(Testing.app(), 'kruise', {
          target: RuntimeTarget.PLATFORM,
          installedRuntime: InstalledRuntime.fromFile(dist),
          replicas: 3,
          nodeSelector: { pool: 'system' },
        }),
    ).toThrow(
      /kruise: replicas, nodeSelector configure the install, which the platform's KruiseRuntime emits; with target PLATFORM set them there/,
    );
  });

  it('refuses installedRuntime outside target PLATFORM', () => {
    expect(() => new KruiseRuntime(Testing.app(), 'kruise', { installedRuntime: InstalledRuntime.fromFile(dist) })).toThrow(
      /installedRuntime only applies to target PLATFORM/,
    );
  });
});
