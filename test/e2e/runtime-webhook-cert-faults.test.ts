// Webhook certificates under faults, on the real kube-apiserver: two manager replicas (in this process, started
// 30 s apart) behind a round-robin TCP balancer on loopback, continuous admission traffic through both webhook
// configurations, and the Secret deleted, its tls.crt corrupted, the caBundles stripped. Each time: no
// failed admission, the caBundle restored within seconds, both replicas on the Secret's certificate within 5 s.
import { X509Certificate } from 'node:crypto';
import { connect as netConnect, createServer, type Server, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { AdmissionregistrationV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerRecreateRequestDefinition, KINDS, SidecarSetDefinition } from '../../src/api/registry.js';
import { kindWebhookPath } from '../../src/install/webhooks.js';
import { MUTATING_WEBHOOK_CONFIGURATION, VALIDATING_WEBHOOK_CONFIGURATION } from '../../src/contracts/index.js';
import { DEFAULT_MANAGER_OPTIONS, Manager } from '../../src/runtime/manager/manager.js';
import { pemCertificates } from '../../src/runtime/core/webhook/certs.js';
import { adminKubeConfig, bindPod, createNamespace, createNode, kubeconfigPath, kubectl, setPodStatus } from '../harness/index.js';
import { freePort, installCrds } from './runtime/support.js';

const SECRET = 'kruise-webhook-certs';
const E2E_LABEL = 'cdk8s-kruise.test/cert-faults';
const id = `${process.pid}`;
/** Short, so the test also sees the old CA leave the caBundle; longer than any reload (≈ 2 s propagation). */
const GRACE_MS = 8_000;

let core: CoreV1Api;
let adm: AdmissionregistrationV1Api;
let custom: CustomObjectsApi;
let runtimeNs: string;
let ns: string;
let balancer: Balancer;
const managers: Manager[] = [];
const replicaPorts: number[] = [];

/**
 * Round-robin per connection, as a Service's kube-proxy does. Connections idle for a few ms are closed, so the
 * API server keeps opening new ones (new TLS handshakes) to both replicas instead of reusing one for the test.
 */
class Balancer {
  private next = 0;
  private readonly sockets = new Set<Socket>();
  readonly perReplica = [0, 0];
  private constructor(private readonly server: Server) {}

  static async start(backends: readonly number[], idleCloseMs: number): Promise<{ b: Balancer; port: number }> {
    const server: Server = createServer((client) => {
      const i = b.next++ % backends.length;
      b.perReplica[i]!++;
      const upstream = netConnect(backends[i]!, '127.0.0.1');
      // HTTP/1.1 is request then response: a connection whose last bytes were the replica's answer is
      // between requests. Only then is it closed when idle (never while a replica takes its time to answer).
      let answered = false;
      let idle: NodeJS.Timeout | undefined;
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('data', (c: Buffer) => {
        answered = false;
        clearTimeout(idle);
        upstream.write(c);
      });
      upstream.on('data', (c: Buffer) => {
        answered = true;
        clearTimeout(idle);
        client.write(c);
        idle = setTimeout(() => answered && close(), idleCloseMs);
      });
      for (const s of [client, upstream]) {
        b.sockets.add(s);
        s.on('close', () => {
          b.sockets.delete(s);
          clearTimeout(idle);
          close();
        });
        s.on('error', () => undefined);
      }
    });
    const b = new Balancer(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    return { b, port: (server.address() as { port: number }).port };
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

async function registerConfigs(port: number): Promise<void> {
  const url = (path: string) => `https://127.0.0.1:${port}${path}`;
  const common = { admissionReviewVersions: ['v1'], sideEffects: 'None', failurePolicy: 'Fail', timeoutSeconds: 10 };
  await adm.deleteMutatingWebhookConfiguration({ name: MUTATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
  await adm.deleteValidatingWebhookConfiguration({ name: VALIDATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
  await adm.createMutatingWebhookConfiguration({
    body: {
      metadata: { name: MUTATING_WEBHOOK_CONFIGURATION },
      webhooks: [
        {
          ...common,
          name: 'mcontainerrecreaterequest.kb.io',
          namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [ns] }] },
          rules: [
            {
              apiGroups: ['apps.kruise.io'],
              apiVersions: ['v1alpha1'],
              resources: ['containerrecreaterequests'],
              operations: ['CREATE', 'UPDATE'],
              scope: 'Namespaced',
            },
          ],
          clientConfig: { url: url(kindWebhookPath('mutate', ContainerRecreateRequestDefinition)) },
        },
      ],
    },
  });
  await adm.createValidatingWebhookConfiguration({
    body: {
      metadata: { name: VALIDATING_WEBHOOK_CONFIGURATION },
      webhooks: [
        {
          ...common,
          name: 'vsidecarset.kb.io',
          objectSelector: { matchLabels: { [E2E_LABEL]: id } },
          rules: [
            {
              apiGroups: ['apps.kruise.io'],
              apiVersions: ['v1alpha1'],
              resources: ['sidecarsets'],
              operations: ['CREATE', 'UPDATE'],
              scope: 'Cluster',
            },
          ],
          clientConfig: { url: url(kindWebhookPath('validate', SidecarSetDefinition)) },
        },
      ],
    },
  });
}

/**
 * Failures that are the balancer's doing, not the certificates': it closes a connection the API server
 * picked for reuse in the same instant — an `EOF` before any answer, or a reset when the request's bytes
 * reached the socket the balancer had just destroyed. Counted and reported apart.
 */
const balancerRace = (f: string) => /: EOF\b|read: connection reset by peer/.test(f) && !/x509|certificate|tls:/.test(f);

/** Dry-run creates through both webhooks, one after another, until stopped; every failure is kept. */
/** Sends admissions every 100 ms until stopped; `startedAt` holds each one's start time. */
function load(): { stop: () => Promise<{ sent: number; startedAt: number[]; failures: string[] }> } {
  let stop = false;
  let sent = 0;
  const startedAt: number[] = [];
  const failures: string[] = [];
  const run = (async () => {
    while (!stop) {
      const n = sent++;
      startedAt.push(Date.now());
      try {
        if (n % 2 === 0) {
          await custom.createNamespacedCustomObject({
            group: 'apps.kruise.io',
            version: 'v1alpha1',
            namespace: ns,
            plural: 'containerrecreaterequests',
            body: {
              apiVersion: 'apps.kruise.io/v1alpha1',
              kind: 'ContainerRecreateRequest',
              metadata: { name: `c-${n}` },
              spec: { podName: 'web', containers: [{ name: 'app' }] },
            },
            dryRun: 'All',
          });
        } else {
          await custom.createClusterCustomObject({
            group: 'apps.kruise.io',
            version: 'v1alpha1',
            plural: 'sidecarsets',
            body: {
              apiVersion: 'apps.kruise.io/v1alpha1',
              kind: 'SidecarSet',
              metadata: { name: `s-${id}-${n}`, labels: { [E2E_LABEL]: id } },
              spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'logtail', image: 'busybox:1.36' }] },
            },
            dryRun: 'All',
          });
        }
      } catch (err) {
        failures.push(`#${n} at ${new Date().toISOString()}: ${((err as { body?: string }).body ?? (err as Error).message).slice(-200)}`);
      }
      // Leaves the balancer's idle close time to act, so the next request opens a new connection.
      await sleep(100);
    }
  })();
  return {
    stop: async () => {
      stop = true;
      await run;
      return { sent, startedAt, failures };
    },
  };
}

/** The certificate a replica presents to a new TLS connection (fingerprint). */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const fp = s.getPeerX509Certificate()?.fingerprint256 ?? '';
      s.destroy();
      resolve(fp);
    });
    s.on('error', reject);
    s.setTimeout(2_000, () => {
      s.destroy();
      reject(new Error('TLS timeout'));
    });
  });
}

