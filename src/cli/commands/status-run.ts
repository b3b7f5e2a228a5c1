// `cdk8s-kruise status`: reads the installed runtime's objects with kubectl (the credentials and context the user
// already has, as apply and uninstall do) and prints what status-report.ts makes of them.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { parseAllDocuments } from 'yaml';
import { escapeControl } from '../../api/quote.js';
import {
  LEADER_ELECTION_LEASE,
  MUTATING_WEBHOOK_CONFIGURATION,
  NAMES,
  VALIDATING_WEBHOOK_CONFIGURATION,
  WEBHOOK_CERT_SECRET,
} from '../../contracts/names.js';
import { detectFeatures } from '../../install/app-features.js';
import type { KubeObject } from '../../install/types.js';
import { UsageError } from '../../policy/usage-error.js';
import { readPhases } from './apply-run.js';
import { kubectlFailure } from './apply-diagnose.js';
import { buildStatus, formatStatus, type AppUse, type ClusterFacts, type Obj, type Read } from './status-report.js';

export interface StatusOptions {
  kubectl: string;
  kubeconfig?: string;
  context?: string;
  namespace: string;
  output: string;
  timeout: string;
}

/** Thrown when the cluster cannot be talked to at all: nothing else is worth asking then. */
class ClusterUnavailable extends Error {}

