// The install manifests on a real kube-apiserver, following the README procedure: CRDs first and
// wait for Established, then the runtime, then the app. Webhook configurations are only dry-run
// (no manager runs here to answer them, and their names are cluster-wide); everything else is
// applied for real so the RBAC can be checked by impersonation against the declared permission lists.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ApiObject, App, Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonPlacement, KruiseRuntime } from '../../constructs/kruise-runtime.js';
import { PERMISSIONS, daemonScopes, findCoveringRule, managerScopes, type PermissionRule, type Verb } from '../../src/contracts/index.js';
import { canI, kubectl, serviceAccountUser, type AccessCheck } from '../harness/index.js';
import { conversionNone } from './runtime/support.js';

type Obj = Record<string, any>;

const ns = `kruise-e2e-${randomBytes(3).toString('hex')}`;
const daemonConfigNs = `${ns}-daemon`;
let dir: string;
let files: string[];
const docsOf = (file: string): Obj[] =>
  parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => d.toJS())
    .filter(Boolean);

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-install-'));
  const app = new App({ outdir: dir });
  new KruiseRuntime(app, 'kruise', { namespace: ns, daemonConfigNamespace: daemonConfigNs, daemon: { placement: DaemonPlacement.AUTO } });
  const chart = new Chart(app, 'app', { namespace: ns });
  const job = new kplus.Job(chart, 'job', { containers: [{ name: 'main', image: 'busybox' }] });
  job.addContainer({
    name: 'sidecar',
    image: 'envoy',
    envVariables: { KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT: kplus.EnvValue.fromValue('true') },
  });
  new ApiObject(chart, 'ipj', {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ImagePullJob',
    metadata: { name: 'prepull' },
    spec: { image: 'nginx:1.9.1', completionPolicy: { type: 'Always' } },
  });
  app.synth();
  files = readdirSync(dir)
    .filter((f) => f.endsWith('.k8s.yaml'))
    .sort()
    .map((f) => path.join(dir, f));
});

afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  // The install's SidecarSet CRD converts through the in-cluster Service, which no manager serves here.
  await conversionNone();
});

