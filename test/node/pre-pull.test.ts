// Pre-pull from the diff on the real node, as a user runs it: an app whose Deployment opts in with ImagePrePull is
// synthesized and applied with `cdk8s-kruise apply`; its image is changed in the app, `synth` compares with the
// previous output and emits an ImagePullJob for the new image, and `apply` applies it before the app and waits for it.
// Proven: the job pulled the new image on the node of the Deployment's pod (the daemon of the runtime installed from
// its image did), it finished before the Deployment's new ReplicaSet existed, and the kubelet found the image already
// present for the new pod (no pull in the rollout). The images are built for this run under names no other test uses,
// so none is on the node before.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findAssets, kubeconfigPath, kubectl, adminKubeConfig } from '../harness/index.js';
import { buildLayout, push } from '../cri-harness/images.js';
import { repoRoot, runCli } from '../unit/support/cli.js';
import { apps, core, ctr, installRuntime, namespace, node, waitFor } from './support.js';

const mod = (p: string) => JSON.stringify(path.join(repoRoot, p));

// The app: one Deployment, its image read from images.json beside the app, with pre-pull on for the whole app.
const APP = (ns: string, imagesFile: string) => `
const { App, Chart, Size } = await import(${mod('node_modules/cdk8s/lib/index.js')});
const kplus = await import(${mod('node_modules/cdk8s-plus-27/lib/index.js')});
const { ImagePrePull } = await import(${mod('constructs/index.ts')});
const { readFileSync } = await import('node:fs');
const { web } = JSON.parse(readFileSync(${JSON.stringify(imagesFile)}, 'utf8'));
const app = new App();
ImagePrePull.enableIn(app);
const chart = new Chart(app, 'shop', { namespace: '${ns}' });
new kplus.Deployment(chart, 'web', {
  metadata: { name: 'web' },
  replicas: 1,
  securityContext: { user: 65534, group: 65534 },
  containers: [{
    name: 'web', image: web, imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
    resources: { cpu: { request: kplus.Cpu.millis(10), limit: kplus.Cpu.millis(200) }, memory: { request: Size.mebibytes(8), limit: Size.mebibytes(32) } },
  }],
});
app.synth();
`;

