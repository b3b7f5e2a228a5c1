// PodProbeMarker prober overhead on a real node (test/harness/real-node.ts), runtime installed from its image and
// dist/ like a user would, against the kubelet's own probing in the same run. Both probe the same way (an exec of
// `true` through CRI ExecSync every second), 100 probes/s each:
//   idle     POD pods of 5 sleeping containers, no probe (baseline)
//   daemon   a PodProbeMarker with 2 exec probes per container of those pods (POD x 10 probes/s), run by kruise-daemon
//   kubelet  the marker deleted; POD more such pods, each container with an exec readiness and liveness probe
// Per phase, CPU over the measured window: the daemon pod's cgroup (cpuacct), the kubelet process, and containerd
// with its shims (the exec itself: each probe is one runc exec, whoever asks for it). Reported as millicores and as
// CPU ms per 100 probes (= millicores at 100 probes/s / 10).
// Usage: npm run bench:real-node-podprobe [-- --pods 10 --seconds 30 --json]
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CoreV1Api, CustomObjectsApi, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { RealNode } from '../test/harness/real-node.js';
import { installRuntime } from '../test/harness/runtime-install.js';
import { DEFAULT_RUNTIME_NAMESPACE } from '../src/contracts/index.js';
import { loadDuringRun, recordBench } from './record.js';

const { values } = parseArgs({
  options: {
    pods: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '30' },
    json: { type: 'boolean', default: false },
  },
});
const PODS = Number(values.pods);
const WINDOW_S = Number(values.seconds);
const CONTAINERS = 5;
const TICKS = 100; // USER_HZ of /proc/<pid>/stat on Linux

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pidsByName(needle: string, binaries: readonly string[]): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        const cmd = readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0');
        return binaries.includes(path.basename(cmd[0] ?? '')) && (needle === '' || cmd.some((a) => a.includes(needle)));
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** CPU ms of a process and of its children it reaped (utime, stime, cutime, cstime). */
function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / TICKS;
  } catch {
    return 0;
  }
}

/** CPU ms of a pod's cgroup (cgroup v1 cpuacct.usage, ns). */
function podCpuMs(uid: string): number {
  for (const qos of ['', 'burstable/', 'besteffort/']) {
    const file = `/sys/fs/cgroup/cpuacct/kubepods/${qos}pod${uid}/cpuacct.usage`;
    if (existsSync(file)) return Number(readFileSync(file, 'utf8').trim()) / 1e6;
  }
  return Number.NaN;
}

function podBody(name: string, image: string, kubeletProbes: boolean): V1Pod {
  const probe = { exec: { command: ['true'] }, periodSeconds: 1, timeoutSeconds: 1, failureThreshold: 3 };
  return {
    metadata: { name, labels: { bench: kubeletProbes ? 'kubelet' : 'daemon' } },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: Array.from({ length: CONTAINERS }, (_, i) => ({
        name: `c${i}`,
        image,
        imagePullPolicy: 'IfNotPresent',
        command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1 & wait $!; done'],
        resources: { requests: { cpu: '1m', memory: '8Mi' } },
        ...(kubeletProbes ? { readinessProbe: probe, livenessProbe: probe } : {}),
      })),
    },
  };
}

