// Image pre-download for CloneSet in-place updates (gate PreDownloadImageForInPlaceUpdate) on a real node
// (test/harness/real-node.ts), runtime installed from its image and dist/ like a user would. A CloneSet of 4 pods
// (in place, maxUnavailable 1, so the rollout takes 4 batches and qualifies for pre-download) changes its image to a
// fresh one (random padding: on no node yet) served through a bandwidth-limited proxy in front of the loopback
// registry. Each shape runs with the gate off (dist/'s install) and on (the manager's --feature-gates patched), in
// the same run, each case on its own image:
//   immediate  the image change with partition 0: the rollout starts at once (the measure)
//   held       the image change with partition 4 (no pod updates), released to partition 0 after a fixed hold, the
//              same in both cases: a rollout staged behind a partition, as canary or change-window rollouts are
// Measured in this process: image change (and release) -> every pod updated and ready again (pods watch); when the
// new image is present in the node's containerd (CRI ImageStatus, polled every 100 ms); per pod, when it was made
// unavailable (InPlaceUpdateReady or Ready false: the watch) and whether that was before its image was present;
// and which pods' containers the kubelet pulled for (its Pulling events) against "already present" (Pulled).
// Usage: npm run bench:real-node-predownload [-- --padding-mib 32 --rate-mib 2 --hold 30 --rounds 1 --json]
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  Watch,
  type V1Pod,
} from '@kubernetes/client-node';
import { CriClient } from '../src/runtime/cri/client.js';
import { CONDITION_INPLACE_UPDATE_READY, DEFAULT_RUNTIME_NAMESPACE, LEADER_ELECTION_LEASE, NAMES } from '../src/contracts/index.js';
import { findAssets } from '../test/harness/assets.js';
import { RealNode } from '../test/harness/real-node.js';
import { installRuntime } from '../test/harness/runtime-install.js';
import { buildLayout, push } from '../test/cri-harness/images.js';
import { ThrottleProxy } from '../test/cri-harness/throttle-proxy.js';
import { waitFor } from '../test/cri-harness/util.js';
import { loadDuringRun, recordBench } from './record.js';

const run = promisify(execFile);
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const { values } = parseArgs({
  options: {
    'padding-mib': { type: 'string', default: '32' },
    'rate-mib': { type: 'string', default: '2' },
    /** Seconds the held shape stays at partition 4 after the image change; default 1.5x the expected pull + 5 s. */
    hold: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
  },
});
const MIB = 1024 * 1024;
const PADDING_BYTES = Number(values['padding-mib']) * MIB;
const RATE = Number(values['rate-mib']) * MIB;
const REPLICAS = 4;
const GATE = 'PreDownloadImageForInPlaceUpdate';
// busybox itself (~1 MiB) rides in the same layer as the padding.
const HOLD_MS = values.hold !== undefined ? Number(values.hold) * 1000 : Math.ceil((1.5 * (PADDING_BYTES + MIB)) / RATE) * 1000 + 5000;
const ROUNDS = Number(values.rounds);
const SLEEPER = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1 & wait $!; done'];
const CS = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'clonesets' } as const;
const JOBS = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'imagepulljobs' } as const;

