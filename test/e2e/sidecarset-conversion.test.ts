// SidecarSet served at apps.kruise.io/v1alpha1 and v1beta1 on the real kube-apiserver, converted by the bundled
// manager's `/convert` endpoint as upstream v1.9 converts (storage v1beta1): the CRD's conversion calls the manager
// (a child process serving on loopback), whose certificate code fills the CRD's caBundle and keeps it current when
// the certificate Secret is lost. Objects created at either version read back at the other, lists at both, the
// compiler's v1beta1 output is accepted, and with the manager down the stored objects still read at v1beta1.
import { ApiextensionsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { Chart, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-27';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KruiseApiVersion, SidecarSet as SidecarSetConstruct } from '../../constructs/index.js';
import { validateObject } from '../../src/api/validate.js';
import { pemCertificates } from '../../src/runtime/core/webhook/certs.js';
import { adminKubeConfig, createNamespace, kubectl, mergePatch } from '../harness/index.js';
import {
  accessCoverage,
  accessLogs,
  conversionNone,
  eventually,
  freePort,
  loopbackWebhookArgs,
  startController,
  type ControllerProcess,
} from './runtime/support.js';

const GROUP = 'apps.kruise.io';
const CRD = `sidecarsets.${GROUP}`;
const SECRET = 'kruise-webhook-certs';
const CUSTOM = 'apps.kruise.io/sidecarset-custom-version';
const NS_LABEL = 'kubernetes.io/metadata.name';
const MARK = 'e2e.cdk8s-kruise.io/sidecarset-conversion';
const id = String(process.pid);
const at = (version: string) => ({ group: GROUP, version, plural: 'sidecarsets' }) as const;

type Obj = { apiVersion: string; metadata: { name: string; labels?: Record<string, string> }; spec: Record<string, any> };

let custom: CustomObjectsApi;
let crds: ApiextensionsV1Api;
let core: CoreV1Api;
let runtimeNs: string;
let port: number;
let ctl: ControllerProcess | undefined;

const containers = [{ name: 'proxy', image: 'envoy:1', podInjectPolicy: 'AfterAppContainer' }];
const selector = { matchLabels: { app: `conv-${id}` } };

async function conversionCaBundle(): Promise<string> {
  const crd = await crds.readCustomResourceDefinition({ name: CRD });
  return Buffer.from(crd.spec.conversion?.webhook?.clientConfig?.caBundle ?? '', 'base64').toString('utf8');
}

async function start(): Promise<ControllerProcess> {
  const p = await startController(runtimeNs, loopbackWebhookArgs(port));
  await p.waitReady();
  return p;
}

beforeAll(async () => {
  const kc = adminKubeConfig();
  custom = kc.makeApiClient(CustomObjectsApi);
  crds = kc.makeApiClient(ApiextensionsV1Api);
  core = kc.makeApiClient(CoreV1Api);
  runtimeNs = await createNamespace('sidecarset-conversion');
  port = await freePort();
  ctl = await start();
  // The install's conversion (src/install/crds.ts) with a loopback URL in place of the in-cluster Service, and no
  // caBundle: the manager fills it.
  await kubectl([
    'patch',
    'crd',
    CRD,
    '--type=merge',
    '-p',
    JSON.stringify({
      spec: {
        conversion: {
          strategy: 'Webhook',
          webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: `https://127.0.0.1:${port}/convert` } },
        },
      },
    }),
  ]);
}, 120_000);

afterAll(async () => {
  await ctl?.stop('SIGKILL');
  await kubectl(['delete', 'sidecarsets.v1beta1.apps.kruise.io', '-l', MARK, '--ignore-not-found', '--wait=false']).catch(() => undefined);
  // Back to what the other e2e files install (conversion None), so no later test depends on a stopped manager.
  await conversionNone();
  const report = accessCoverage(accessLogs, new Set([runtimeNs]));
  expect(report.uncovered, 'API calls not declared in src/contracts/permissions.ts').toEqual([]);
});