async function main(): Promise<void> {
  const node = await RealNode.start();
  try {
    const info = node.info();
    const install = await installRuntime(info);
    console.error(`[bench] runtime image ${install.imageMs} ms, rollout ${install.rolloutMs} ms`);
    const kc = new KubeConfig();
    kc.loadFromFile(info.kubeconfig);
    const core = kc.makeApiClient(CoreV1Api);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const ns = 'bench-probe';
    await core.createNamespace({ body: { metadata: { name: ns } } });
    for (
      let i = 0;
      !(await core.readNamespacedServiceAccount({ name: 'default', namespace: ns }).then(
        () => true,
        () => false,
      ));
      i++
    ) {
      if (i > 300) throw new Error('no default ServiceAccount');
      await sleep(100);
    }
    const daemonPod = (await core.listNamespacedPod({ namespace: DEFAULT_RUNTIME_NAMESPACE })).items.find((p) =>
      p.metadata!.name!.startsWith('kruise-daemon-'),
    )!;
    const daemonUid = daemonPod.metadata!.uid!;
    const kubelet = pidsByName(info.dir, ['kubelet']);
    const containerd = () => [...pidsByName(info.dir, ['containerd']), ...pidsByName('', ['containerd-shim-runc-v2'])];
    if (kubelet.length === 0) throw new Error('kubelet process not found');

    const waitReady = async (prefix: string) => {
      for (let i = 0; i < 600; i++) {
        const pods = (await core.listNamespacedPod({ namespace: ns })).items.filter((p) => p.metadata!.name!.startsWith(prefix));
        if (
          pods.length === PODS &&
          pods.every((p) => p.status?.containerStatuses?.length === CONTAINERS && p.status.containerStatuses.every((c) => c.ready))
        )
          return;
        await sleep(500);
      }
      throw new Error(`pods ${prefix}* not ready`);
    };
    const measure = async (phase: string) => {
      const shimPids = containerd();
      const before = {
        daemon: podCpuMs(daemonUid),
        kubelet: kubelet.reduce((s, p) => s + processCpuMs(p), 0),
        cri: shimPids.reduce((s, p) => s + processCpuMs(p), 0),
      };
      const t0 = Date.now();
      await sleep(WINDOW_S * 1000);
      const secs = (Date.now() - t0) / 1000;
      // Shims that started during the window are left out on both sides (a steady phase starts none).
      const after = {
        daemon: podCpuMs(daemonUid),
        kubelet: kubelet.reduce((s, p) => s + processCpuMs(p), 0),
        cri: shimPids.reduce((s, p) => s + processCpuMs(p), 0),
      };
      const mcpu = (k: keyof typeof before) => Math.round((after[k] - before[k]) / secs);
      const r = { phase, seconds: +secs.toFixed(1), daemonMcpu: mcpu('daemon'), kubeletMcpu: mcpu('kubelet'), containerdMcpu: mcpu('cri') };
      console.error(`[bench] ${JSON.stringify(r)}`);
      return r;
    };
    const load: number[] = [loadavg()[0]!];

    for (let i = 0; i < PODS; i++) await core.createNamespacedPod({ namespace: ns, body: podBody(`d-${i}`, info.images.busybox, false) });
    await waitReady('d-');
    await sleep(5_000);
    const idle = await measure('idle');

    const marker = {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'PodProbeMarker',
      metadata: { name: 'bench', namespace: ns },
      spec: {
        selector: { matchLabels: { bench: 'daemon' } },
        probes: Array.from({ length: CONTAINERS }, (_, i) =>
          ['a', 'b'].map((x) => ({
            name: `c${i}-${x}`,
            containerName: `c${i}`,
            probe: { exec: { command: ['true'] }, periodSeconds: 1, timeoutSeconds: 1, failureThreshold: 3 },
            podConditionType: `bench.io/c${i}-${x}`,
          })),
        ).flat(),
      },
    };
    await custom.createNamespacedCustomObject({
      group: 'apps.kruise.io',
      version: 'v1alpha1',
      plural: 'podprobemarkers',
      namespace: ns,
      body: marker,
    });
    // Warm: every pod marked by every probe once, then the steady state.
    for (let i = 0; i < 600; i++) {
      const pods = (await core.listNamespacedPod({ namespace: ns, labelSelector: 'bench=daemon' })).items;
      if (
        pods.every(
          (p) =>
            (p.status?.conditions ?? []).filter((c) => c.type.startsWith('bench.io/') && c.status === 'True').length === CONTAINERS * 2,
        )
      )
        break;
      await sleep(500);
    }
    await sleep(5_000);
    load.push(loadavg()[0]!);
    const daemon = await measure('daemon');

    await custom.deleteNamespacedCustomObject({
      group: 'apps.kruise.io',
      version: 'v1alpha1',
      plural: 'podprobemarkers',
      namespace: ns,
      name: 'bench',
    });
    for (let i = 0; i < PODS; i++) await core.createNamespacedPod({ namespace: ns, body: podBody(`k-${i}`, info.images.busybox, true) });
    await waitReady('k-');
    await sleep(5_000);
    load.push(loadavg()[0]!);
    const kubeletPhase = await measure('kubelet');

    const perHundred = (mcpu: number) => +(mcpu / 10).toFixed(1);
    const probesPerSecond = PODS * CONTAINERS * 2;
    const daemonCost = daemon.daemonMcpu - idle.daemonMcpu;
    const kubeletCost = kubeletPhase.kubeletMcpu - idle.kubeletMcpu;
    const criDaemon = daemon.containerdMcpu - idle.containerdMcpu;
    const criKubelet = kubeletPhase.containerdMcpu - idle.containerdMcpu;
    const out = {
      pods: PODS,
      containersPerPod: CONTAINERS,
      probesPerSecond,
      windowSeconds: WINDOW_S,
      idle,
      daemon,
      kubelet: kubeletPhase,
      load,
    };
    await recordBench(
      'bench:real-node-podprobe',
      [
        {
          measure: `real node: prober CPU for ${probesPerSecond} exec probes/s (each \`true\` via CRI ExecSync, period 1 s), over idle`,
          figure: `kruise-daemon ${daemonCost} mCPU (${perHundred(daemonCost * (100 / probesPerSecond))} CPU ms per 100 probes)`,
          peer: `kubelet ${kubeletCost} mCPU for the same rate of its own exec probes, same run (${(daemonCost / Math.max(1, kubeletCost)).toFixed(2)}x kubelet)`,
        },
        {
          measure: `real node: containerd and shims CPU for those ${probesPerSecond} exec probes/s (the exec itself)`,
          figure: `${criDaemon} mCPU when the daemon probes`,
          peer: `${criKubelet} mCPU when the kubelet probes (${(criDaemon / Math.max(1, criKubelet)).toFixed(2)}x)`,
        },
      ],
      { conditions: loadDuringRun(load) },
    );
    if (values.json) console.log(JSON.stringify(out, null, 2));
    else
      console.log(
        `${probesPerSecond} exec probes/s: daemon +${daemonCost} mCPU (idle ${idle.daemonMcpu}), kubelet +${kubeletCost} mCPU (idle ${idle.kubeletMcpu}); ` +
          `containerd+shims +${criDaemon} vs +${criKubelet} mCPU; load ${load.map((l) => l.toFixed(1)).join(' ')}`,
      );
  } finally {
    await node.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