export async function status(dir: string | undefined, opts: StatusOptions): Promise<number> {
  if (opts.output !== 'text' && opts.output !== 'json')
    throw new UsageError(`--output must be text or json, got "${escapeControl(opts.output.slice(0, 20))}"`);
  const timeout = Number(opts.timeout);
  if (!/^\d{1,5}$/.test(opts.timeout.trim()) || timeout < 1)
    throw new UsageError(`--timeout must be a whole number of seconds, got "${escapeControl(opts.timeout.slice(0, 20))}"`);
  const ns = opts.namespace;
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(ns))
    throw new UsageError(`--namespace must be a namespace name, got "${escapeControl(ns.slice(0, 70))}"`);
  // The app is read first: a wrong directory is a usage error, found before any request.
  const app = dir === undefined ? undefined : { dir, uses: appUses(dir) };
  const base = [
    ...(opts.kubeconfig ? ['--kubeconfig', opts.kubeconfig] : []),
    ...(opts.context ? ['--context', opts.context] : []),
    `--request-timeout=${timeout}s`,
  ];
  const get = (args: string[]) => kubectlJson(opts.kubectl, [...base, 'get', ...args, '-o', 'json'], (timeout + 5) * 1000);
  const one = async (args: string[]): Promise<Read<Obj>> => {
    const r = await get([...args, '--ignore-not-found']);
    return r.ok ? { ok: true, value: r.value as Obj | undefined } : r;
  };
  const list = async (args: string[]): Promise<Read<Obj[]>> => {
    const r = await get(args);
    return r.ok ? { ok: true, value: ((r.value as { items?: Obj[] } | undefined)?.items ?? []) as Obj[] } : r;
  };
  let facts: ClusterFacts;
  try {
    // One request first: an unreachable cluster or refused credentials end the command with that said, once.
    const deployment = await one(['deployment', NAMES.managerDeployment, '-n', ns]);
    const [lease, mutating, validating, secret, endpointSlices, daemonSet, daemonPods, nodes] = await Promise.all([
      one(['leases.coordination.k8s.io', LEADER_ELECTION_LEASE, '-n', ns]),
      one(['mutatingwebhookconfigurations.admissionregistration.k8s.io', MUTATING_WEBHOOK_CONFIGURATION]),
      one(['validatingwebhookconfigurations.admissionregistration.k8s.io', VALIDATING_WEBHOOK_CONFIGURATION]),
      one(['secret', WEBHOOK_CERT_SECRET, '-n', ns]),
      list(['endpointslices.discovery.k8s.io', '-n', ns, '-l', `kubernetes.io/service-name=${NAMES.webhookService}`]),
      one(['daemonset', NAMES.daemonSet, '-n', ns]),
      list(['pods', '-n', ns, '-l', 'control-plane=daemon']),
      list(['nodes']),
    ]);
    const urlProbes = await probeUrls([mutating, validating], timeout);
    facts = { namespace: ns, deployment, lease, mutating, validating, secret, endpointSlices, daemonSet, daemonPods, nodes, urlProbes };
  } catch (e) {
    if (e instanceof ClusterUnavailable) {
      process.stderr.write(`cdk8s-kruise: status: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
  const report = buildStatus(facts, Date.now(), app);
  process.stdout.write(opts.output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatStatus(report));
  return report.problems.length === 0 ? 0 : 1;
}

/** The runtime features the app phase of a synth output uses, with the resource using each. */
function appUses(dir: string): AppUse[] {
  const app = readPhases(dir).find((p) => p.title === 'app');
  if (!app) return [];
  const objects = app.files.flatMap((f) =>
    parseAllDocuments(readFileSync(f, 'utf8'))
      .map((d) => d.toJS() as KubeObject | null)
      .filter((o): o is KubeObject => o !== null && typeof o === 'object' && typeof o.kind === 'string'),
  );
  const seen = new Set<string>();
  return detectFeatures(objects.map((object) => ({ object })))
    .map((u) => ({
      feature: u.feature,
      resource: `${u.resource.kind} ${u.resource.namespace ? `${u.resource.namespace}/` : ''}${u.resource.name ?? '?'}`,
    }))
    .filter((u) => {
      const key = `${u.feature}\0${u.resource}`;
      return seen.has(key) ? false : (seen.add(key), true);
    });
}

/**
 * For each webhook registered by URL: a TLS handshake with its host that trusts only the entry's caBundle and checks
 * the certificate names the host, as the API server would (it reaches the URL from where it runs, which may differ).
 */
async function probeUrls(configs: ReadonlyArray<Read<Obj>>, timeoutSeconds: number): Promise<Record<string, true | string>> {
  const targets = new Map<string, string>();
  for (const c of configs)
    if (c.ok)
      for (const w of (c.value?.webhooks as Array<{ clientConfig?: { url?: string; caBundle?: string } }> | undefined) ?? [])
        if (w.clientConfig?.url) targets.set(w.clientConfig.url, w.clientConfig.caBundle ?? '');
  const out: Record<string, true | string> = {};
  await Promise.all(
    [...targets].map(async ([url, bundle]) => {
      out[url] = await handshake(url, Buffer.from(bundle, 'base64').toString('utf8'), Math.min(timeoutSeconds, 10) * 1000);
    }),
  );
  return out;
}

function handshake(url: string, ca: string, timeoutMs: number): Promise<true | string> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return Promise.resolve('not a URL');
  }
  if (u.protocol !== 'https:') return Promise.resolve('not an https URL');
  if (!ca.includes('BEGIN CERTIFICATE')) return Promise.resolve('no caBundle to verify it with');
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = tlsConnect({ host, port: Number(u.port || 443), ca, servername: isIP(host) ? undefined : host, timeout: timeoutMs });
    const done = (r: true | string) => {
      socket.destroy();
      resolve(r);
    };
    socket.once('secureConnect', () => done(true));
    socket.once('timeout', () => done(`no TLS handshake within ${timeoutMs / 1000} s`));
    socket.once('error', (e: Error) => done(escapeControl(e.message).slice(0, 200)));
  });
}

const FORBIDDEN = /\(Forbidden\)|\bis forbidden\b/;

/**
 * Runs one `kubectl get … -o json`: the parsed object (undefined when `--ignore-not-found` found nothing), the
 * reason it was refused (RBAC named as such), or ClusterUnavailable when kubectl could not talk to the cluster.
 */
function kubectlJson(cmd: string, args: string[], timeoutMs: number): Promise<{ ok: true; value: unknown } | { ok: false; error: string }> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(new UsageError(`cannot run ${cmd}: not found (pass --kubectl <path>)`));
        return;
      }
      if (error) {
        const text = `${stderr}`.trim() || (error as Error).message;
        const firstLine = escapeControl(text.split('\n').find((l) => l.trim()) ?? text).slice(0, 400);
        if (FORBIDDEN.test(text)) {
          resolve({ ok: false, error: `forbidden (missing RBAC): ${firstLine.replace(/^Error from server \(Forbidden\):\s*/, '')}` });
          return;
        }
        const f = kubectlFailure(text);
        if (f.kind !== 'refused' || (error as { killed?: boolean }).killed) {
          reject(new ClusterUnavailable(`${f.kind === 'refused' ? 'kubectl timed out: cannot reach the cluster' : f.what}\n${firstLine}`));
          return;
        }
        resolve({ ok: false, error: firstLine });
        return;
      }
      if (!stdout.trim()) {
        resolve({ ok: true, value: undefined });
        return;
      }
      try {
        resolve({ ok: true, value: JSON.parse(stdout) as unknown });
      } catch {
        resolve({ ok: false, error: `kubectl printed no JSON: ${escapeControl(stdout.slice(0, 200))}` });
      }
    });
  });
}
