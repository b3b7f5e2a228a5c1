// Issue 28, part 2: the feature report says what the bundled runtime does, all of it and nothing false. One test per
// finding, through the code paths a user runs: the KruiseRuntime construct and validateManifests over its output
// (what `synth` and the cdk8s plugin run), `cdk8s-kruise validate` on files, and the runtime's validating webhook.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ApiObject, Chart, Size, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CloneSet,
  CloneSetUpdateStrategy,
  KruiseRuntime,
  LifecycleHook,
  RuntimeTarget,
  type KruiseRuntimeProps,
} from '../../constructs/index.js';
import { BUNDLED_SERVES } from '../../src/api/feature-uses.js';
import { CloneSetDefinition } from '../../src/api/registry.js';
import { AppFeature, BUNDLED_RUNTIME_GATES, FEATURES, needsOf } from '../../src/contracts/features.js';
import { CONDITION_KRUISE_POD_READY, POD_MUTATING_PATH } from '../../src/contracts/index.js';
import { kindWebhookPath } from '../../src/install/webhooks.js';
import { validateManifests, type Finding } from '../../src/policy/index.js';
import { policyObjectValidator } from '../../src/cli/policy-validator.js';
import { newPod } from '../../src/runtime/controllers/cloneset/scale-decision.js';
import { validateWith } from '../../src/runtime/webhooks/kruisevalidation/decision.js';
import { kruiseValidationWebhook } from '../../src/runtime/webhooks/kruisevalidation/index.js';
import { post, review, startAdmissionServer, type RunningServer } from './support/admission-server.js';
import { runCli } from './support/cli.js';
import { advancedCronJob } from './support/manifests.js';

type Obj = Record<string, any>;

/** An app with a KruiseRuntime and one chart built by `build`; every object the app renders. */
function synthApp(build: (chart: Chart) => void, props: KruiseRuntimeProps = {}): { objects: Obj[]; runtime: KruiseRuntime } {
  const app = Testing.app();
  const runtime = new KruiseRuntime(app, 'kruise', props);
  build(new Chart(app, 'app'));
  app.synth();
  return { objects: app.charts.flatMap((c) => c.toJson() as Obj[]), runtime };
}

const raw = (chart: Chart, id: string, object: Obj) => new ApiObject(chart, id, object as never);
const runtimeFindings = (objects: readonly unknown[]): Finding[] =>
  validateManifests(objects).filter((f) => f.ruleId.startsWith('KRUISE-RUNTIME-'));
const summary = (fs: readonly Finding[]) =>
  fs.map((f) => ({ ruleId: f.ruleId, severity: f.severity, kind: f.resource.kind, pointer: f.jsonPointer }));

const cloneSet = (spec: Obj = {}, metadata: Obj = {}): Obj => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { name: 'web', namespace: 'default', ...metadata },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.25' }] } },
    ...spec,
  },
});
// An AdvancedCronJob stands for a part the bundled runtime does not carry out: upstream serves the kind, it does not.
const cronJob = (): Obj => advancedCronJob('default');
const sidecarSet = (container: Obj): Obj => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 'logtail' },
  spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'logtail', image: 'busybox:1.36', ...container }] },
});

