// The sidecar terminator's decision table, one for both callers of `decide`: the manager's controller
// (sidecar-termination.test.ts) and the node daemon's node-local terminator
// (runtime/daemon/crr/node-local-terminator.test.ts). Each row is a pod as the kubelet reports it and the decision expected.
import {
  ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE,
} from '../../../../src/api/pod-contracts.js';
import type { Decision, NodeKind } from '../../../../src/runtime/control/sidecar-termination.js';
import type { Container, ContainerStatus, Pod } from '../../../../src/runtime/core/types.js';

export const UID = '1111-2222';
export const CRR = `sidecar-termination-${UID}`;
export const QUICK = 'example.io/quick-exit:1';

export type Marker = 'kill' | 'kill+ignore' | 'image' | 'kill+image' | 'none' | 'kill=TRUE' | 'kill=false';
/** `{ restartedAfter: code }`: the kubelet restarted the container after it exited `code` (running or back-off). */
export type State = 'running' | 'waiting' | number | 'missing' | { restartedAfter: number; now: 'running' | 'waiting' };

export function container(name: string, marker: Marker): Container {
  const env: Container['env'] = [];
  if (marker.startsWith('kill') && marker !== 'kill=false') {
    env.push({ name: ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT, value: marker === 'kill=TRUE' ? 'TRUE' : 'true' });
  }
  if (marker === 'kill=false') env.push({ name: ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT, value: 'false' });
  if (marker === 'kill+ignore') env.push({ name: ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE, value: 'true' });
  if (marker === 'image' || marker === 'kill+image') env.push({ name: ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE, value: QUICK });
  return { name, image: `example.io/${name}:1`, env };
}

export function status(name: string, s: State): ContainerStatus | undefined {
  if (s === 'missing') return undefined;
  if (typeof s === 'object') {
    return {
      name,
      restartCount: 1,
      state: s.now === 'running' ? { running: {} } : { waiting: { reason: 'CrashLoopBackOff' } },
      lastState: { terminated: { exitCode: s.restartedAfter } },
    };
  }
  if (s === 'running') return { name, state: { running: {} } };
  if (s === 'waiting') return { name, state: { waiting: { reason: 'ContainerCreating' } } };
  return { name, containerID: `containerd://${name}`, state: { terminated: { exitCode: s } } };
}

export interface PodSpecInput {
  restartPolicy?: string;
  phase?: string;
  deleting?: boolean;
  nodeName?: string | null;
  mains: Record<string, State>;
  sidecars: Record<string, [Marker, State]>;
  /** kruise.io/container-exit-priority value. */
  exitPriority?: string;
  conditions?: Pod['status'] extends infer S ? (S extends { conditions?: infer C } ? C : never) : never;
}

