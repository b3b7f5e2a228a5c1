// `cdk8s-kruise status` against the real API server: the install's Deployment, DaemonSet, Service and webhook
// configurations applied as rendered (the configurations dialled at the controller on loopback, as the other
// runtime e2e tests register them), the real controller process leading through the Lease and keeping the
// certificate Secret and caBundles, daemon pods on two nodes played by the harness's kubelet. Then: what status
// reports of it (text and JSON), a daemon pod gone, an app that needs a gate the install lacks, missing RBAC
// and an unreachable cluster.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { AdmissionregistrationV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { StatusReport } from '../../src/cli/commands/status-report.js';
import { AppFeature } from '../../src/contracts/features.js';
import { MUTATING_WEBHOOK_CONFIGURATION, NAMES, VALIDATING_WEBHOOK_CONFIGURATION } from '../../src/contracts/index.js';
import { controllerManagerDeployment } from '../../src/install/controller-manager.js';
import { daemonSet } from '../../src/install/daemon.js';
import type { InstallSpec } from '../../src/install/spec.js';
import { mutatingWebhookConfiguration, validatingWebhookConfiguration, webhookService } from '../../src/install/webhooks.js';
import {
  adminKubeConfig,
  bindPod,
  createNamespace,
  createNode,
  findAssets,
  kubeconfigPath,
  kubectl,
  setPodStatus,
} from '../harness/index.js';
import {
  freePort,
  loopbackWebhookArgs,
  podWebhookInstallSpec,
  repoRoot,
  startController,
  type ControllerProcess,
} from './runtime/support.js';

const run = promisify(execFile);
const IMAGE = 'registry.example/cdk8s-kruise:0.9.7';
const NODE_LABEL = 'cdk8s-kruise.test/status';
const id = `${process.pid}`;
const nodes = [`status-a-${id}`, `status-b-${id}`];

let ns: string;
let ctl: ControllerProcess;
let work: string;
const core = () => adminKubeConfig().makeApiClient(CoreV1Api);