type Shape = 'immediate' | 'held';
const SHAPES: Shape[] = ['immediate', 'held'];
interface Case {
  readonly shape: Shape;
  readonly preDownload: boolean;
  readonly round: number;
}
interface PodResult {
  readonly pod: string;
  /** ms after the image change. */
  readonly unavailableMs: number;
  readonly readyAgainMs: number;
  /** Made unavailable before the new image was in the node's containerd. */
  readonly beforeImage: boolean;
  /** The kubelet pulled for this pod (a Pulling event for the new image) rather than finding it present. */
  readonly kubeletPulled: boolean;
}
interface CaseResult extends Case {
  readonly image: string;
  readonly holdMs: number;
  /** Image change -> image present on the node. */
  readonly imagePresentMs: number;
  /** Image change -> every pod updated and ready again. */
  readonly doneMs: number;
  /** Rollout start (the image change, or the release of the hold) -> every pod updated and ready again. */
  readonly rolloutMs: number;
  readonly pods: readonly PodResult[];
  readonly jobs: ReadonlyArray<{ name: string; created?: string; completed?: string; succeeded?: number }>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const caseName = (c: Case) => `${c.shape}-${c.preDownload ? 'with' : 'without'}-${c.round}`;

function container(image: string) {
  return {
    name: 'main',
    image,
    imagePullPolicy: 'IfNotPresent',
    command: SLEEPER,
    resources: { requests: { cpu: '5m', memory: '8Mi' }, limits: { cpu: '200m', memory: '32Mi' } },
  };
}

function condition(pod: V1Pod, type: string): string | undefined {
  return pod.status?.conditions?.find((c) => c.type === type)?.status;
}

async function main(): Promise<void> {
  const node = await RealNode.start();
  let proxy: ThrottleProxy | undefined;
  let cri: CriClient | undefined;
  try {
    const info = node.info();
    const install = await installRuntime(info);
    console.error(`[bench] runtime image ${install.imageMs} ms, rollout ${install.rolloutMs} ms`);
    const kc = new KubeConfig();
    kc.loadFromFile(info.kubeconfig);
    const core = kc.makeApiClient(CoreV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const leases = kc.makeApiClient(CoordinationV1Api);
    cri = new CriClient(info.containerdSocket);
    const kubectl = async (args: string[]) =>
      (await run(findAssets().kubectl, ['--kubeconfig', info.kubeconfig, ...args], { maxBuffer: 16 * MIB })).stdout;

    // Every case's image, built before anything is timed: each its own random padding, so none is on the node.
    const cases: Case[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which gate setting goes first, so a drift in the machine's load does not favour one.
      const order = round % 2 === 0 ? [false, true] : [true, false];
      for (const preDownload of order) for (const shape of SHAPES) cases.push({ shape, preDownload, round });
    }
    const images = new Map<string, string>();
    proxy = await ThrottleProxy.start(info.registry, RATE);
    const work = mkdtempSync(path.join(info.dir, 'bench-predownload-'));
    for (const c of cases) {
      const repo = `bench/predownload-${caseName(c)}`;
      const ref = await buildLayout(path.join(work, 'work'), path.join(work, 'oci'), {
        repo,
        tag: '1',
        paddingBytes: PADDING_BYTES,
        cmd: SLEEPER,
      });
      await push(ref, `${info.registry}/${repo}:1`);
      images.set(caseName(c), `${proxy.host}/${repo}:1`);
    }
    console.error(
      `[bench] ${cases.length} images of ${values['padding-mib']} MiB padding through ${proxy.host} at ${values['rate-mib']} MiB/s; hold ${HOLD_MS} ms`,
    );

    /** Sets the manager's gate and waits until a manager started with that setting leads. */
    async function setGate(on: boolean): Promise<void> {
      const dep = JSON.parse(
        await kubectl(['get', 'deployment', '-n', DEFAULT_RUNTIME_NAMESPACE, NAMES.managerDeployment, '-o', 'json']),
      ) as { spec: { template: { spec: { containers: Array<{ args: string[] }> } } } };
      const args = dep.spec.template.spec.containers[0]!.args;
      const at = args.findIndex((a) => a.startsWith('--feature-gates='));
      if (at < 0) throw new Error('the manager has no --feature-gates argument');
      const gates = args[at]!.slice('--feature-gates='.length)
        .split(',')
        .filter((g) => g && !g.startsWith(`${GATE}=`));
      if (on) gates.push(`${GATE}=true`);
      const value = `--feature-gates=${gates.join(',')}`;
      if (value !== args[at]) {
        await kubectl([
          'patch',
          'deployment',
          '-n',
          DEFAULT_RUNTIME_NAMESPACE,
          NAMES.managerDeployment,
          '--type=json',
          '-p',
          JSON.stringify([{ op: 'replace', path: `/spec/template/spec/containers/0/args/${at}`, value }]),
        ]);
        await kubectl(['rollout', 'status', '-n', DEFAULT_RUNTIME_NAMESPACE, `deployment/${NAMES.managerDeployment}`, '--timeout=300s']);
      }
      // The leader's identity is `<pod>_<random>`: wait for a leader whose pod runs with this setting.
      await waitFor(
        `a manager with ${GATE}=${on} leading`,
        async () => {
          const lease = await leases.readNamespacedLease({ name: LEADER_ELECTION_LEASE, namespace: DEFAULT_RUNTIME_NAMESPACE });
          const holder = lease.spec?.holderIdentity?.replace(/_[^_]*$/, '');
          if (!holder) return false;
          const pod = await core.readNamespacedPod({ name: holder, namespace: DEFAULT_RUNTIME_NAMESPACE }).catch(() => undefined);
          return pod?.spec?.containers[0]?.args?.includes(value) === true && !pod.metadata?.deletionTimestamp;
        },
        180_000,
        500,
      );
    }

    async function runCase(c: Case): Promise<CaseResult> {
      const name = caseName(c);
      const image = images.get(name)!;
      const ns = `bench-predl-${name}`;
      await core.createNamespace({ body: { metadata: { name: ns } } });
      await waitFor(`ServiceAccount default in ${ns}`, () =>
        core.readNamespacedServiceAccount({ name: 'default', namespace: ns }).then(
          () => true,
          () => false,
        ),
      );
      const partition = c.shape === 'held' ? REPLICAS : 0;
      await custom.createNamespacedCustomObject({
        ...CS,
        namespace: ns,
        body: {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'CloneSet',
          metadata: { name: 'app' },
          spec: {
            replicas: REPLICAS,
            selector: { matchLabels: { app: 'app' } },
            template: {
              metadata: { labels: { app: 'app' } },
              spec: { terminationGracePeriodSeconds: 5, containers: [container(info.images.busybox)] },
            },
            updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1, partition },
          },
        },
      });
      const status = async () =>
        ((await custom.getNamespacedCustomObject({ ...CS, namespace: ns, name: 'app' })) as { status?: Record<string, number> }).status ??
        {};
      await waitFor(
        `${name}: ${REPLICAS} pods ready`,
        async () => {
          const s = await status();
          return s.readyReplicas === REPLICAS && s.updatedReadyReplicas === REPLICAS;
        },
        180_000,
        250,
      );
      if (await cri!.imageStatus(image)) throw new Error(`${image} is on the node before the case`);

      let t0 = 0;
      const unavailableAt = new Map<string, number>();
      const readyAgainAt = new Map<string, number>();
      // The client ends a watch after 30 s without a byte (a hold has none): it is resumed from the last resourceVersion
      // seen, so no pod event is lost; on 410 Gone (that version compacted away) it starts over from the current state.
      let watching = true;
      let watch: AbortController | undefined;
      let resourceVersion: string | undefined;
      const startWatch = async (): Promise<void> => {
        watch = await new Watch(kc).watch(
          `/api/v1/namespaces/${ns}/pods`,
          resourceVersion ? { resourceVersion } : {},
          (type: string, pod: V1Pod) => {
            const now = Date.now();
            if (type === 'ERROR') {
              resourceVersion = undefined;
              return;
            }
            resourceVersion = pod.metadata?.resourceVersion ?? resourceVersion;
            const podName = pod.metadata!.name!;
            if (!t0 || type === 'DELETED') return;
            const ready = condition(pod, 'Ready') === 'True' && condition(pod, CONDITION_INPLACE_UPDATE_READY) !== 'False';
            if (!ready && !unavailableAt.has(podName)) unavailableAt.set(podName, now);
            if (ready && unavailableAt.has(podName) && !readyAgainAt.has(podName) && pod.spec?.containers[0]?.image === image)
              readyAgainAt.set(podName, now);
          },
          () => {
            if (watching) void sleep(100).then(startWatch);
          },
        );
      };
      await startWatch();
      let imagePresentAt = 0;
      let polling = true;
      const poll = (async () => {
        while (polling && !imagePresentAt) {
          if (await cri!.imageStatus(image).catch(() => null)) imagePresentAt = Date.now();
          else await sleep(100);
        }
      })();

      t0 = Date.now();
      await custom.patchNamespacedCustomObject(
        { ...CS, namespace: ns, name: 'app', body: { spec: { template: { spec: { containers: [container(image)] } } } } },
        mergePatch,
      );
      let releaseAt = t0;
      if (c.shape === 'held') {
        await sleep(HOLD_MS);
        releaseAt = Date.now();
        await custom.patchNamespacedCustomObject(
          { ...CS, namespace: ns, name: 'app', body: { spec: { updateStrategy: { partition: 0 } } } },
          mergePatch,
        );
      }
      await waitFor(`${name}: every pod updated and ready`, () => readyAgainAt.size === REPLICAS, 600_000, 100);
      const doneAt = Math.max(...readyAgainAt.values());
      await waitFor(
        `${name}: the CloneSet reports every pod updated and ready`,
        async () => {
          const s = await status();
          return s.updatedReadyReplicas === REPLICAS && s.readyReplicas === REPLICAS;
        },
        60_000,
        250,
      );
      await waitFor(`${name}: image present`, () => imagePresentAt > 0, 60_000, 100);
      polling = false;
      await poll;
      watching = false;
      watch?.abort();

      // The kubelet's image events per pod: Pulling when it fetched the new image itself.
      const events = (await core.listNamespacedEvent({ namespace: ns })).items;
      const pulledBy = new Set(
        events.filter((e) => e.reason === 'Pulling' && e.message?.includes(image)).map((e) => e.involvedObject.name!),
      );
      const jobs = (
        (await custom.listNamespacedCustomObject({ ...JOBS, namespace: ns })) as {
          items: Array<{
            metadata: { name: string; creationTimestamp?: string };
            status?: { completionTime?: string; succeeded?: number };
          }>;
        }
      ).items.map((j) => ({
        name: j.metadata.name,
        created: j.metadata.creationTimestamp,
        completed: j.status?.completionTime,
        succeeded: j.status?.succeeded,
      }));
      // Not waited for: the next case does not share the namespace, and the pods stop within their grace period.
      void core.deleteNamespace({ name: ns }).catch(() => undefined);

      const pods = [...readyAgainAt.keys()].sort().map((pod) => ({
        pod,
        unavailableMs: unavailableAt.get(pod)! - t0,
        readyAgainMs: readyAgainAt.get(pod)! - t0,
        beforeImage: unavailableAt.get(pod)! < imagePresentAt,
        kubeletPulled: pulledBy.has(pod),
      }));
      return {
        ...c,
        image,
        holdMs: releaseAt - t0,
        imagePresentMs: imagePresentAt - t0,
        doneMs: doneAt - t0,
        rolloutMs: doneAt - releaseAt,
        pods,
        jobs,
      };
    }

    const loads: number[] = [loadavg()[0]!];
    const results: CaseResult[] = [];
    for (const c of cases) {
      await setGate(c.preDownload);
      const r = await runCase(c);
      results.push(r);
      loads.push(loadavg()[0]!);
      console.error(
        `[bench] ${caseName(c)}: image present ${r.imagePresentMs} ms, rollout ${r.rolloutMs} ms, done ${r.doneMs} ms after the change; ` +
          `unavailable before the image ${r.pods.filter((p) => p.beforeImage).length}/${REPLICAS}, kubelet pulled for ${r.pods.filter((p) => p.kubeletPulled).length}; ` +
          `jobs ${JSON.stringify(r.jobs)}`,
      );
    }
    await setGate(false);

    const median = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return s.length % 2 ? s[(s.length - 1) / 2]! : Math.round((s[s.length / 2 - 1]! + s[s.length / 2]!) / 2);
    };
    const summary = Object.fromEntries(
      SHAPES.map((shape) => {
        const of = (preDownload: boolean) => results.filter((r) => r.shape === shape && r.preDownload === preDownload);
        const side = (preDownload: boolean) => {
          const rs = of(preDownload);
          return {
            doneMs: median(rs.map((r) => r.doneMs)),
            rolloutMs: median(rs.map((r) => r.rolloutMs)),
            imagePresentMs: median(rs.map((r) => r.imagePresentMs)),
            unavailableBeforeImage: rs.reduce((n, r) => n + r.pods.filter((p) => p.beforeImage).length, 0),
            kubeletPulls: rs.reduce((n, r) => n + r.pods.filter((p) => p.kubeletPulled).length, 0),
            pods: rs.length * REPLICAS,
            longestUnavailableMs: Math.max(...rs.flatMap((r) => r.pods.map((p) => p.readyAgainMs - p.unavailableMs))),
          };
        };
        const withIt = side(true);
        const without = side(false);
        return [
          shape,
          {
            with: withIt,
            without,
            doneRatio: +(without.doneMs / withIt.doneMs).toFixed(2),
            rolloutRatio: +(without.rolloutMs / withIt.rolloutMs).toFixed(2),
          },
        ];
      }),
    );
    const imm = summary.immediate!;
    const held = summary.held!;
    const size = `${values['padding-mib']} MiB image through a ${values['rate-mib']} MiB/s registry`;
    const unavailable = (s: typeof imm.with) =>
      `${s.unavailableBeforeImage}/${s.pods} pods made unavailable before their image was present`;
    await recordBench(
      'bench:real-node-predownload',
      [
        {
          measure: `real node: CloneSet of ${REPLICAS}, in-place image change (maxUnavailable 1, partition 0), ${size}: change → every pod updated and ready, with pre-download`,
          figure: `${imm.with.doneMs} ms; ${unavailable(imm.with)}`,
          peer: `${imm.doneRatio}x faster than the gate off, same run: ${imm.without.doneMs} ms; ${unavailable(imm.without)} (target ≥ 2x)`,
        },
        {
          measure: `the same change held at partition ${REPLICAS} for ${Math.round(HOLD_MS / 1000)} s, then released to 0: release → every pod updated and ready, with pre-download`,
          figure: `${held.with.rolloutMs} ms (change → done ${held.with.doneMs} ms); ${unavailable(held.with)}; longest pod unavailability ${held.with.longestUnavailableMs} ms`,
          peer: `${held.rolloutRatio}x faster than the gate off: ${held.without.rolloutMs} ms (change → done ${held.without.doneMs} ms, ${held.doneRatio}x); ${unavailable(held.without)}; longest ${held.without.longestUnavailableMs} ms`,
        },
      ],
      { conditions: `${ROUNDS} round(s), one node; ${loadDuringRun(loads)}` },
    );
    const out = { replicas: REPLICAS, paddingBytes: PADDING_BYTES, rateBytesPerSecond: RATE, holdMs: HOLD_MS, summary, results };
    if (values.json) console.log(JSON.stringify(out, null, 2));
    else {
      for (const r of results) {
        console.log(
          `${caseName(r).padEnd(20)} image present ${r.imagePresentMs} ms, rollout ${r.rolloutMs} ms, done ${r.doneMs} ms; pods ` +
            r.pods
              .map(
                (p) =>
                  `${p.pod.replace(/^app-/, '')}: down ${p.unavailableMs}→${p.readyAgainMs} ms${p.beforeImage ? ' BEFORE IMAGE' : ''}${p.kubeletPulled ? ' (kubelet pulled)' : ''}`,
              )
              .join(', '),
        );
      }
      console.log(JSON.stringify(summary, null, 2));
    }
  } finally {
    cri?.close();
    await proxy?.close();
    await node.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
