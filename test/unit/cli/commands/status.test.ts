// `cdk8s-kruise status`'s judgements, from objects as kubectl returns them: the leader, the certificate and each
// webhook's caBundle, the daemon per node, the gates, and what an app needs that the runtime lacks.
import { describe, expect, it } from 'vitest';
import { AppFeature } from '../../../../src/contracts/features.js';
import {
  buildStatus,
  featureGatesArg,
  formatStatus,
  imageVersion,
  type ClusterFacts,
  type Obj,
} from '../../../../src/cli/commands/status-report.js';
import { createCA, issueServingCert } from '../../../../src/runtime/core/webhook/cert-issuer.js';
import { bundleToSecretData } from '../../../../src/runtime/core/webhook/certs.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const DAY = 86_400_000;
const b64 = (s: string) => Buffer.from(s).toString('base64');

async function pki(validityMs = 365 * DAY) {
  const ca = await createCA(validityMs);
  const serving = await issueServingCert(ca, ['kruise-webhook-service.kruise-system.svc'], validityMs);
  return { ...ca, ...serving };
}

function deployment(gates = 'SidecarTerminator=true', ready = 2): Obj {
  return {
    metadata: { name: 'kruise-controller-manager' },
    spec: {
      replicas: 2,
      template: {
        spec: {
          containers: [
            {
              name: 'manager',
              image: 'registry.example/cdk8s-kruise:0.3.1',
              command: ['cdk8s-kruise'],
              args: ['controller', `--feature-gates=${gates}`],
            },
          ],
        },
      },
    },
    status: { readyReplicas: ready },
  };
}

function webhookConfig(caPem: string, path: string): Obj {
  return {
    metadata: { name: 'cfg' },
    webhooks: [
      {
        name: path === '/mutate-pod' ? 'mpod.kb.io' : 'vcloneset.kb.io',
        failurePolicy: 'Fail',
        clientConfig: {
          service: { namespace: 'kruise-system', name: 'kruise-webhook-service', path, port: 443 },
          caBundle: caPem ? b64(caPem) : undefined,
        },
      },
    ],
  };
}

function daemonPod(node: string, ready: boolean): Obj {
  return {
    metadata: { name: `kruise-daemon-${node}` },
    spec: { nodeName: node, containers: [{ name: 'daemon', image: 'registry.example/cdk8s-kruise:0.3.1' }] },
    status: {
      phase: ready ? 'Running' : 'Pending',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      containerStatuses: ready ? [] : [{ name: 'daemon', state: { waiting: { reason: 'ImagePullBackOff' } } }],
    },
  };
}

async function healthy(over: Partial<ClusterFacts> = {}): Promise<ClusterFacts> {
  const p = await pki();
  return {
    namespace: 'kruise-system',
    deployment: { ok: true, value: deployment() },
    lease: {
      ok: true,
      value: {
        spec: {
          holderIdentity: 'kruise-controller-manager-abc_1',
          leaseDurationSeconds: 15,
          acquireTime: new Date(NOW - 3 * 3600_000).toISOString(),
          renewTime: new Date(NOW - 2000).toISOString(),
        },
      },
    },
    mutating: { ok: true, value: webhookConfig(p.caCert, '/mutate-pod') },
    validating: { ok: true, value: webhookConfig(p.caCert, '/validate-apps-kruise-io-v1alpha1-cloneset') },
    secret: { ok: true, value: { metadata: { name: 'kruise-webhook-certs' }, data: bundleToSecretData(p) } },
    endpointSlices: { ok: true, value: [{ endpoints: [{ conditions: { ready: true } }, { conditions: { ready: true } }] }] },
    daemonSet: { ok: true, value: { metadata: { name: 'kruise-daemon' } } },
    daemonPods: { ok: true, value: [daemonPod('node-a', true), daemonPod('node-b', true)] },
    nodes: { ok: true, value: [{ metadata: { name: 'node-a' } }, { metadata: { name: 'node-b' } }] },
    ...over,
  };
}