async function status(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(
      path.join(repoRoot, 'node_modules', '.bin', 'tsx'),
      ['src/cli/main.ts', 'status', '--kubectl', findAssets().kubectl, ...args],
      { cwd: repoRoot, env: { ...process.env, NO_COLOR: '1' } },
    );
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

async function statusJson(...args: string[]): Promise<{ code: number; report: StatusReport }> {
  const r = await status('--kubeconfig', kubeconfigPath(), '-n', ns, '-o', 'json', ...args);
  try {
    return { code: r.code, report: JSON.parse(r.stdout) as StatusReport };
  } catch {
    throw new Error(`status printed no JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
}

async function apply(objects: unknown[]): Promise<void> {
  await kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager', 'status-e2e', '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
  });
}

async function daemonPod(node: string): Promise<void> {
  const pod: V1Pod = {
    metadata: { name: `kruise-daemon-${node}`, namespace: ns, labels: { 'control-plane': 'daemon' } },
    spec: { containers: [{ name: 'daemon', image: IMAGE }] },
  };
  await core().createNamespacedPod({ namespace: ns, body: pod });
  await bindPod(pod, node);
  await setPodStatus(pod, { phase: 'Running', containerStatuses: [{ name: 'daemon', state: { running: {} } }] });
}

/** A kubeconfig like the admin's whose requests are made as `user` (impersonation). */
function kubeconfigAs(user: string): string {
  const kc = parse(adminKubeConfig().exportConfig()) as { users: Array<{ user: Record<string, unknown> }> };
  for (const u of kc.users) u.user.as = user;
  const file = path.join(work, `kubeconfig-${user}`);
  writeFileSync(file, stringify(kc));
  return file;
}

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-status-'));
  ns = await createNamespace('kruise-status');
  const base = podWebhookInstallSpec(ns);
  const spec: InstallSpec = {
    ...base,
    image: IMAGE,
    featureGates: 'SidecarTerminator=false',
    daemon: { resources: {}, criSocket: '/run/containerd/containerd.sock', logLevel: 'info' },
  };
  const port = await freePort();
  // The configurations as the install renders them, dialled at the controller on loopback.
  const dialled = (config: ReturnType<typeof mutatingWebhookConfiguration>) => {
    const c = structuredClone(config) as unknown as { webhooks: Array<{ clientConfig: Record<string, unknown> }> };
    for (const w of c.webhooks) {
      const svc = w.clientConfig.service as { path: string };
      w.clientConfig = { url: `https://127.0.0.1:${port}${svc.path}` };
    }
    return c;
  };
  const ds = daemonSet(spec) as unknown as { spec: { template: { spec: { nodeSelector?: Record<string, string> } } } };
  // Only this test's nodes: the shared control plane holds other test files' nodes, which no daemon pod serves here.
  ds.spec.template.spec.nodeSelector = { ...ds.spec.template.spec.nodeSelector, [NODE_LABEL]: id };
  const adm = adminKubeConfig().makeApiClient(AdmissionregistrationV1Api);
  await adm.deleteMutatingWebhookConfiguration({ name: MUTATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
  await adm.deleteValidatingWebhookConfiguration({ name: VALIDATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
  await apply([
    webhookService(spec),
    controllerManagerDeployment(spec),
    ds,
    dialled(mutatingWebhookConfiguration(spec)),
    dialled(validatingWebhookConfiguration(spec)),
  ]);
  for (const n of nodes) await createNode(n, { labels: { [NODE_LABEL]: id, 'kubernetes.io/os': 'linux' } });
  for (const n of nodes) await daemonPod(n);
  ctl = await startController(ns, [...loopbackWebhookArgs(port), '--leader-elect', '--feature-gates', 'SidecarTerminator=false']);
  await ctl.waitReady();
  // No Deployment controller runs in this control plane: the replica it would count is the process above.
  await kubectl([
    'patch',
    'deployment',
    NAMES.managerDeployment,
    '-n',
    ns,
    '--subresource=status',
    '--type=merge',
    '-p',
    '{"status":{"replicas":1,"readyReplicas":1}}',
  ]);
}, 180_000);

afterAll(async () => {
  await ctl?.stop();
  const adm = adminKubeConfig().makeApiClient(AdmissionregistrationV1Api);
  await adm.deleteMutatingWebhookConfiguration({ name: MUTATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
  await adm.deleteValidatingWebhookConfiguration({ name: VALIDATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('cdk8s-kruise status', () => {
  it('reports a healthy install: version, leader, served webhooks whose caBundle is the Secret CA, daemon per node, gates', async () => {
    const { code, report } = await statusJson();
    expect(report.problems).toEqual([]);
    expect(code).toBe(0);
    expect(report.runtime).toMatchObject({ installed: true, kind: 'bundled', image: IMAGE, version: '0.9.7' });
    expect(report.leader.holder).toBe(ctl.identity);
    expect(report.leader.expired).toBe(false);
    expect(report.webhooks.entries.length).toBeGreaterThan(1);
    expect(report.webhooks.entries.every((w) => w.caBundle && w.caMatchesSecret === true && w.served === true)).toBe(true);
    expect(report.certificate.serving).toMatchObject({ issuedByCa: true });
    expect(report.certificate.ca!.daysLeft).toBeGreaterThan(300);
    expect(report.daemon.nodes.map((n) => [n.node, n.ready, n.version])).toEqual(nodes.map((n) => [n, true, '0.9.7']));
    expect(report.featureGates.disabled).toContain('SidecarTerminator');
    const text = await status('--kubeconfig', kubeconfigPath(), '-n', ns);
    expect(text.stdout).toMatch(
      new RegExp(`leader\\s+${ctl.identity.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, leading \\d+s, renewed \\d+s ago`),
    );
    expect(text.stdout).toMatch(/mpod\.kb\.io\s+mutating\s+\w+\s+caBundle ok\s+served/);
    expect(text.stdout.trimEnd().endsWith('OK')).toBe(true);
  });

  it('with a synth output: names each feature its app needs that the runtime lacks (a gate off here)', async () => {
    const { code, report } = await statusJson(path.join(repoRoot, 'dist'));
    expect(code).toBe(1);
    expect(report.app!.features).toContain(AppFeature.SIDECAR_TERMINATOR_KILL);
    const missing = report.app!.missing.find((m) => m.feature === (AppFeature.SIDECAR_TERMINATOR_KILL as string));
    expect(missing?.lacks).toMatch(/feature gate\(s\) SidecarTerminator/);
    expect(
      report.problems.some((p) =>
        /uses job sidecar termination \(kill\), but the cluster's runtime lacks feature gate\(s\) SidecarTerminator/.test(p),
      ),
    ).toBe(true);
  });

  it('names a node whose daemon pod is gone', async () => {
    await core().deleteNamespacedPod({ namespace: ns, name: `kruise-daemon-${nodes[1]}`, gracePeriodSeconds: 0 });
    const { code, report } = await statusJson();
    expect(code).toBe(1);
    expect(report.problems).toEqual([`daemon not ready on 1 node(s): ${nodes[1]} (no daemon pod)`]);
    await daemonPod(nodes[1]!);
  });

  it('says which part missing RBAC hides, and reports the rest', async () => {
    const user = `status-viewer-${id}`;
    await apply([
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: user },
        rules: [
          { apiGroups: ['apps'], resources: ['deployments', 'daemonsets'], verbs: ['get', 'list'] },
          { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] },
          {
            apiGroups: ['admissionregistration.k8s.io'],
            resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'],
            verbs: ['get'],
          },
          { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list'] },
          { apiGroups: [''], resources: ['pods', 'nodes'], verbs: ['list'] },
        ],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: user },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: user },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
      },
    ]);
    const r = await status('--kubeconfig', kubeconfigAs(user), '-n', ns, '-o', 'json');
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as StatusReport;
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toMatch(/^cannot read the webhook certificate Secret: forbidden \(missing RBAC\): .*secrets/);
    expect(report.runtime.version).toBe('0.9.7');
    expect(report.leader.holder).toBe(ctl.identity);
    // Nobody: the first request is refused, and status says so.
    const none = await status('--kubeconfig', kubeconfigAs(`nobody-${id}`), '-n', ns);
    expect(none.code).toBe(1);
    expect(none.stdout).toMatch(/cannot read Deployment .*: forbidden \(missing RBAC\)/);
  });

  it('names an unreachable cluster as such, and refuses bad flags as usage errors', async () => {
    const port = await freePort();
    const kc = parse(adminKubeConfig().exportConfig()) as { clusters: Array<{ cluster: Record<string, unknown> }> };
    for (const c of kc.clusters) c.cluster.server = `https://127.0.0.1:${port}`;
    const file = path.join(work, 'kubeconfig-closed');
    writeFileSync(file, stringify(kc));
    const r = await status('--kubeconfig', file, '--timeout', '5');
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/status: cannot reach the cluster \(check --kubeconfig\/--context/);
    expect((await status('-o', 'yaml')).code).toBe(2);
    expect((await status('-n', 'Not_A_Namespace')).code).toBe(2);
    expect((await status(path.join(work, 'missing-dir'))).stderr).toMatch(/is not a directory/);
  });
});