describe('false warning: lifecycle markPodNotReady (the README tour CloneSet)', () => {
  // The CloneSet of the README's tour, as written there.
  const tour = (chart: Chart) => {
    const web = new CloneSet(chart, 'web', {
      replicas: 4,
      podMetadata: { labels: { app: 'webserver' } },
      updateStrategy: CloneSetUpdateStrategy.inPlaceIfPossible({ maxUnavailable: kplus.PercentOrAbsolute.absolute(1) }),
      lifecycle: {
        preNormal: LifecycleHook.byFinalizers(['example.io/unready-blocker']),
        preDelete: LifecycleHook.byLabels({ 'example.io/block-delete': 'true' }, { markPodNotReady: true }),
      },
      scaleStrategy: { disablePVCReuse: true },
    });
    const data = web.addVolumeClaimTemplate({ name: 'data', storage: Size.gibibytes(10) });
    web.addContainer({ name: 'redis', image: 'redis:7.2' }).mount('/data', data);
  };

  it('yields no KRUISE-RUNTIME-001 under the bundled target, and registers no pod webhook for it', () => {
    const { objects, runtime } = synthApp(tour);
    expect(runtime.report().uses.map((u) => u.feature)).toContain(AppFeature.LIFECYCLE_MARK_POD_NOT_READY);
    expect(runtimeFindings(objects)).toEqual([]);
    expect(validateManifests(objects).filter((f) => f.severity !== 'info')).toEqual([]);
    // The bundled CloneSet controller adds the KruisePodReady gate itself: no cluster-wide pod webhook, no PodWebhook gate.
    expect(runtime.report().podWebhook).toBe(false);
    const hooks = objects.filter((o) => o.kind === 'MutatingWebhookConfiguration').flatMap((o) => o.webhooks as Obj[]);
    expect(hooks.map((h) => h.clientConfig.service.path)).not.toContain(POD_MUTATING_PATH);
    expect(runtime.report().gates.required.has('PodWebhook')).toBe(false);
  });

  it('upstream needs its pod webhook for it (it injects the gate there), the bundled runtime does not', () => {
    expect(needsOf(AppFeature.LIFECYCLE_MARK_POD_NOT_READY, 'upstream')).toMatchObject({ podWebhook: true, gates: ['PodWebhook'] });
    expect(needsOf(AppFeature.LIFECYCLE_MARK_POD_NOT_READY, 'bundled')).toMatchObject({ podWebhook: false, gates: [] });
    const { runtime } = synthApp(tour, { target: RuntimeTarget.OPENKRUISE });
    expect(runtime.report().gates.required.get('PodWebhook')?.use.feature).toBe(AppFeature.LIFECYCLE_MARK_POD_NOT_READY);
  });

  it('is carried out because the bundled CloneSet controller gives the pods it creates the KruisePodReady gate', () => {
    const cs = { ...cloneSet(), metadata: { name: 'web', namespace: 'default', uid: 'u' } };
    const pod = newPod(cs as never, 'web-abcde', 'abcde', { metadata: { name: 'web-5f7d9' } } as never, {}, '2026-01-01T00:00:00Z');
    const gates = (pod.spec as { readinessGates?: Array<{ conditionType: string }> } | undefined)?.readinessGates ?? [];
    expect(gates.map((g) => g.conditionType)).toContain(CONDITION_KRUISE_POD_READY);
  });
});

