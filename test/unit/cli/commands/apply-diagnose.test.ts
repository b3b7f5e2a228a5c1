// What `cdk8s-kruise apply` names as the cause of a stalled phase, from the pods and events kubectl returns, and how
// it tells an unreachable cluster from a refusal. The cluster flows: test/e2e/gitops-apply (no pod is ever created)
// and test/node/gitops-apply (an image that cannot be pulled, on a real kubelet).
import { describe, expect, it } from 'vitest';
import { diagnoseStall, kubectlFailure, type EventFacts, type PodFacts } from '../../../../src/cli/commands/apply-diagnose.js';

const workload = { kind: 'Deployment', name: 'kruise-controller-manager' };
const pod = (name: string, status: PodFacts['status']): PodFacts => ({ metadata: { name }, status });
const warning = (kind: string, name: string, reason: string, message: string, at = '2026-01-01T00:00:00Z'): EventFacts => ({
  type: 'Warning',
  reason,
  message,
  involvedObject: { kind, name },
  lastTimestamp: at,
});
const M = 'kruise-controller-manager-6d4f9-abcde';

describe('diagnoseStall names the cause', () => {
  it.each<[string, PodFacts[], EventFacts[], RegExp]>([
    ['no pod and no event', [], [], /^no pod was created for the Deployment \(is the cluster's controller manager running\?\)$/],
    [
      'no pod, a ReplicaSet that cannot create one',
      [],
      [warning('ReplicaSet', 'kruise-controller-manager-6d4f9', 'FailedCreate', 'pods "x" is forbidden: exceeded quota: q')],
      /^no pod could be created: pods "x" is forbidden: exceeded quota: q$/,
    ],
    [
      'an image that cannot be pulled',
      [
        pod(M, {
          phase: 'Pending',
          containerStatuses: [
            {
              name: 'manager',
              image: 'ghcr.io/cdk8s-kruise/cdk8s-kruise:0.1.0',
              ready: false,
              state: {
                waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "ghcr.io/cdk8s-kruise/cdk8s-kruise:0.1.0"' },
              },
            },
          ],
        }),
      ],
      [],
      /^the image ghcr\.io\/cdk8s-kruise\/cdk8s-kruise:0\.1\.0 of container manager cannot be pulled \(ImagePullBackOff\): Back-off pulling/,
    ],
    [
      'a pull failure seen only in events (the container has no status yet)',
      [pod(M, { phase: 'Pending' })],
      [warning('Pod', M, 'Failed', 'Failed to pull image "x:1": not found')],
      /^an image cannot be pulled: Failed to pull image "x:1": not found$/,
    ],
    [
      'a crash loop',
      [
        pod(M, {
          phase: 'Running',
          containerStatuses: [
            {
              name: 'manager',
              ready: false,
              restartCount: 4,
              state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' } },
              lastState: { terminated: { exitCode: 2, reason: 'Error' } },
            },
          ],
        }),
      ],
      [],
      new RegExp(`^container manager of pod ${M} is crash-looping \\(last exit code 2, Error, 4 restart\\(s\\)\\)`),
    ],
    [
      'a container that cannot be created',
      [
        pod(M, {
          phase: 'Pending',
          containerStatuses: [
            {
              name: 'manager',
              ready: false,
              state: { waiting: { reason: 'CreateContainerConfigError', message: 'secret "s" not found' } },
            },
          ],
        }),
      ],
      [],
      new RegExp(`^container manager of pod ${M} cannot be created \\(CreateContainerConfigError\\): secret "s" not found$`),
    ],
    [
      'an unschedulable pod',
      [
        pod(M, {
          phase: 'Pending',
          conditions: [
            { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/1 nodes are available: 1 Insufficient cpu.' },
          ],
        }),
      ],
      [],
      new RegExp(`^pod ${M} cannot be scheduled: 0/1 nodes are available: 1 Insufficient cpu\\.$`),
    ],
    [
      'a running pod whose readiness probe fails',
      [pod(M, { phase: 'Running', containerStatuses: [{ name: 'manager', ready: false, state: {} }] })],
      [warning('Pod', M, 'Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 500')],
      new RegExp(`^pod ${M} runs but is not ready: Readiness probe failed: HTTP probe failed with statuscode: 500$`),
    ],
    [
      'pods still starting',
      [pod(M, { phase: 'Pending', containerStatuses: [{ name: 'manager', state: { waiting: { reason: 'ContainerCreating' } } }] })],
      [],
      /^1 pod\(s\) not ready yet \(Pending\); the rollout may need a longer --timeout$/,
    ],
  ])('%s', (_name, pods, events, cause) => {
    expect(diagnoseStall(workload, pods, events).cause).toMatch(cause);
  });

  it("lists each pod's state and the newest Warning events about the workload and its pods, not others", () => {
    const d = diagnoseStall(
      workload,
      [
        pod(M, {
          phase: 'Pending',
          containerStatuses: [{ name: 'manager', state: { waiting: { reason: 'ErrImagePull', message: 'not found' } } }],
        }),
      ],
      [
        warning('Pod', M, 'Failed', 'older', '2026-01-01T00:00:00Z'),
        warning('Pod', M, 'Failed', 'newer', '2026-01-01T00:01:00Z'),
        warning('Pod', 'someone-else', 'Failed', 'not ours'),
        warning('Deployment', 'another-deployment', 'Failed', 'not ours either'),
      ],
    );
    expect(d.details).toEqual([
      `pod ${M}: Pending; container manager: ErrImagePull: not found`,
      `event Pod/${M} Failed: newer`,
      `event Pod/${M} Failed: older`,
    ]);
  });

  it('bounds what it shows: at most 8 events, long messages clipped', () => {
    const events = Array.from({ length: 20 }, (_, i) =>
      warning('Pod', M, 'Failed', 'x'.repeat(1000), `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`),
    );
    const d = diagnoseStall(workload, [pod(M, { phase: 'Pending' })], events);
    expect(d.details.filter((l) => l.startsWith('event '))).toHaveLength(8);
    expect(Math.max(...d.details.map((l) => l.length))).toBeLessThan(400);
  });
});

describe('kubectlFailure tells an unreachable cluster from a refusal', () => {
  it.each([
    ['Unable to connect to the server: dial tcp 127.0.0.1:6443: connect: connection refused', 'unreachable'],
    ['The connection to the server localhost:8080 was refused - did you specify the right host or port?', 'unreachable'],
    ['Unable to connect to the server: tls: failed to verify certificate: x509: certificate signed by unknown authority', 'unreachable'],
    ['error: You must be logged in to the server (Unauthorized)', 'unauthorized'],
    ['Error from server (Forbidden): deployments.apps "x" is forbidden: User "u" cannot patch resource', 'refused'],
    ['Error from server (BadRequest): error when creating "x.yaml": CloneSet in version "v1alpha1" cannot be handled', 'refused'],
  ])('%s → %s', (output, kind) => {
    expect(kubectlFailure(output).kind).toBe(kind);
  });
});