export function pod(i: PodSpecInput): Pod {
  const containers: Container[] = [];
  const statuses: ContainerStatus[] = [];
  for (const [n, s] of Object.entries(i.mains)) {
    containers.push(container(n, 'none'));
    const st = status(n, s);
    if (st) statuses.push(st);
  }
  for (const [n, [m, s]] of Object.entries(i.sidecars)) {
    containers.push(container(n, m));
    const st = status(n, s);
    if (st) statuses.push(st);
  }
  return {
    metadata: {
      name: 'job-x',
      namespace: 'ns',
      uid: UID,
      ...(i.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
      ...(i.exitPriority !== undefined ? { annotations: { 'kruise.io/container-exit-priority': i.exitPriority } } : {}),
    },
    spec: {
      restartPolicy: i.restartPolicy ?? 'Never',
      ...(i.nodeName === null ? {} : { nodeName: i.nodeName ?? 'node-a' }),
      containers,
    },
    status: { phase: i.phase ?? 'Running', containerStatuses: statuses, ...(i.conditions ? { conditions: i.conditions } : {}) },
  };
}

export const crr = (...containers: string[]): Decision => ({ action: 'act', swapImages: [], createCrr: { name: CRR, containers } });

export interface Row {
  name: string;
  pod: PodSpecInput;
  node?: NodeKind | undefined;
  crrExists?: boolean;
  expect: Decision | { action: 'skip' | 'wait' };
}

export const rows: Row[] = [
  // --- Exit priority: the CRR lists the sidecars lowest priority first (the daemon stops them in list order)
  {
    name: 'two prioritised sidecars -> CRR lists them by exit priority, not spec order',
    pod: {
      mains: { app: 0 },
      sidecars: { envoy: ['kill', 'running'], 'log-agent': ['kill', 'running'] },
      exitPriority: '{"log-agent":1,"envoy":2}',
    },
    expect: crr('log-agent', 'envoy'),
  },
  {
    name: 'equal or missing priorities keep spec order',
    pod: {
      mains: { app: 0 },
      sidecars: { b: ['kill', 'running'], a: ['kill', 'running'], c: ['kill', 'running'] },
      exitPriority: '{"c":1}',
    },
    expect: crr('b', 'a', 'c'),
  },
  {
    name: 'a hostile exit-priority annotation keeps spec order',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['kill', 'running'], 'log-agent': ['kill', 'running'] }, exitPriority: '{"envoy":"x"' },
    expect: crr('envoy', 'log-agent'),
  },
  // --- Never: any exit code of the mains triggers
  {
    name: 'Never, main exit 0, normal node -> CRR',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['kill', 'running'] } },
    expect: crr('envoy'),
  },
  {
    name: 'Never, main exit 1, normal node -> CRR',
    pod: { mains: { app: 1 }, sidecars: { envoy: ['kill', 'running'] } },
    expect: crr('envoy'),
  },
  {
    name: 'Never, main exit 137, normal node -> CRR',
    pod: { mains: { app: 137 }, sidecars: { envoy: ['kill', 'running'] } },
    expect: crr('envoy'),
  },
  {
    name: 'Never, main still running -> wait',
    pod: { mains: { app: 'running' }, sidecars: { envoy: ['kill', 'running'] } },
    expect: { action: 'wait' },
  },
  {
    name: 'Never, one of two mains running -> wait',
    pod: { mains: { a: 0, b: 'running' }, sidecars: { envoy: ['kill', 'running'] } },
    expect: { action: 'wait' },
  },
  {
    name: 'Never, two mains exited 0 and 2 -> CRR',
    pod: { mains: { a: 0, b: 2 }, sidecars: { envoy: ['kill', 'running'] } },
    expect: crr('envoy'),
  },
  {
    name: 'Never, main waiting -> wait',
    pod: { mains: { app: 'waiting' }, sidecars: { envoy: ['kill', 'running'] } },
    expect: { action: 'wait' },
  },
  // --- OnFailure: only when every main exited 0
  {
    name: 'OnFailure, main exit 0 -> CRR',
    pod: { restartPolicy: 'OnFailure', mains: { app: 0 }, sidecars: { envoy: ['kill', 'running'] } },
    expect: crr('envoy'),
  },
  {
    name: 'OnFailure, main exit 1 -> wait (kubelet restarts it)',
    pod: { restartPolicy: 'OnFailure', mains: { app: 1 }, sidecars: { envoy: ['kill', 'running'] } },
    expect: { action: 'wait' },
  },
  {
    name: 'OnFailure, mains 0 and 1 -> wait',
    pod: { restartPolicy: 'OnFailure', mains: { a: 0, b: 1 }, sidecars: { envoy: ['kill', 'running'] } },
    expect: { action: 'wait' },
  },
  {
    name: 'OnFailure, main running -> wait',
    pod: { restartPolicy: 'OnFailure', mains: { app: 'running' }, sidecars: { envoy: ['kill', 'running'] } },
    expect: { action: 'wait' },
  },
  // --- OnFailure: a sidecar exiting non-zero on our stop is restarted by the kubelet; the pod must not hang
  {
    name: 'OnFailure, CRR exists, sidecar restarted after exit 1 -> pod Failed',
    pod: { restartPolicy: 'OnFailure', mains: { app: 0 }, sidecars: { envoy: ['kill', { restartedAfter: 1, now: 'running' }] } },
    crrExists: true,
    expect: { action: 'act', swapImages: [], markTerminated: { phase: 'Failed' } },
  },
  {
    name: 'OnFailure, CRR exists, sidecar in back-off after exit 143 -> pod Failed',
    pod: { restartPolicy: 'OnFailure', mains: { app: 0 }, sidecars: { envoy: ['kill', { restartedAfter: 143, now: 'waiting' }] } },
    crrExists: true,
    expect: { action: 'act', swapImages: [], markTerminated: { phase: 'Failed' } },
  },
  {
    name: 'OnFailure, CRR exists, restarted sidecar but pod already Failed -> skip',
    pod: {
      restartPolicy: 'OnFailure',
      phase: 'Failed',
      mains: { app: 0 },
      sidecars: { envoy: ['kill', { restartedAfter: 1, now: 'running' }] },
    },
    crrExists: true,
    expect: { action: 'skip' },
  },
  {
    name: 'OnFailure, CRR exists, sidecar running after an exit 0 -> skip (nothing restarted it for failing)',
    pod: { restartPolicy: 'OnFailure', mains: { app: 0 }, sidecars: { envoy: ['kill', { restartedAfter: 0, now: 'running' }] } },
    crrExists: true,
    expect: { action: 'skip' },
  },
  {
    name: 'OnFailure, no CRR yet, sidecar restarted after its own crash -> CRR (stop it first)',
    pod: { restartPolicy: 'OnFailure', mains: { app: 0 }, sidecars: { envoy: ['kill', { restartedAfter: 2, now: 'running' }] } },
    expect: crr('envoy'),
  },
  {
    name: 'Never, CRR exists, restarted-looking sidecar -> skip (only OnFailure restarts)',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['kill', { restartedAfter: 1, now: 'running' }] } },
    crrExists: true,
    expect: { action: 'skip' },
  },
  // --- skips
  {
    name: 'Always -> skip',
    pod: { restartPolicy: 'Always', mains: { app: 0 }, sidecars: { envoy: ['kill', 'running'] } },
    expect: { action: 'skip' },
  },
  {
    name: 'deleting -> skip',
    pod: { deleting: true, mains: { app: 0 }, sidecars: { envoy: ['kill', 'running'] } },
    expect: { action: 'skip' },
  },
  {
    name: 'Pending -> skip',
    pod: { phase: 'Pending', mains: { app: 0 }, sidecars: { envoy: ['kill', 'running'] } },
    expect: { action: 'skip' },
  },
  { name: 'no sidecars -> skip', pod: { mains: { app: 0, other: 'running' }, sidecars: {} }, expect: { action: 'skip' } },
  {
    name: 'marker value false is no sidecar -> skip',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['kill=false', 'running'] } },
    expect: { action: 'skip' },
  },
  {
    name: 'marker value TRUE (case-insensitive) -> CRR',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['kill=TRUE', 'running'] } },
    expect: crr('envoy'),
  },
  { name: 'all sidecars terminated -> skip', pod: { mains: { app: 0 }, sidecars: { envoy: ['kill', 143] } }, expect: { action: 'skip' } },
  {
    name: 'CRR exists -> skip (idempotent)',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['kill', 'running'] } },
    crrExists: true,
    expect: { action: 'skip' },
  },
  // --- partial statuses
  {
    name: 'sidecar has no status yet -> wait',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['kill', 'missing'] } },
    expect: { action: 'wait' },
  },
  {
    name: 'main has no status yet -> wait',
    pod: { mains: { app: 'missing' }, sidecars: { envoy: ['kill', 'running'] } },
    expect: { action: 'wait' },
  },
  {
    name: 'node unknown -> wait',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['kill', 'running'] } },
    node: undefined,
    expect: { action: 'wait' },
  },
  {
    name: 'no nodeName -> wait',
    pod: { nodeName: null, mains: { app: 0 }, sidecars: { envoy: ['kill', 'running'] } },
    expect: { action: 'wait' },
  },
  // --- several sidecars: only the running kill-mode ones
  {
    name: 'two kill sidecars, one already exited -> CRR for the other',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['kill', 0], log: ['kill', 'running'] } },
    expect: crr('log'),
  },
  {
    name: 'two kill sidecars running -> one CRR with both',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['kill', 'running'], log: ['kill', 'running'] } },
    expect: crr('envoy', 'log'),
  },
  // --- node kinds x marker kinds
  {
    name: 'image-only sidecar on normal node -> never stopped (skip)',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['image', 'running'] } },
    expect: { action: 'skip' },
  },
  {
    name: 'kill-only sidecar on virtual node -> never stopped (skip)',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['kill', 'running'] } },
    node: 'virtual-kubelet',
    expect: { action: 'skip' },
  },
  {
    name: 'image sidecar on virtual node -> swap image',
    pod: { mains: { app: 1 }, sidecars: { envoy: ['image', 'running'] } },
    node: 'virtual-kubelet',
    expect: { action: 'act', swapImages: [{ container: 'envoy', image: QUICK }] },
  },
  {
    name: 'kill+image sidecar on virtual node -> swap image, no CRR',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['kill+image', 'running'] } },
    node: 'virtual-kubelet',
    expect: { action: 'act', swapImages: [{ container: 'envoy', image: QUICK }] },
  },
  {
    name: 'kill+image sidecar on normal node -> CRR',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['kill+image', 'running'] } },
    expect: crr('envoy'),
  },
  {
    name: 'mixed sidecars on virtual node -> only the image one swapped',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['image', 'running'], log: ['kill', 'running'] } },
    node: 'virtual-kubelet',
    expect: { action: 'act', swapImages: [{ container: 'envoy', image: QUICK }] },
  },
  {
    name: 'mixed sidecars on normal node -> CRR for the kill one only',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['image', 'running'], log: ['kill', 'running'] } },
    expect: crr('log'),
  },
  {
    name: 'OnFailure image sidecar on virtual node, main failed -> wait',
    pod: { restartPolicy: 'OnFailure', mains: { app: 3 }, sidecars: { envoy: ['image', 'running'] } },
    node: 'virtual-kubelet',
    expect: { action: 'wait' },
  },
  // --- ignore-exit-code
  {
    name: 'ignore-exit-code, main exit 0 -> mark Succeeded + CRR',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['kill+ignore', 'running'] } },
    expect: { action: 'act', swapImages: [], createCrr: { name: CRR, containers: ['envoy'] }, markTerminated: { phase: 'Succeeded' } },
  },
  {
    name: 'ignore-exit-code, main exit 2 -> mark Failed + CRR',
    pod: { mains: { app: 2 }, sidecars: { envoy: ['kill+ignore', 'running'] } },
    expect: { action: 'act', swapImages: [], createCrr: { name: CRR, containers: ['envoy'] }, markTerminated: { phase: 'Failed' } },
  },
  {
    name: 'ignore-exit-code, CRR exists, not yet marked -> mark only',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['kill+ignore', 'running'] } },
    crrExists: true,
    expect: { action: 'act', swapImages: [], markTerminated: { phase: 'Succeeded' } },
  },
  {
    name: 'ignore-exit-code, marked and terminal, CRR exists -> skip',
    pod: {
      phase: 'Succeeded',
      conditions: [{ type: 'SidecarTerminated', status: 'True' }],
      mains: { app: 0 },
      sidecars: { envoy: ['kill+ignore', 'running'] },
    },
    crrExists: true,
    expect: { action: 'skip' },
  },
  {
    name: 'ignore-exit-code, phase already Failed (kubelet) -> condition only, phase kept',
    pod: { phase: 'Failed', mains: { app: 0 }, sidecars: { envoy: ['kill+ignore', 'running'] } },
    crrExists: true,
    expect: { action: 'act', swapImages: [], markTerminated: {} },
  },
  {
    name: 'ignore-exit-code plus running plain kill sidecar -> CRR for the plain one first, no mark',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['kill+ignore', 'running'], log: ['kill', 'running'] } },
    expect: crr('log'),
  },
  {
    name: 'ignore-exit-code after the plain sidecar exited, CRR exists -> mark',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['kill+ignore', 'running'], log: ['kill', 0] } },
    crrExists: true,
    expect: { action: 'act', swapImages: [], markTerminated: { phase: 'Succeeded' } },
  },
  {
    name: 'ignore marker without kill marker is ignored (image sidecar, normal node) -> skip',
    pod: { mains: { app: 0 }, sidecars: { envoy: ['image', 'running'] } },
    expect: { action: 'skip' },
  },
];
