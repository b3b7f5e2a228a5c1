import { describe, expect, it } from 'vitest';
import { AppFeature, detectFeatures } from '../../../src/install/app-features.js';
import {
  FEATURE_GATES,
  GATE_CASCADES,
  featureGatesOfInstall,
  gateSpec,
  installGateConflicts,
  prerequisitesOf,
  requiredGates,
  resolveGates,
} from '../../../src/install/feature-gates.js';
import { FEATURES } from '../../../src/contracts/features.js';
import type { KubeObject } from '../../../src/install/types.js';

const job = (env: { name: string; value: string }[], annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'j', namespace: 'ns' },
  spec: {
    template: {
      metadata: annotations ? { annotations } : {},
      spec: {
        restartPolicy: 'Never',
        containers: [
          { name: 'main', image: 'busybox' },
          { name: 'sidecar', image: 'envoy', env },
        ],
      },
    },
  },
});

const kruise = (kind: string, spec: Record<string, unknown> = {}, group = 'apps.kruise.io'): KubeObject => ({
  apiVersion: `${group}/v1alpha1`,
  kind,
  metadata: { name: kind.toLowerCase(), namespace: 'ns' },
  spec,
});

const gateNames = (objs: KubeObject[]) => [...new Set(requiredGates(objs).map((r) => r.gate))].sort();

describe('gate model', () => {
  it('has upstream defaults (v1.9.x)', () => {
    for (const on of [
      'PodWebhook',
      'KruiseDaemon',
      'DaemonWatchingPod',
      'WorkloadSpread',
      'PodUnavailableBudgetDeleteGate',
      'InPlaceUpdateEnvFromMetadata',
      'StatefulSetAutoDeletePVC',
      'PodProbeMarkerGate',
      'PodIndexLabel',
    ]) {
      expect(gateSpec(on)?.default, on).toBe(true);
    }
    for (const off of [
      'SidecarTerminator',
      'ImagePullJobGate',
      'ResourcesDeletionProtection',
      'CloneSetEventHandlerOptimization',
      'KruisePodReadinessGate',
      'EnableExternalCerts',
      'ResourceDistributionGate',
    ]) {
      expect(gateSpec(off)?.default, off).toBe(false);
    }
    expect(new Set(FEATURE_GATES.map((g) => g.name)).size).toBe(FEATURE_GATES.length);
  });

  it('cascades only name known gates, and every feature needs only known gates', () => {
    for (const c of GATE_CASCADES) for (const g of [c.parent, ...c.forces]) expect(gateSpec(g), g).toBeDefined();
    for (const r of Object.values(FEATURES)) for (const g of r.gates) expect(gateSpec(g), g).toBeDefined();
  });

  it('knows the KruiseDaemon and PodWebhook prerequisites', () => {
    expect(prerequisitesOf('SidecarTerminator')).toEqual(['KruiseDaemon']);
    expect(prerequisitesOf('ImagePullJobGate')).toEqual(['KruiseDaemon']);
    expect(prerequisitesOf('WorkloadSpread')).toEqual(['PodWebhook']);
    expect(prerequisitesOf('DeletionProtectionForCRDCascadingGate')).toEqual(['ResourcesDeletionProtection']);
    expect(prerequisitesOf('PodWebhook')).toEqual([]);
  });
});