describe('SidecarSet at v1alpha1 and v1beta1 through the conversion webhook', () => {
  it('the CRD stores v1beta1, serves both, and the manager puts its CA in the conversion caBundle', async () => {
    const crd = await crds.readCustomResourceDefinition({ name: CRD });
    expect(crd.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([
      ['v1alpha1', true, false],
      ['v1beta1', true, true],
    ]);
    const t0 = Date.now();
    const bundle = await eventually(
      async () => pemCertificates(await conversionCaBundle()).length > 0 && (await conversionCaBundle()),
      20_000,
      'caBundle',
    );
    const secret = await core.readNamespacedSecret({ name: SECRET, namespace: runtimeNs });
    const ca = Buffer.from(secret.data!['ca-cert.pem'] ?? '', 'base64').toString('utf8');
    expect(pemCertificates(bundle)).toContain(pemCertificates(ca)[0]);
    console.log(`[conversion] caBundle filled ${Date.now() - t0} ms after the manager was ready`);
  });

  it('created at v1alpha1 (namespace, custom-version label): read at v1beta1 as upstream converts it, and back', async () => {
    const name = `alpha-${id}`;
    await custom.createClusterCustomObject({
      ...at('v1alpha1'),
      body: {
        apiVersion: `${GROUP}/v1alpha1`,
        kind: 'SidecarSet',
        metadata: { name, labels: { [MARK]: id, [CUSTOM]: 'v1' } },
        spec: { selector, namespace: 'prod', containers, revisionHistoryLimit: 4 },
      },
    });
    const t0 = performance.now();
    const beta = (await eventually(
      () => custom.getClusterCustomObject({ ...at('v1beta1'), name }) as Promise<Obj>,
      20_000,
      'read at v1beta1',
    )) as Obj;
    const firstRead = performance.now() - t0;
    expect(beta.apiVersion).toBe(`${GROUP}/v1beta1`);
    expect(beta.spec).toMatchObject({ selector, containers, revisionHistoryLimit: 4, customVersion: 'v1' });
    expect(beta.spec.namespaceSelector).toEqual({ matchLabels: { [NS_LABEL]: 'prod' } });
    expect(beta.spec.namespace).toBeUndefined();
    expect(beta.metadata.labels).toEqual({ [MARK]: id });

    const alpha = (await custom.getClusterCustomObject({ ...at('v1alpha1'), name })) as Obj;
    expect(alpha.apiVersion).toBe(`${GROUP}/v1alpha1`);
    expect(alpha.metadata.labels).toEqual({ [MARK]: id, [CUSTOM]: 'v1' });
    // Upstream gives the namespace back as the equivalent selector.
    expect(alpha.spec.namespaceSelector).toEqual({ matchLabels: { [NS_LABEL]: 'prod' } });
    expect(alpha.spec.customVersion).toBeUndefined();
    console.log(`[conversion] first read at v1beta1 of an object created at v1alpha1: ${firstRead.toFixed(0)} ms`);
  });

  it('created at v1beta1 (customVersion): read at v1alpha1 with the label, and back unchanged', async () => {
    const name = `beta-${id}`;
    const spec = { selector, namespaceSelector: { matchLabels: { env: 'e2e' } }, containers, customVersion: 'v2' };
    await custom.createClusterCustomObject({
      ...at('v1beta1'),
      body: { apiVersion: `${GROUP}/v1beta1`, kind: 'SidecarSet', metadata: { name, labels: { [MARK]: id } }, spec },
    });
    const alpha = (await custom.getClusterCustomObject({ ...at('v1alpha1'), name })) as Obj;
    expect(alpha.metadata.labels).toEqual({ [MARK]: id, [CUSTOM]: 'v2' });
    expect(alpha.spec.customVersion).toBeUndefined();
    expect(alpha.spec.namespaceSelector).toEqual(spec.namespaceSelector);
    const beta = (await custom.getClusterCustomObject({ ...at('v1beta1'), name })) as Obj;
    expect(beta.spec).toMatchObject(spec);
    expect(beta.metadata.labels).toEqual({ [MARK]: id });
  });

  it('an update at v1alpha1 of a stored v1beta1 object keeps what v1alpha1 cannot see', async () => {
    const name = `beta-${id}`;
    await custom.patchClusterCustomObject({ ...at('v1alpha1'), name, body: { spec: { revisionHistoryLimit: 2 } } }, mergePatch);
    const beta = (await custom.getClusterCustomObject({ ...at('v1beta1'), name })) as Obj;
    expect(beta.spec).toMatchObject({ revisionHistoryLimit: 2, customVersion: 'v2' });
  });

  it('lists at both versions, each object at the version asked for', async () => {
    const timings: Record<string, number> = {};
    for (const version of ['v1alpha1', 'v1beta1']) {
      const t0 = performance.now();
      const list = (await custom.listClusterCustomObject({ ...at(version), labelSelector: `${MARK}=${id}` })) as { items: Obj[] };
      timings[version] = performance.now() - t0;
      expect(list.items.map((o) => [o.metadata.name, o.apiVersion]).sort()).toEqual([
        [`alpha-${id}`, `${GROUP}/${version}`],
        [`beta-${id}`, `${GROUP}/${version}`],
      ]);
      const withCustom = list.items.filter((o) => (version === 'v1beta1' ? o.spec.customVersion : o.metadata.labels?.[CUSTOM]));
      expect(withCustom.length).toBe(2);
    }
    console.log(
      `[conversion] list of 2: v1alpha1 (converted) ${timings.v1alpha1!.toFixed(0)} ms, v1beta1 (stored) ${timings.v1beta1!.toFixed(0)} ms`,
    );
  });

  it("the compiler's v1beta1 output validates and is accepted by the API server", async () => {
    const app = Testing.app();
    const chart = new Chart(app, 'conv', { namespace: 'prod' });
    new SidecarSetConstruct(chart, 'proxy', {
      metadata: { name: `synth-${id}`, labels: { [MARK]: id } },
      selector: kplus.LabelSelector.of({ labels: { app: `conv-${id}` } }),
      containers: [{ name: 'proxy', image: 'envoy:1' }],
      apiVersion: KruiseApiVersion.V1BETA1,
      customVersion: 'v3',
    });
    const [obj] = Testing.synth(chart) as Obj[];
    expect(obj!.apiVersion).toBe(`${GROUP}/v1beta1`);
    expect(validateObject(obj).issues).toEqual([]);
    await kubectl(['apply', '--server-side', '--field-manager', 'e2e-conversion', '-f', '-'], { input: JSON.stringify(obj) });
    const alpha = (await custom.getClusterCustomObject({ ...at('v1alpha1'), name: `synth-${id}` })) as Obj;
    expect(alpha.metadata.labels?.[CUSTOM]).toBe('v3');
    expect(alpha.spec.namespaceSelector).toEqual({ matchLabels: { [NS_LABEL]: 'prod' } });
  });

  it('the certificate Secret lost: the new CA reaches the conversion caBundle and conversion goes on', async () => {
    const before = pemCertificates(await conversionCaBundle());
    await core.deleteNamespacedSecret({ name: SECRET, namespace: runtimeNs });
    const t0 = Date.now();
    const newCa = await eventually(
      async () => {
        const s = await core.readNamespacedSecret({ name: SECRET, namespace: runtimeNs }).catch(() => undefined);
        const ca = pemCertificates(Buffer.from(s?.data?.['ca-cert.pem'] ?? '', 'base64').toString('utf8'))[0];
        return ca && !before.includes(ca) ? ca : undefined;
      },
      30_000,
      'a new CA in the Secret',
    );
    await eventually(async () => pemCertificates(await conversionCaBundle()).includes(newCa), 30_000, 'the new CA in the caBundle');
    console.log(`[conversion] Secret deleted -> new CA in the CRD caBundle: ${Date.now() - t0} ms`);
    // Once the replica serves the new certificate (after the propagation wait), conversion still answers.
    await eventually(
      async () => {
        const o = (await custom.getClusterCustomObject({ ...at('v1alpha1'), name: `beta-${id}` })) as Obj;
        return o.metadata.labels?.[CUSTOM] === 'v2';
      },
      30_000,
      'conversion after the rotation',
    );
    expect(await ctl!.metric('webhook_requests_total', { webhook: 'convert', allowed: 'true' })).toBeGreaterThan(0);
  });

  it('a stripped conversion caBundle is restored', async () => {
    await kubectl([
      'patch',
      'crd',
      CRD,
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'remove', path: '/spec/conversion/webhook/clientConfig/caBundle' }]),
    ]);
    const t0 = Date.now();
    await eventually(async () => pemCertificates(await conversionCaBundle()).length > 0, 20_000, 'caBundle restored');
    console.log(`[conversion] stripped caBundle restored in ${Date.now() - t0} ms`);
  });

  it('fail-safe: with the manager down, stored objects still read at v1beta1; v1alpha1 reads fail until it is back', async () => {
    await ctl!.stop('SIGKILL');
    ctl = undefined;
    const beta = (await custom.getClusterCustomObject({ ...at('v1beta1'), name: `alpha-${id}` })) as Obj;
    expect(beta.spec.customVersion).toBe('v1');
    const list = (await custom.listClusterCustomObject({ ...at('v1beta1'), labelSelector: `${MARK}=${id}` })) as { items: Obj[] };
    expect(list.items.length).toBe(3);
    await expect(custom.getClusterCustomObject({ ...at('v1alpha1'), name: `alpha-${id}` })).rejects.toThrow(/conversion webhook/);
    ctl = await start();
    const t0 = Date.now();
    await eventually(
      async () => {
        const o = (await custom.getClusterCustomObject({ ...at('v1alpha1'), name: `alpha-${id}` }).catch(() => undefined)) as
          Obj | undefined;
        return o?.metadata.labels?.[CUSTOM] === 'v1';
      },
      30_000,
      'v1alpha1 reads after the restart',
    );
    console.log(`[conversion] v1alpha1 reads back ${Date.now() - t0} ms after the restarted manager was ready`);
  });
});