async function secretFingerprint(): Promise<string | undefined> {
  try {
    const s = await core.readNamespacedSecret({ name: SECRET, namespace: runtimeNs });
    return new X509Certificate(Buffer.from(s.data!['tls.crt']!, 'base64')).fingerprint256;
  } catch {
    return undefined;
  }
}

/** The CAs (PEM) in every webhook's caBundle of both configurations. */
async function caBundles(): Promise<string[][]> {
  const m = await adm.readMutatingWebhookConfiguration({ name: MUTATING_WEBHOOK_CONFIGURATION });
  const v = await adm.readValidatingWebhookConfiguration({ name: VALIDATING_WEBHOOK_CONFIGURATION });
  return [...(m.webhooks ?? []), ...(v.webhooks ?? [])].map((w) =>
    pemCertificates(Buffer.from(w.clientConfig.caBundle ?? '', 'base64').toString('utf8')),
  );
}

/** Polls until `pred` holds (every 50 ms, at most `ms`); the time it took. */
async function timeUntil(what: string, pred: () => Promise<boolean>, ms: number): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    if (await pred().catch(() => false)) return Date.now() - t0;
    await sleep(50);
  }
  throw new Error(`${what}: not within ${ms} ms`);
}

async function bothReplicasServeSecret(): Promise<boolean> {
  const want = await secretFingerprint();
  if (!want) return false;
  const served = await Promise.all(replicaPorts.map((p) => servedFingerprint(p)));
  return served.every((f) => f === want);
}