describe('silent before, reported now', () => {
  it('ImageListPullJob, v1alpha1 or v1beta1: the bundled runtime carries it out (one ImagePullJob per image), nothing reported', () => {
    const { objects } = synthApp((c) => {
      for (const v of ['v1alpha1', 'v1beta1'])
        raw(c, `list-${v}`, {
          apiVersion: `apps.kruise.io/${v}`,
          kind: 'ImageListPullJob',
          metadata: { name: `prepull-${v}`, namespace: 'default' },
          spec: { images: ['nginx:1.25'], completionPolicy: { type: 'Always' } },
        });
    });
    expect(objects.filter((o) => o.kind === 'ImageListPullJob')).toHaveLength(2);
    expect(summary(runtimeFindings(objects))).toEqual([]);
  });

  it('Advanced StatefulSet at either version: carried out, no warning', () => {
    const { objects } = synthApp((c) => {
      for (const v of ['v1alpha1', 'v1beta1'])
        raw(c, `sts-${v}`, {
          apiVersion: `apps.kruise.io/${v}`,
          kind: 'StatefulSet',
          metadata: { name: `db-${v}`, namespace: 'default' },
          spec: {
            replicas: 3,
            selector: { matchLabels: { app: 'db' } },
            template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'db:1' }] } },
            ...(v === 'v1beta1' ? { persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete' }, reserveOrdinals: [1] } : {}),
          },
        });
    });
    expect(summary(runtimeFindings(objects))).toEqual([]);
  });

  it('Advanced DaemonSet at either version: carried out, no warning; its preNormal/inPlaceUpdate hooks are ours only', () => {
    const agent = (apiVersion: string, lifecycle?: Record<string, unknown>) => ({
      apiVersion,
      kind: 'DaemonSet',
      metadata: { name: `agent-${apiVersion.split('/')[1]}`, namespace: 'default' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'a', image: 'a:1' }] } },
        ...(lifecycle ? { lifecycle } : {}),
      },
    });
    const { objects } = synthApp((c) => {
      raw(c, 'a', agent('apps.kruise.io/v1alpha1', { preDelete: { labelsHandler: { hold: 'true' } } }));
      raw(c, 'b', agent('apps.kruise.io/v1beta1'));
    });
    expect(runtimeFindings(objects)).toEqual([]);
  });

  it('target openkruise: a preNormal or inPlaceUpdate hook on an Advanced DaemonSet is reported, preDelete is not', () => {
    let thrown: Error | undefined;
    let objects: Obj[] = [];
    try {
      objects = synthApp(
        (c) =>
          raw(c, 'a', {
            apiVersion: 'apps.kruise.io/v1alpha1',
            kind: 'DaemonSet',
            metadata: { name: 'agent', namespace: 'default' },
            spec: {
              selector: { matchLabels: { app: 'agent' } },
              template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'a', image: 'a:1' }] } },
              lifecycle: {
                preDelete: { labelsHandler: { d: 'true' } },
                preNormal: { labelsHandler: { n: 'true' } },
                inPlaceUpdate: { finalizersHandler: ['x/y'] },
              },
            },
          }),
        { target: RuntimeTarget.OPENKRUISE },
      ).objects;
    } catch (err) {
      thrown = err as Error;
    }
    expect(objects).toEqual([]);
    const lines = (thrown?.message ?? '').split('\n').filter((l) => l.includes('DaemonSet default/agent'));
    expect(lines.map((l) => /at (\/\S+),/.exec(l)?.[1])).toEqual(['/spec/lifecycle/inPlaceUpdate', '/spec/lifecycle/preNormal']);
    expect(lines[0]).toMatch(
      /uses Advanced DaemonSet preNormal and inPlaceUpdate hooks at .*, which upstream OpenKruise does not carry out/,
    );
    expect(lines[0]).toMatch(/webhook refuses an inPlaceUpdate hook, and its controller ignores preNormal/);
  });

  it('a Kruise kind or version nobody names: the bundled runtime serves v1alpha1 only, upstream may serve the rest', () => {
    const { objects } = synthApp((c) =>
      raw(c, 'v1beta1', { ...cloneSet(), apiVersion: 'apps.kruise.io/v1beta1', spec: { replicas: 1 } } as Obj),
    );
    const [f, ...rest] = runtimeFindings(objects);
    expect(rest).toEqual([]);
    expect(f).toMatchObject({
      ruleId: 'KRUISE-RUNTIME-001',
      jsonPointer: '',
      message: expect.stringMatching(/^uses an unmodelled Kruise kind or version/),
    });
    expect(f!.hint).toMatch(/upstream OpenKruise may serve apps.kruise.io\/v1beta1 CloneSet: use target openkruise\.$/);
  });

  it('SidecarSet resourcesPolicy and shareVolumeDevicePolicy, which the bundled injection carries out, are not reported', () => {
    const policy = { targetContainersMode: 'sum', resourcesExpr: { limits: { cpu: 'cpu*50%' } } };
    const { objects } = synthApp((c) => {
      raw(c, 'resources', sidecarSet({ resourcesPolicy: policy }));
      raw(c, 'devices', {
        ...sidecarSet({ name: 'devices', shareVolumeDevicePolicy: { type: 'enabled' } }),
        metadata: { name: 'devices' },
      });
    });
    expect(validateManifests(objects).filter((f) => f.severity === 'error')).toEqual([]);
    expect(summary(runtimeFindings(objects))).toEqual([]);
  });

  it('CloneSet: in-place grace period, progressDeadlineSeconds and image pre-download (v1alpha1: annotations) are carried out', () => {
    const { objects } = synthApp((c) => {
      raw(c, 'grace', cloneSet({ updateStrategy: { type: 'InPlaceIfPossible', inPlaceUpdateStrategy: { gracePeriodSeconds: 10 } } }));
      raw(
        c,
        'prepull',
        cloneSet(
          { progressDeadlineSeconds: 600 },
          { name: 'prepull', annotations: { 'apps.kruise.io/image-predownload-parallelism': '5' } },
        ),
      );
    });
    expect(summary(runtimeFindings(objects))).toEqual([]);
    // Upstream v1.9 has no imagePreDownload* fields in the v1alpha1 schema: written there, they are schema errors.
    const fields = validateManifests([
      cloneSet({ updateStrategy: { inPlaceUpdateStrategy: { imagePreDownloadParallelism: 2, imagePreDownloadMinUpdatedReadyPods: 1 } } }),
    ]);
    expect(
      fields
        .filter((f) => f.ruleId === 'KRUISE-SCHEMA-001')
        .map((f) => f.jsonPointer)
        .sort(),
    ).toEqual([
      '/spec/updateStrategy/inPlaceUpdateStrategy/imagePreDownloadMinUpdatedReadyPods',
      '/spec/updateStrategy/inPlaceUpdateStrategy/imagePreDownloadParallelism',
    ]);
  });

  describe('apps.kruise.io/using-enhanced-liveness: carried out by the bundled runtime, a synth error under target openkruise', () => {
    const deployment = (c: Chart) =>
      raw(c, 'web', {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'default' },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' }, annotations: { 'apps.kruise.io/using-enhanced-liveness': 'true' } },
            spec: { containers: [{ name: 'web', image: 'nginx:1.25', livenessProbe: { httpGet: { port: 80 } } }] },
          },
        },
      });
    const pointer = '/spec/template/metadata/annotations/apps.kruise.io~1using-enhanced-liveness';

    it('bundled target: no finding; the gates, the daemon and the pod webhook are inferred', () => {
      const { objects } = synthApp(deployment);
      expect(runtimeFindings(objects)).toEqual([]);
      expect(needsOf(AppFeature.ENHANCED_LIVENESS_PROBE, 'bundled')).toEqual({
        gates: ['EnhancedLivenessProbe', 'PodProbeMarkerGate'],
        daemon: true,
        podWebhook: true,
      });
      const manager = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'kruise-controller-manager')!;
      const args: string[] = manager.spec.template.spec.containers[0].args;
      expect(args.find((a) => a.startsWith('--feature-gates='))).toMatch(/EnhancedLivenessProbe=true/);
      expect(objects.some((o) => o.kind === 'DaemonSet' && o.metadata.name === 'kruise-daemon')).toBe(true);
    });

    it('target openkruise: the synth fails, saying upstream would remove the probes and restart nothing', () => {
      let thrown: Error | undefined;
      try {
        synthApp(deployment, { target: RuntimeTarget.OPENKRUISE });
      } catch (err) {
        thrown = err as Error;
      }
      expect(thrown?.message).toContain(
        `Deployment default/web (app/web) uses enhanced liveness probe at ${pointer}, which upstream OpenKruise does not carry out`,
      );
      expect(thrown?.message).toMatch(/would remove the containers' liveness probes from the pod and nothing would restart a container/);
      expect(thrown?.message).toMatch(/Use target bundled/);
    });
  });

  it('SidecarSet patchPodMetadata, which the bundled webhook and controller carry out, is not reported, and its gate is known', () => {
    const { objects } = synthApp((c) =>
      raw(c, 'patch', { ...sidecarSet({}), spec: { ...sidecarSet({}).spec, patchPodMetadata: [{ annotations: { a: 'b' } }] } }),
    );
    expect(runtimeFindings(objects)).toEqual([]);
    expect(FEATURES[AppFeature.SIDECARSET_PATCH_POD_METADATA].carriedOutBy.bundled).toBe(true);
    expect(BUNDLED_RUNTIME_GATES).toHaveProperty('SidecarSetPatchPodMetadataDefaultsAllowed');
    const manager = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'kruise-controller-manager')!;
    expect(JSON.stringify(manager.spec.template.spec.containers[0].args)).toMatch(/SidecarSetPatchPodMetadataDefaultsAllowed=true/);
  });
});