describe('install manifests on a real kube-apiserver', () => {
  it('come as CRDs, runtime, app files in that order', () => {
    expect(files.map((f) => path.basename(f))).toEqual(['0000-kruise-crds.k8s.yaml', '0001-kruise.k8s.yaml', '0002-app.k8s.yaml']);
  });

  it('CRDs are accepted and become Established (kubectl wait, as documented)', async () => {
    await kubectl(['apply', '--server-side', '--field-manager=cdk8s-kruise-e2e', '-f', files[0]!]);
    const out = await kubectl([
      'wait',
      '--for',
      'condition=established',
      '--timeout=60s',
      'crd',
      '-l',
      'app.kubernetes.io/part-of=cdk8s-kruise',
    ]);
    const names = docsOf(files[0]!).map((d) => d.metadata.name);
    for (const n of names) expect(out).toContain(`customresourcedefinition.apiextensions.k8s.io/${n} condition met`);
  });

  it('the runtime (without webhook configurations) and then the app are applied', async () => {
    const runtime = docsOf(files[1]!).filter((d) => !/WebhookConfiguration$/.test(d.kind));
    const runtimeFile = path.join(dir, 'runtime-without-webhooks.yaml');
    writeFileSync(runtimeFile, runtime.map((d) => stringify(d)).join('---\n'));
    const out = await kubectl(['apply', '--server-side', '--field-manager=cdk8s-kruise-e2e', '-f', runtimeFile]);
    expect(out).toContain(`deployment.apps/kruise-controller-manager serverside-applied`);
    expect(out).toContain(`daemonset.apps/kruise-daemon serverside-applied`);
    const app = await kubectl(['apply', '--server-side', '--field-manager=cdk8s-kruise-e2e', '-f', files[2]!]);
    expect(app).toContain('imagepulljob.apps.kruise.io/prepull serverside-applied');
  });

  it('every runtime object, webhook configurations included, passes server-side dry-run once the namespaces exist', async () => {
    const out = await kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=cdk8s-kruise-e2e', '-f', files[1]!]);
    const docs = docsOf(files[1]!);
    expect(docs.map((d) => d.kind)).toEqual(
      expect.arrayContaining(['Deployment', 'DaemonSet', 'MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']),
    );
    for (const d of docs) expect(out).toMatch(new RegExp(`${d.metadata.name} serverside-applied \\(server dry run\\)`));
  });

  describe('RBAC, checked by impersonating the ServiceAccounts', () => {
    const checks = (rules: readonly PermissionRule[], namespace?: string) =>
      rules.flatMap((r) =>
        r.apiGroups.flatMap((group) =>
          r.resources.flatMap((res) =>
            r.verbs.flatMap((verb) =>
              (r.resourceNames && verb !== 'create' ? r.resourceNames : [undefined]).map((name) => {
                const [resource, subresource] = res.split('/');
                return { verb, group, resource: resource!, subresource, name, namespace };
              }),
            ),
          ),
        ),
      );

    it('the manager may make every declared call', async () => {
      const user = serviceAccountUser(ns, 'kruise-manager');
      const denied: string[] = [];
      for (const c of [
        ...checks(PERMISSIONS.MANAGER),
        ...checks(PERMISSIONS.MANAGER_NAMESPACED, ns),
        ...checks(PERMISSIONS.MANAGER_DAEMON_CONFIG, daemonConfigNs),
      ]) {
        if (!(await canI(user, c)).allowed) denied.push(JSON.stringify(c));
      }
      expect(denied).toEqual([]);
    });

    it('the daemon may make every declared call', async () => {
      const user = serviceAccountUser(ns, 'kruise-daemon');
      const denied: string[] = [];
      for (const c of [...checks(PERMISSIONS.DAEMON), ...checks(PERMISSIONS.DAEMON_NAMESPACED, daemonConfigNs)]) {
        if (!(await canI(user, c)).allowed) denied.push(JSON.stringify(c));
      }
      expect(denied).toEqual([]);
    });

    it('nothing beyond: the real authorizer allows exactly what the declared lists cover', async () => {
      const manager = serviceAccountUser(ns, 'kruise-manager');
      const daemon = serviceAccountUser(ns, 'kruise-daemon');
      // Probes around the declared rules: other verbs, namespaces, objects and groups.
      const probes: AccessCheck[] = [
        { verb: 'delete', resource: 'pods', namespace: 'default' },
        { verb: 'create', resource: 'pods', namespace: 'default' },
        { verb: 'get', resource: 'secrets', namespace: 'kube-system' },
        { verb: 'list', resource: 'secrets' },
        { verb: 'delete', resource: 'secrets', namespace: ns },
        { verb: 'create', resource: 'secrets', namespace: 'default' },
        { verb: 'create', resource: 'secrets', namespace: daemonConfigNs },
        { verb: 'update', resource: 'secrets', namespace: daemonConfigNs, name: 'default.regcred' },
        { verb: 'patch', group: 'admissionregistration.k8s.io', resource: 'mutatingwebhookconfigurations', name: 'someone-elses' },
        { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterrolebindings' },
        { verb: 'delete', group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' },
        { verb: 'delete', resource: 'nodes' },
        { verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: 'default' },
        { verb: 'deletecollection', group: 'apps.kruise.io', resource: 'containerrecreaterequests', namespace: 'default' },
      ];
      const mismatches: string[] = [];
      for (const [user, scopes] of [
        [manager, managerScopes({ runtime: ns, daemonConfig: daemonConfigNs })],
        [daemon, daemonScopes(daemonConfigNs)],
      ] as const) {
        for (const p of probes) {
          const resource = p.subresource ? `${p.resource}/${p.subresource}` : p.resource;
          const declared =
            findCoveringRule({ apiGroup: p.group ?? '', resource, verb: p.verb as Verb, namespace: p.namespace, name: p.name }, scopes) !==
            undefined;
          const { allowed } = await canI(user, p);
          if (allowed !== declared)
            mismatches.push(`${user} ${JSON.stringify(p)}: apiserver ${allowed ? 'allows' : 'denies'}, declared ${declared}`);
        }
      }
      expect(mismatches).toEqual([]);
      // The probes must include refusals, else this proves nothing.
      expect(
        (
          await canI(
            manager,
            probes.find((p) => p.resource === 'nodes')!,
          )
        ).allowed,
      ).toBe(false);
    });
  });
});