describe('status report', () => {
  it('a healthy install: version, leader, certificate, webhooks, daemon per node, gates; no problem', async () => {
    const r = buildStatus(await healthy(), NOW);
    expect(r.problems).toEqual([]);
    expect(r.runtime).toEqual({
      installed: true,
      kind: 'bundled',
      image: 'registry.example/cdk8s-kruise:0.3.1',
      version: '0.3.1',
      replicas: { desired: 2, ready: 2 },
    });
    expect(r.leader).toEqual({ holder: 'kruise-controller-manager-abc_1', leadingSeconds: 10_800, renewedSecondsAgo: 2, expired: false });
    expect(r.webhooks.entries.map((w) => [w.name, w.caBundle, w.caMatchesSecret])).toEqual([
      ['mpod.kb.io', true, true],
      ['vcloneset.kb.io', true, true],
    ]);
    expect(r.webhooks.readyEndpoints).toBe(2);
    expect(r.certificate.serving).toMatchObject({ issuedByCa: true, hosts: ['DNS:kruise-webhook-service.kruise-system.svc'] });
    expect(r.daemon.nodes.map((n) => [n.node, n.ready, n.version])).toEqual([
      ['node-a', true, '0.3.1'],
      ['node-b', true, '0.3.1'],
    ]);
    expect(r.featureGates.enabled).toContain('SidecarTerminator');
    const text = formatStatus(r);
    expect(text).toMatch(/version\s+0\.3\.1 \(cdk8s-kruise image registry\.example\/cdk8s-kruise:0\.3\.1\), 2\/2 ready/);
    expect(text).toMatch(/leader\s+kruise-controller-manager-abc_1, leading 3h, renewed 2s ago/);
    expect(text.trimEnd().endsWith('OK')).toBe(true);
  });

  it('names each fault: expired lease, stale or missing caBundle, expiring certificate, no endpoint, daemon down or missing', async () => {
    const other = await pki();
    const soon = await pki(3 * DAY);
    const facts = await healthy({
      lease: {
        ok: true,
        value: { spec: { holderIdentity: 'gone_1', leaseDurationSeconds: 15, renewTime: new Date(NOW - 60_000).toISOString() } },
      },
      mutating: { ok: true, value: webhookConfig(other.caCert, '/mutate-pod') },
      validating: { ok: true, value: webhookConfig('', '/validate-apps-kruise-io-v1alpha1-cloneset') },
      secret: { ok: true, value: { metadata: { name: 'kruise-webhook-certs' }, data: bundleToSecretData(soon) } },
      endpointSlices: { ok: true, value: [{ endpoints: [{ conditions: { ready: false } }] }] },
      daemonPods: { ok: true, value: [daemonPod('node-a', false)] },
    });
    const p = buildStatus(facts, Date.now()).problems.join('\n');
    expect(p).toMatch(/leader gone_1 has not renewed its Lease for \d+ s \(lease 15 s\)/);
    expect(p).toMatch(/webhook mpod\.kb\.io: its caBundle does not hold the CA of Secret kruise-system\/kruise-webhook-certs/);
    expect(p).toMatch(/webhook vcloneset\.kb\.io: no caBundle/);
    expect(p).toMatch(/the webhook CA expires in 2 day\(s\)/);
    expect(p).toMatch(/has no ready endpoint: no webhook is served/);
    expect(p).toMatch(/daemon not ready on 2 node\(s\): node-a \(ImagePullBackOff\), node-b \(no daemon pod\)/);
  });

  it('reports a part it may not read as forbidden, and the rest as read', async () => {
    const denied = {
      ok: false as const,
      error: 'forbidden (missing RBAC): secrets "kruise-webhook-certs" is forbidden: User "dev" cannot get resource "secrets"',
    };
    const r = buildStatus(await healthy({ secret: denied }), NOW);
    expect(r.problems).toEqual([`cannot read the webhook certificate Secret: ${denied.error}`]);
    expect(r.webhooks.entries.every((w) => w.caBundle && w.caMatchesSecret === undefined)).toBe(true);
    expect(formatStatus(r)).toMatch(/secret\s+kruise-system\/kruise-webhook-certs: forbidden \(missing RBAC\)/);
  });

  it('no runtime in the namespace is a problem that says where it looked', async () => {
    const r = buildStatus(await healthy({ deployment: { ok: true, value: undefined }, lease: { ok: true, value: undefined } }), NOW);
    expect(r.runtime.installed).toBe(false);
    expect(r.problems[0]).toMatch(
      /no runtime in namespace kruise-system: Deployment kruise-controller-manager does not exist \(pass --namespace/,
    );
  });

  it("checks the app's features against the installed gates, daemon and pod webhook", async () => {
    const uses = [
      { feature: AppFeature.SIDECAR_TERMINATOR_KILL, resource: 'Job default/batch' },
      { feature: AppFeature.SIDECARSET, resource: 'SidecarSet logtail' },
      { feature: AppFeature.UNITED_DEPLOYMENT, resource: 'UnitedDeployment default/ud' },
    ];
    const ok = buildStatus(await healthy(), NOW, { dir: 'dist', uses: uses.slice(0, 2) });
    expect(ok.app).toEqual({ dir: 'dist', features: [AppFeature.SIDECAR_TERMINATOR_KILL, AppFeature.SIDECARSET], missing: [] });
    const lacking = buildStatus(
      await healthy({
        deployment: { ok: true, value: deployment('SidecarTerminator=false') },
        daemonSet: { ok: true, value: undefined },
        mutating: { ok: true, value: { webhooks: [] } },
      }),
      NOW,
      { dir: 'dist', uses },
    );
    expect(lacking.app!.missing).toEqual([
      {
        feature: AppFeature.SIDECAR_TERMINATOR_KILL,
        resource: 'Job default/batch',
        lacks: 'feature gate(s) SidecarTerminator, the node daemon',
      },
      { feature: AppFeature.SIDECARSET, resource: 'SidecarSet logtail', lacks: 'the pod webhook' },
      {
        feature: AppFeature.UNITED_DEPLOYMENT,
        resource: 'UnitedDeployment default/ud',
        lacks: 'support (the bundled runtime does not carry it out)',
      },
    ]);
    expect(formatStatus(lacking)).toMatch(/MISSING\s+.*Job default\/batch\): feature gate\(s\) SidecarTerminator, the node daemon/);
  });

  it('reads versions from tags or digests and the gates from either flag form', () => {
    expect(imageVersion('ghcr.io/cdk8s-kruise/cdk8s-kruise:0.1.0')).toBe('0.1.0');
    expect(imageVersion('localhost:5000/kruise')).toBe('latest');
    expect(imageVersion('r.example/k@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')).toBe('sha256:e3b0c44298fc');
    expect(featureGatesArg(['controller', '--feature-gates=A=true'])).toBe('A=true');
    expect(featureGatesArg(['--feature-gates', 'B=false'])).toBe('B=false');
    expect(featureGatesArg(['controller'])).toBe('');
  });
});