describe('cdk8s-kruise validate on files', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'kruise-support-'));
    const { objects } = synthApp(() => {});
    const yaml = (o: unknown) => JSON.stringify(o);
    writeFileSync(path.join(dir, 'runtime.yaml'), objects.map(yaml).join('\n---\n'));
    writeFileSync(
      path.join(dir, 'app.yaml'),
      [cronJob(), cloneSet({ lifecycle: { preDelete: { labelsHandler: { 'example.io/block': 'true' }, markPodNotReady: true } } })]
        .map(yaml)
        .join('\n---\n'),
    );
  });

  it('reports what the bundled runtime in the same files does not carry out, counted and located, and -W fails on it', async () => {
    const r = await runCli(['validate', '--format', 'json', dir]);
    const report = JSON.parse(r.stdout) as { summary: { warnings: number }; findings: Array<Obj> };
    expect(report.findings.filter((f) => f.ruleId.startsWith('KRUISE-RUNTIME-'))).toEqual([
      expect.objectContaining({
        ruleId: 'KRUISE-RUNTIME-001',
        jsonPointer: '',
        file: expect.stringMatching(/app\.yaml$/),
        line: expect.any(Number),
      }),
    ]);
    expect(report.summary.warnings).toBeGreaterThanOrEqual(1);
    expect((await runCli(['validate', '-W', dir])).code).toBe(1);
  });
});