describe('requiredGates', () => {
  it('turns SidecarTerminator (and KruiseDaemon) on for a kill-mode sidecar, case-insensitively', () => {
    expect(gateNames([job([{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'TRUE' }])])).toEqual([
      'KruiseDaemon',
      'SidecarTerminator',
    ]);
  });

  it('turns SidecarTerminator on for a quick-exit-image sidecar', () => {
    const uses = detectFeatures([{ object: job([{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE', value: 'exit:0' }]) }]);
    expect(uses.map((u) => u.feature)).toEqual([AppFeature.SIDECAR_TERMINATOR_QUICK_EXIT]);
    expect(uses[0]!.pointer).toBe('/spec/template/spec/containers/1/env/0');
  });

  it('needs nothing for a marker set to false or for an unmarked app', () => {
    expect(gateNames([job([{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'false' }])])).toEqual([]);
    expect(gateNames([job([])])).toEqual([]);
  });

  it('turns ImagePullJobGate on for ImagePullJob and ImageListPullJob', () => {
    expect(gateNames([kruise('ImagePullJob', { image: 'nginx:1.9.1' })])).toEqual(['ImagePullJobGate', 'KruiseDaemon']);
    expect(gateNames([kruise('ImageListPullJob', { images: ['a'] })])).toEqual(['ImagePullJobGate', 'KruiseDaemon']);
  });

  it('maps the other kinds and fields', () => {
    expect(gateNames([kruise('ContainerRecreateRequest')])).toEqual(['KruiseDaemon']);
    expect(gateNames([kruise('SidecarSet', { selector: {} })])).toEqual(['PodWebhook']);
    expect(gateNames([kruise('SidecarSet', { patchPodMetadata: [{ annotations: { a: 'b' } }] })])).toEqual([
      'PodWebhook',
      'SidecarSetPatchPodMetadataDefaultsAllowed',
    ]);
    expect(gateNames([kruise('PodUnavailableBudget', {}, 'policy.kruise.io')])).toEqual(['PodUnavailableBudgetDeleteGate', 'PodWebhook']);
    expect(gateNames([kruise('CloneSet', { lifecycle: { preDelete: { markPodNotReady: true } } })])).toEqual(['PodWebhook']);
    expect(gateNames([job([], { 'kruise.io/container-exit-priority': '{"envoy":1}' })])).toEqual(['ContainerExitPriority', 'PodWebhook']);
    expect(gateNames([job([{ name: 'KRUISE_CONTAINER_PRIORITY', value: '1' }])])).toEqual(['PodWebhook']);
    const protectedNs: KubeObject = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'x', labels: { 'policy.kruise.io/delete-protection': 'Always' } },
    };
    expect(gateNames([protectedNs])).toEqual(['ResourcesDeletionProtection']);
  });

  it('reads the image pre-download annotations as the pre-download of the kind they tune', () => {
    const annotated = (kind: string, annotations: Record<string, string>, version = 'v1alpha1'): KubeObject => ({
      ...kruise(kind, { selector: { matchLabels: { app: 'a' } } }),
      apiVersion: `apps.kruise.io/${version}`,
      metadata: { name: 'a', namespace: 'ns', annotations },
    });
    const parallelism = { 'apps.kruise.io/image-predownload-parallelism': '2' };
    const features = (o: KubeObject) => detectFeatures([{ object: o }]).map((u) => [u.feature, u.pointer]);
    expect(features(annotated('DaemonSet', parallelism))).toEqual([
      [AppFeature.ADVANCED_DAEMONSET, ''],
      [AppFeature.DAEMONSET_IMAGE_PRE_DOWNLOAD, '/metadata/annotations/apps.kruise.io~1image-predownload-parallelism'],
    ]);
    expect(gateNames([annotated('DaemonSet', parallelism)])).toEqual(['KruiseDaemon', 'PreDownloadImageForDaemonSetUpdate']);
    expect(gateNames([annotated('DaemonSet', { 'apps.kruise.io/image-predownload-timeout-seconds': '60' })])).toEqual([
      'KruiseDaemon',
      'PreDownloadImageForDaemonSetUpdate',
    ]);
    // Upstream's DaemonSet reads min-updated-ready-pods and leaves it unused: no gate for it.
    expect(gateNames([annotated('DaemonSet', { 'apps.kruise.io/image-predownload-min-updated-ready-pods': '1' })])).toEqual([]);
    expect(gateNames([annotated('CloneSet', parallelism)])).toEqual(['KruiseDaemon', 'PreDownloadImageForInPlaceUpdate']);
    expect(gateNames([annotated('StatefulSet', parallelism, 'v1beta1')])).toEqual(['KruiseDaemon', 'PreDownloadImageForInPlaceUpdate']);
  });

  it('sees in-place update env from metadata only with an in-place strategy', () => {
    const cs = (type: string) =>
      kruise('CloneSet', {
        updateStrategy: { type },
        template: {
          spec: {
            containers: [{ name: 'a', image: 'a', env: [{ name: 'V', valueFrom: { fieldRef: { fieldPath: "metadata.labels['v']" } } }] }],
          },
        },
      });
    expect(gateNames([cs('InPlaceIfPossible')])).toEqual(['InPlaceUpdateEnvFromMetadata', 'KruiseDaemon']);
    expect(gateNames([cs('ReCreate')])).toEqual([]);
  });

  it('finds markers in any pod template (CronJob, SidecarSet containers)', () => {
    const cron: KubeObject = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'c' },
      spec: {
        jobTemplate: {
          spec: {
            template: (job([{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }]).spec as { template: unknown }).template,
          },
        },
      },
    };
    expect(gateNames([cron])).toEqual(['KruiseDaemon', 'SidecarTerminator']);
  });
});

describe('resolveGates', () => {
  const sidecar = job([{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }]);

  it('writes the required gates explicitly, sorted', () => {
    const r = resolveGates(requiredGates([sidecar, kruise('ImagePullJob')]));
    expect(r.flag).toBe('ImagePullJobGate=true,KruiseDaemon=true,SidecarTerminator=true');
    expect(r.conflicts).toEqual([]);
    expect(r.values.get('SidecarTerminator')).toBe(true);
  });

  it('leaves defaults alone when nothing is needed, and applies forced values', () => {
    const r = resolveGates([], { ResourcesDeletionProtection: true, PodWebhook: false });
    expect(r.flag).toBe('PodWebhook=false,ResourcesDeletionProtection=true');
    expect(r.values.get('WorkloadSpread')).toBe(false); // cascade from PodWebhook=false
    expect(r.values.get('SidecarTerminator')).toBe(false);
  });

  it('applies the PreDownload cascade (forces ImagePullJobGate on)', () => {
    expect(resolveGates([], { PreDownloadImageForInPlaceUpdate: true }).values.get('ImagePullJobGate')).toBe(true);
  });

  it('reports a forced-off needed gate naming the gate and the resource', () => {
    const r = resolveGates(requiredGates([{ object: sidecar, path: 'app/job' }]), { SidecarTerminator: false });
    expect(r.conflicts).toHaveLength(1);
    expect(r.conflicts[0]).toContain('feature gate SidecarTerminator is forced off');
    expect(r.conflicts[0]).toContain('Job ns/j (app/job)');
    expect(r.conflicts[0]).toContain('/spec/template/spec/containers/1/env/0');
  });

  it('reports a forced-off cascade parent', () => {
    const r = resolveGates(requiredGates([sidecar]), { KruiseDaemon: false });
    expect(r.conflicts.join('\n')).toContain('feature gate KruiseDaemon is forced off, which turns off SidecarTerminator');
  });

  it('rejects unknown gate names with the list of known ones', () => {
    expect(() => resolveGates([], { SidecarTerminater: true })).toThrow(/unknown feature gate "SidecarTerminater".*SidecarTerminator/);
  });
});

describe('gates of an install in the same output (for the policy rule)', () => {
  const deployment = (args: string[], command = ['cdk8s-kruise']): KubeObject => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'kruise-controller-manager', namespace: 'kruise-system' },
    spec: { template: { spec: { containers: [{ name: 'manager', command, args }] } } },
  });
  const sidecar = job([{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }]);

  it('reads --feature-gates of our manager and of upstream kruise-manager', () => {
    expect(featureGatesOfInstall([deployment(['controller', '--feature-gates=SidecarTerminator=true,KruiseDaemon=false'])])).toEqual({
      SidecarTerminator: true,
      KruiseDaemon: false,
    });
    expect(
      featureGatesOfInstall([deployment(['--enable-leader-election', '--feature-gates=ImagePullJobGate=true'], ['/manager'])]),
    ).toEqual({ ImagePullJobGate: true });
    expect(featureGatesOfInstall([sidecar])).toBeUndefined();
  });

  it('reports an app resource needing a gate the install turns off', () => {
    expect(installGateConflicts([sidecar, deployment(['controller', '--feature-gates=SidecarTerminator=false'])])[0]).toMatch(
      /feature gate SidecarTerminator is forced off, but Job ns\/j uses job sidecar termination \(kill\)/,
    );
    expect(installGateConflicts([sidecar, deployment(['controller', '--feature-gates=SidecarTerminator=true'])])).toEqual([]);
    expect(installGateConflicts([sidecar])).toEqual([]);
  });
});
