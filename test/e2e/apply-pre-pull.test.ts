// `cdk8s-kruise apply` on an output with pre-pull jobs, against the real kube-apiserver: the app phase is applied
// only once every ImagePullJob of the pre-pull phase has finished. No runtime runs here, so this file plays the
// runtime's part by writing the jobs' status: unfinished, apply stops at the pre-pull phase naming the pending job
// and applies nothing of the app; finished with a failed node, apply says so and goes on (a pre-pull only saves
// rollout time). The whole flow with the runtime pulling on a node: test/node/pre-pull.test.ts.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { KINDS } from '../../src/api/registry.js';
import { layout, OUTPUT_MARKER, OUTPUT_MARKER_CONTENT, type SynthDoc } from '../../src/policy/output-layout.js';
import { prePullJobs } from '../../src/policy/pre-pull.js';
import { createNamespace, findAssets, kubeconfigPath, rawRequest } from '../harness/index.js';
import { runCli } from '../unit/support/cli.js';
import { installCrds } from './runtime/support.js';

const deployment = (ns: string, image: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: ns, annotations: { 'kruise.cdk8s.io/pre-pull-changed-images': 'true' } },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image }] } },
  },
});

/** A synth output (plain layout) of the Deployment at nginx:1.27, compared with one at nginx:1.25. */
function output(ns: string): { dir: string; job: string } {
  const current = [deployment(ns, 'nginx:1.27')];
  const jobs = prePullJobs(current, [deployment(ns, 'nginx:1.25')], { ttlSecondsAfterFinished: 600 });
  const docs: SynthDoc[] = [...current, ...jobs].map((object, i) => ({
    chartFile: i === 0 ? '0000-web.k8s.yaml' : 'pre-pull',
    object,
    text: JSON.stringify(object),
  }));
  const dir = mkdtempSync(path.join(tmpdir(), 'kruise-apply-pre-pull-'));
  for (const f of layout(docs, { prePull: true })) {
    mkdirSync(path.dirname(path.join(dir, f.name)), { recursive: true });
    writeFileSync(path.join(dir, f.name), f.content);
  }
  writeFileSync(path.join(dir, OUTPUT_MARKER), OUTPUT_MARKER_CONTENT);
  return { dir, job: (jobs[0]!.metadata as { name: string }).name };
}

const apply = (dir: string, timeout: string) =>
  runCli(['apply', dir, '--kubectl', findAssets().kubectl, '--kubeconfig', kubeconfigPath(), '--timeout', timeout]);

beforeAll(async () => {
  await installCrds(KINDS.filter((k) => k.kind === 'ImagePullJob'));
});

describe('cdk8s-kruise apply: the pre-pull phase', () => {
  it('does not apply the app while a pre-pull job has not finished, and names it', async () => {
    const ns = await createNamespace(`pre-pull-wait-${randomBytes(2).toString('hex')}`);
    const { dir, job } = output(ns);
    const r = await apply(dir, '3');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('[1/2] pre-pull: waiting for the image pulls to finish');
    expect(r.stderr).toContain('[1/2] pre-pull: image pulls not finished within 3s; later phases were not applied');
    expect(r.stderr).toContain(`still pulling: ${job}`);
    expect((await rawRequest('GET', `/apis/apps.kruise.io/v1alpha1/namespaces/${ns}/imagepulljobs/${job}`)).status).toBe(200);
    expect((await rawRequest('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web`)).status).toBe(404);
  });

  it('applies the app once the job finished, a node that failed to pull being a warning', async () => {
    const ns = await createNamespace(`pre-pull-done-${randomBytes(2).toString('hex')}`);
    const { dir, job } = output(ns);
    // The runtime's part: the job finishes 2 s after apply created it, one of two nodes having failed.
    const finished = (async () => {
      for (let i = 0; i < 200; i++) {
        const got = await rawRequest('GET', `/apis/apps.kruise.io/v1alpha1/namespaces/${ns}/imagepulljobs/${job}`);
        if (got.status === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const patched = await rawRequest('PATCH', `/apis/apps.kruise.io/v1alpha1/namespaces/${ns}/imagepulljobs/${job}/status`, {
        contentType: 'application/merge-patch+json',
        body: JSON.stringify({ status: { startTime: now, completionTime: now, desired: 2, succeeded: 1, failed: 1, active: 0 } }),
      });
      if (patched.status !== 200) throw new Error(`status patch: ${patched.status} ${patched.body}`);
    })();
    const r = await apply(dir, '60');
    await finished;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      '[1/2] pre-pull: warning: nginx:1.27 failed to pull on 1 node(s) (the rollout pulls what is missing itself)',
    );
    expect(r.stderr).toMatch(/\[2\/2\] app: done in [\d.]+ s/);
    expect((await rawRequest('GET', `/apis/apps/v1/namespaces/${ns}/deployments/web`)).status).toBe(200);
  });
});