/** Runs `fault` under load; reports and checks: no failure, both replicas on the Secret's certificate in 5 s. */
async function underLoad(name: string, fault: () => Promise<void>, restored: () => Promise<boolean>): Promise<void> {
  const before = await secretFingerprint();
  const l = load();
  await sleep(1_000);
  const t0 = Date.now();
  await fault();
  const restoreMs = await timeUntil(`${name}: restored`, restored, 10_000);
  const bothMs = await timeUntil(`${name}: both replicas on the Secret's certificate`, bothReplicasServeSecret, 10_000);
  const bothAt = Date.now() - t0;
  await sleep(1_500);
  const { sent, startedAt, failures } = await l.stop();
  // Reported: the admissions sent while the certificate was being replaced.
  const duringFault = startedAt.filter((t) => t >= t0 && t <= t0 + bothAt).length;
  const after = await secretFingerprint();
  console.log(
    `[cert faults] ${name}: restored after ${restoreMs} ms, both replicas on the new certificate after ${bothAt} ms ` +
      `(${bothMs} ms after the restore); ${sent} admissions (${duringFault} during the fault), ${failures.filter((f) => !balancerRace(f)).length} failed ` +
      `(+${failures.filter(balancerRace).length} balancer EOF races); connections per replica ${balancer.perReplica.join('/')}`,
  );
  expect(failures.filter((f) => !balancerRace(f))).toEqual([]);
  // The races are the test balancer's own (it closes idle connections to force handshakes), not admissions the
  // runtime failed; with the node tier running beside this one they reached 8 of 32.
  expect(failures.length, 'balancer races').toBeLessThanOrEqual(Math.ceil(sent * 0.3));
  // The load must span the fault: one admission after another (100 ms apart) from before it to after both replicas
  // served the new certificate, so one was in flight throughout. How many started inside it follows the machine's
  // load (2 in 1.2 s at load average 50), so that count is reported, not judged.
  expect(startedAt[0]!, 'an admission sent before the fault').toBeLessThan(t0);
  expect(startedAt.at(-1)!, 'an admission sent after both replicas served the new certificate').toBeGreaterThan(t0 + bothAt);
  expect(after).not.toBe(before);
  expect(bothAt).toBeLessThan(5_000);
}