describe("the runtime's validating webhook answers warnings", () => {
  // The API server sends this webhook only the kinds the bundled runtime serves. Its handlers judge whatever object a
  // request carries, so an AdvancedCronJob, sent by hand to the CloneSet path, stands for a part the runtime does not
  // carry out: a served kind with such a part would be answered the same way.
  const unsupported = cronJob();
  const unsupportedWarning =
    'KRUISE-RUNTIME-001 /: uses AdvancedCronJob, which this version of the bundled runtime does not carry out. ' +
    `Fix: The bundled runtime serves ${BUNDLED_SERVES}; upstream OpenKruise serves apps.kruise.io/v1alpha1 AdvancedCronJob: ` +
    'use target openkruise.';
  const carriedOut = cloneSet(
    { progressDeadlineSeconds: 600, updateStrategy: { inPlaceUpdateStrategy: { gracePeriodSeconds: 5 } } },
    { annotations: { 'apps.kruise.io/image-predownload-parallelism': '5' } },
  );
  // The handlers as `cdk8s-kruise controller` sets them up, with the policy rules injected. Without them the schema
  // check alone runs, and it refuses a kind cdk8s-kruise does not model, so the stand-in would never get as far as
  // its warnings.
  const setupAsController = () => kruiseValidationWebhook.setup({ objectValidator: () => Promise.resolve(policyObjectValidator) } as never);

  it('the decision and its handler, with the policy rules injected (as `cdk8s-kruise controller` runs them)', async () => {
    expect(validateWith(policyObjectValidator, unsupported as never)).toEqual({ allowed: true, warnings: [unsupportedWarning] });
    const handler = setupAsController().find((h) => h.path === kindWebhookPath('validate', CloneSetDefinition))!;
    expect(await handler.handle({ uid: '1', operation: 'CREATE', object: unsupported } as never)).toEqual({
      allowed: true,
      warnings: [unsupportedWarning],
    });
    // Nothing to say about what the runtime carries out (image pre-download included).
    expect(await handler.handle({ uid: '2', operation: 'CREATE', object: cloneSet() } as never)).toEqual({ allowed: true });
    expect(await handler.handle({ uid: '3', operation: 'CREATE', object: carriedOut } as never)).toEqual({ allowed: true });
    // Without the policy rules, the same objects: the stand-in is refused as an unmodelled kind, the rest pass quietly.
    const bare = kruiseValidationWebhook.setup({} as never).find((h) => h.path === kindWebhookPath('validate', CloneSetDefinition))!;
    expect(await bare.handle({ uid: '4', operation: 'CREATE', object: unsupported } as never)).toMatchObject({
      allowed: false,
      code: 422,
      message: expect.stringContaining(
        'AdvancedCronJob nightly is invalid: KRUISE-SCHEMA /kind: apps.kruise.io/v1alpha1 AdvancedCronJob is not a kind cdk8s-kruise models',
      ),
    });
    expect(await bare.handle({ uid: '5', operation: 'CREATE', object: cloneSet() } as never)).toEqual({ allowed: true });
    expect(await bare.handle({ uid: '6', operation: 'CREATE', object: carriedOut } as never)).toEqual({ allowed: true });
  });

  describe('over HTTPS, in the AdmissionReview response', () => {
    let s: RunningServer;
    beforeAll(async () => {
      s = await startAdmissionServer(setupAsController());
    });
    afterAll(() => s?.close());

    it('response.warnings lists each part not carried out, with its pointer and fix', async () => {
      const r = await post(s, kindWebhookPath('validate', CloneSetDefinition), JSON.stringify(review(unsupported)));
      expect(r.status).toBe(200);
      expect(r.json.response).toMatchObject({ allowed: true, warnings: [unsupportedWarning] });
    });
  });
});