describe('pre-pull from the diff on the real node', () => {
  const images: string[] = [];
  let dir: string;
  let ns: string;

  beforeAll(async () => {
    await installRuntime();
    const run = randomBytes(3).toString('hex');
    dir = mkdtempSync(path.join(node().dir, 'pre-pull-'));
    for (const v of ['a', 'b']) {
      const ref = await buildLayout(path.join(dir, `work-${v}`), path.join(dir, `oci-${v}`), {
        repo: 'test/pre-pull-web',
        tag: `${run}-${v}`,
        // Big enough that a pull is a visible part of a rollout.
        paddingBytes: 8 * 1024 * 1024,
        cmd: ['/bin/sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1 & wait $!; done'],
      });
      const image = `${node().registry}/test/pre-pull-web:${run}-${v}`;
      await push(ref, image);
      images.push(image);
    }
    ns = await namespace('pre-pull');
  }, 900_000);

  afterAll(async () => {
    if (ns) await kubectl(['delete', 'namespace', ns, '--wait=true', '--timeout=120s']).catch(() => undefined);
    // Leave the node as it was: a later run must find none of these images present.
    for (const image of images) {
      try {
        ctr('images', 'rm', image);
      } catch {
        // never pulled (the test failed before)
      }
    }
  }, 180_000);

  const imagesFile = () => path.join(dir, 'images.json');
  async function synth(out: string): Promise<string> {
    const appFile = path.join(dir, 'app.mts');
    writeFileSync(appFile, APP(ns, imagesFile()));
    const r = await runCli([
      'synth',
      '--app',
      `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(appFile)}`,
      '-o',
      out,
      '--config',
      path.join(dir, 'none.yaml'),
    ]);
    if (r.code !== 0) throw new Error(`synth failed (${r.code}): ${r.stdout}${r.stderr}`);
    return r.stdout;
  }
  const apply = (out: string) =>
    runCli(['apply', out, '--kubectl', findAssets().kubectl, '--kubeconfig', kubeconfigPath(), '--timeout', '300']);
  const rolledOut = async (image: string) => {
    const d = await apps().readNamespacedDeployment({ name: 'web', namespace: ns });
    return (
      d.spec?.template.spec?.containers[0]?.image === image &&
      d.status?.observedGeneration === d.metadata?.generation &&
      d.status?.updatedReplicas === 1 &&
      d.status?.readyReplicas === 1 &&
      (d.status?.replicas ?? 0) === 1
    );
  };

  it("the changed image is pulled on the Deployment's node before its rollout starts, and the rollout pulls nothing", async () => {
    const [first, second] = images as [string, string];
    const out = path.join(dir, 'dist');
    writeFileSync(imagesFile(), JSON.stringify({ web: first }));
    await synth(out);
    const initial = await apply(out);
    expect(initial.code, initial.stderr).toBe(0);
    await waitFor('the Deployment running its first image', () => rolledOut(first), 180_000, 500);
    expect(ctr('images', 'ls', '-q').split('\n')).not.toContain(second);

    writeFileSync(imagesFile(), JSON.stringify({ web: second }));
    const report = await synth(out);
    expect(report).toMatch(/KRUISE-PREPULL-001/);
    const t0 = Date.now();
    const r = await apply(out);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/\[1\/2\] pre-pull: waiting for the image pulls to finish/);
    expect(r.stderr).toMatch(/\[2\/2\] app: done/);
    await waitFor('the Deployment rolled out to its second image', () => rolledOut(second), 180_000, 500);
    const rolloutMs = Date.now() - t0;

    // The job: one node, pulled, finished.
    const objects = adminKubeConfig().makeApiClient(CustomObjectsApi);
    const jobs = (
      (await objects.listNamespacedCustomObject({
        group: 'apps.kruise.io',
        version: 'v1alpha1',
        plural: 'imagepulljobs',
        namespace: ns,
      })) as {
        items: any[];
      }
    ).items;
    expect(jobs).toHaveLength(1);
    const job = jobs[0];
    expect(job.spec.image).toBe(second);
    expect(job.status).toMatchObject({ desired: 1, succeeded: 1, failed: 0 });
    const pulledAt = Date.parse(job.status.completionTime);

    // The rollout started after the pull finished: the new ReplicaSet (second resolution, as the API's timestamps).
    const sets = (await apps().listNamespacedReplicaSet({ namespace: ns })).items;
    const fresh = sets.find((s) => s.spec?.template?.spec?.containers[0]?.image === second)!;
    expect(fresh.metadata!.creationTimestamp!.getTime()).toBeGreaterThanOrEqual(pulledAt);

    // The kubelet found the image on the node for the new pod.
    const pods = (await core().listNamespacedPod({ namespace: ns })).items.filter((p) => p.spec?.containers[0]?.image === second);
    expect(pods).toHaveLength(1);
    let pulled: string[] = [];
    await waitFor(
      "the new pod's image event",
      async () => {
        const events = (
          await core().listNamespacedEvent({ namespace: ns, fieldSelector: `involvedObject.name=${pods[0]!.metadata!.name}` })
        ).items;
        pulled = events.filter((e) => e.reason === 'Pulled' || e.reason === 'Pulling').map((e) => `${e.reason}: ${e.message}`);
        return pulled.length > 0;
      },
      30_000,
      250,
    );
    expect(pulled).toHaveLength(1);
    expect(pulled[0]).toMatch(
      new RegExp(`^Pulled: Container image "${second.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}" already present on machine`),
    );
    console.log(
      `[pre-pull] ${r.stderr.match(/\S+: done in [\d.]+ s/g)!.join(', ')}; job ${job.metadata.name} pulled ${second.split('/').pop()} ` +
        `(8 MiB) on ${job.status.succeeded} node; rollout ready ${(rolloutMs / 1000).toFixed(1)} s after apply began; the new pod: ${pulled[0]}`,
    );
  }, 600_000);
});