beforeAll(async () => {
  const kc = adminKubeConfig();
  core = kc.makeApiClient(CoreV1Api);
  adm = kc.makeApiClient(AdmissionregistrationV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
  await installCrds(KINDS);
  runtimeNs = await createNamespace('kruise-system');
  ns = await createNamespace('cert-faults');
  // The CRR webhook wants the pod scheduled.
  const node = `node-cert-faults-${id}`;
  await createNode(node);
  const pod = await core.createNamespacedPod({
    namespace: ns,
    body: { metadata: { name: 'web' }, spec: { containers: [{ name: 'app', image: 'a:1' }] } },
  });
  await bindPod(pod, node);
  await setPodStatus(pod, { phase: 'Running', containerStatuses: [{ name: 'app', state: { running: {} } }] });
  // The harness's fake kubelet reports no containerIDs; a real kubelet does.
  await core.patchNamespacedPodStatus({
    name: 'web',
    namespace: ns,
    body: [{ op: 'add', path: '/status/containerStatuses/0/containerID', value: 'containerd://app-1' }],
  });
  replicaPorts.push(await freePort(), await freePort());
  const lb = await Balancer.start(replicaPorts, 30);
  balancer = lb.b;
  await registerConfigs(lb.port);
  for (const [i, port] of replicaPorts.entries()) {
    const m = new Manager({
      ...DEFAULT_MANAGER_OPTIONS,
      kubeconfig: kubeconfigPath(),
      namespace: runtimeNs,
      enableLeaderElection: true,
      leaderElectionNamespace: runtimeNs,
      webhookPort: port,
      webhookHost: '127.0.0.1',
      webhookCertHosts: ['127.0.0.1'],
      webhookPreviousCaGraceMs: GRACE_MS,
      healthProbeAddr: '127.0.0.1:0',
      metricsAddr: '0',
      strictPermissions: true,
      logLevel: process.env.CERT_FAULTS_LOG_LEVEL ?? 'warn',
    });
    managers.push(m);
    await m.start();
    // Started 30 s apart, as the experiment did (and a slow rollout does): the second replica adopts the
    // first one's Secret, and the two replicas' timers, had they any, would be out of phase.
    if (i === 0) await sleep(30_000);
  }
  await timeUntil('both replicas serve the Secret certificate', bothReplicasServeSecret, 20_000);
  // The API server picks the configurations up asynchronously: wait until admissions pass.
  let last: string[] = [];
  await timeUntil(
    'admissions pass',
    async () => {
      const l = load();
      await sleep(300);
      last = (await l.stop()).failures;
      return last.length === 0;
    },
    20_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; last failures: ${last.slice(0, 3).join(' | ')}`);
  });
});

afterAll(async () => {
  await Promise.all(managers.map((m) => m.stop()));
  await balancer?.close();
  await adm.deleteMutatingWebhookConfiguration({ name: MUTATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
  await adm.deleteValidatingWebhookConfiguration({ name: VALIDATING_WEBHOOK_CONFIGURATION }).catch(() => undefined);
});

describe('webhook certificates under faults, two replicas behind a round-robin balancer', () => {
  it('the Secret deleted: a new CA beside the old one, both replicas move to it, the old CA leaves after the grace', async () => {
    const oldCas = (await caBundles())[0]!;
    await underLoad(
      'Secret deleted',
      () => core.deleteNamespacedSecret({ name: SECRET, namespace: runtimeNs }).then(() => undefined),
      async () => {
        const b = await caBundles();
        return b.every((cas) => cas.length === 2 && oldCas.every((c) => cas.includes(c)));
      },
    );
    // After the grace only the new CA stays, and admissions still pass.
    const l = load();
    const pruneMs = await timeUntil('old CA pruned', async () => (await caBundles()).every((cas) => cas.length === 1), GRACE_MS + 5_000);
    await sleep(1_000);
    const { sent, failures } = await l.stop();
    console.log(
      `[cert faults] old CA left the caBundle ${pruneMs} ms after the restore checks; ${sent} admissions, ${failures.length} failed`,
    );
    expect(failures.filter((f) => !balancerRace(f))).toEqual([]);
    expect((await caBundles()).every((cas) => !cas.includes(oldCas[0]!))).toBe(true);
  });

  it('tls.crt corrupted: the serving certificate is re-issued from the same CA', async () => {
    const cas = (await caBundles())[0]!;
    await underLoad(
      'tls.crt corrupted',
      async () => {
        const garbage = Buffer.from('-----BEGIN CERTIFICATE-----\ngarbage\n-----END CERTIFICATE-----\n').toString('base64');
        await kubectl(['patch', 'secret', SECRET, '-n', runtimeNs, '--type=merge', '-p', JSON.stringify({ data: { 'tls.crt': garbage } })]);
      },
      async () => {
        const s = await core.readNamespacedSecret({ name: SECRET, namespace: runtimeNs });
        new X509Certificate(Buffer.from(s.data!['tls.crt']!, 'base64'));
        return true;
      },
    );
    expect(await caBundles()).toEqual([cas, cas]);
  });

  it('caBundle stripped from both configurations: restored within seconds', async () => {
    const cas = (await caBundles())[0]!;
    const strip = JSON.stringify([{ op: 'remove', path: '/webhooks/0/clientConfig/caBundle' }]);
    const l = load();
    await sleep(1_000);
    const t0 = Date.now();
    await Promise.all([
      kubectl(['patch', 'mutatingwebhookconfiguration', MUTATING_WEBHOOK_CONFIGURATION, '--type=json', '-p', strip]),
      kubectl(['patch', 'validatingwebhookconfiguration', VALIDATING_WEBHOOK_CONFIGURATION, '--type=json', '-p', strip]),
    ]);
    const restoreMs = await timeUntil(
      'caBundle restored',
      async () => JSON.stringify(await caBundles()) === JSON.stringify([cas, cas]),
      // Seconds when the machine is quiet; the e2e and node tiers side by side on 2 cores took longer once.
      30_000,
    );
    await sleep(1_500);
    const { sent, startedAt, failures } = await l.stop();
    // While a configuration has no caBundle the API server cannot trust any webhook certificate: an admission sent
    // between the strip and the restore (plus the second the API server takes to read a changed configuration)
    // fails whatever the runtime does. Outside that window none may fail.
    const windowEnd = t0 + restoreMs + 1_000;
    const inStrippedWindow = (f: string) => {
      const at = startedAt[Number(/^#(\d+) /.exec(f)?.[1] ?? -1)];
      return at !== undefined && at >= t0 && at <= windowEnd && /unknown authority/.test(f);
    };
    console.log(
      `[cert faults] caBundle stripped: restored after ${Date.now() - t0 - 1_500} ms (first seen ${restoreMs} ms); ${sent} admissions, ` +
        `${failures.length} failed (${failures.filter(inStrippedWindow).length} sent while a caBundle was missing)`,
    );
    for (const f of failures) console.log(`[cert faults]   ${f}`);
    expect(restoreMs).toBeLessThan(5_000);
    expect(failures.filter((f) => !balancerRace(f) && !inStrippedWindow(f))).toEqual([]);
    // The races are the test balancer's own (it closes idle connections to force handshakes), not admissions the
    // runtime failed; with the node tier running beside this one they reached 8 of 32.
    expect(failures.length, 'balancer races').toBeLessThanOrEqual(Math.ceil(sent * 0.3));
  });
});
