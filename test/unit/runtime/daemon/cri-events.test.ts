import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import {
  changeOfEvent,
  containerChanges,
  snapshotOf,
  streamUnsupported,
  type ContainerSnapshot,
} from '../../../../src/runtime/daemon/cri-events.js';
import { KubeletLabels, type Container, type ContainerState } from '../../../../src/runtime/cri/types.js';
import { taskExitEnvelope, taskExitOf } from '../../../../src/runtime/cri/containerd-events.js';

const snap = (entries: Record<string, ContainerState>): Map<string, ContainerSnapshot> =>
  new Map(Object.entries(entries).map(([id, state]) => [id, { state, podUid: 'u1', containerName: `c-${id}` }]));

describe('containerChanges (the poll diff)', () => {
  const cases: Array<[string, Record<string, ContainerState>, Record<string, ContainerState>, string[]]> = [
    ['nothing changed', { a: 'CONTAINER_RUNNING' }, { a: 'CONTAINER_RUNNING' }, []],
    ['running -> exited is a stop', { a: 'CONTAINER_RUNNING' }, { a: 'CONTAINER_EXITED' }, ['a:stopped']],
    ['created -> running is a start', { a: 'CONTAINER_CREATED' }, { a: 'CONTAINER_RUNNING' }, ['a:started']],
    [
      'created -> exited between two looks: started and stopped',
      { a: 'CONTAINER_CREATED' },
      { a: 'CONTAINER_EXITED' },
      ['a:started', 'a:stopped'],
    ],
    ['new running container', {}, { a: 'CONTAINER_RUNNING' }, ['a:created', 'a:started']],
    ['new container already exited', {}, { a: 'CONTAINER_EXITED' }, ['a:created', 'a:started', 'a:stopped']],
    ['new created container', {}, { a: 'CONTAINER_CREATED' }, ['a:created']],
    ['running container removed: stopped then deleted', { a: 'CONTAINER_RUNNING' }, {}, ['a:stopped', 'a:deleted']],
    ['exited container removed: deleted only', { a: 'CONTAINER_EXITED' }, {}, ['a:deleted']],
    [
      'several at once',
      { a: 'CONTAINER_RUNNING', b: 'CONTAINER_RUNNING', c: 'CONTAINER_EXITED' },
      { a: 'CONTAINER_EXITED', b: 'CONTAINER_RUNNING' },
      ['a:stopped', 'c:deleted'],
    ],
  ];
  it.each(cases)('%s', (_name, prev, next, want) => {
    expect(containerChanges(snap(prev), snap(next)).map((c) => `${c.containerId}:${c.type}`)).toEqual(want);
  });

  it('carries the pod UID and container name of the kubelet labels', () => {
    const list: Container[] = [
      {
        id: 'x',
        podSandboxId: 's',
        metadata: { name: 'meta-name', attempt: 0 },
        image: null,
        imageRef: '',
        state: 'CONTAINER_EXITED',
        createdAt: '0',
        labels: { [KubeletLabels.podUid]: 'pod-1', [KubeletLabels.containerName]: 'envoy' },
        annotations: {},
      },
    ];
    const next = snapshotOf(list);
    expect(containerChanges(new Map([['x', { state: 'CONTAINER_RUNNING' }]]), next)).toEqual([
      { containerId: 'x', type: 'stopped', podUid: 'pod-1', containerName: 'envoy' },
    ]);
  });
});

describe('changeOfEvent (the stream)', () => {
  const status = (id: string, name: string) => ({
    id,
    metadata: { name, attempt: 0 },
    state: 'CONTAINER_EXITED' as const,
    createdAt: '0',
    startedAt: '0',
    finishedAt: '0',
    exitCode: 0,
    imageRef: '',
    reason: '',
    message: '',
    labels: { [KubeletLabels.podUid]: 'pod-2', [KubeletLabels.containerName]: name },
    annotations: {},
  });
  it('maps the type and finds the pod and container in the event statuses', () => {
    expect(
      changeOfEvent({
        containerId: 'b',
        containerEventType: 'CONTAINER_STOPPED_EVENT',
        createdAt: '1',
        containersStatuses: [status('a', 'app'), status('b', 'log-agent')],
      }),
    ).toEqual({ containerId: 'b', type: 'stopped', podUid: 'pod-2', containerName: 'log-agent' });
  });
  it('keeps the pod of another status when its own is absent, and no name', () => {
    expect(
      changeOfEvent({
        containerId: 'z',
        containerEventType: 'CONTAINER_DELETED_EVENT',
        createdAt: '1',
        containersStatuses: [status('a', 'app')],
      }),
    ).toEqual({ containerId: 'z', type: 'deleted', podUid: 'pod-2', containerName: undefined });
  });
  it('ignores an event without a container', () => {
    expect(
      changeOfEvent({ containerId: '', containerEventType: 'CONTAINER_STARTED_EVENT', createdAt: '1', containersStatuses: [] }),
    ).toBeUndefined();
  });
});

describe('streamUnsupported', () => {
  it.each([
    [{ code: grpc.status.UNIMPLEMENTED, details: 'unknown method GetContainerEvents' }, true],
    [{ code: grpc.status.UNKNOWN, details: 'not implemented yet' }, true],
    [{ code: grpc.status.UNKNOWN, details: 'something else' }, false],
    [{ code: grpc.status.UNAVAILABLE, details: 'connection refused' }, false],
    [{ code: grpc.status.CANCELLED, details: 'Cancelled on client' }, false],
  ])('%o -> %s', (err, want) => {
    expect(streamUnsupported(err)).toBe(want);
  });
});

describe("taskExitOf (containerd's /tasks/exit)", () => {
  const at = 1_790_000_000_123;
  it('decodes the container, exit code and exit time of an init process exit', () => {
    expect(taskExitOf(taskExitEnvelope({ containerId: 'c1', exitCode: 137, exitedAtMs: at }))).toEqual({
      containerId: 'c1',
      exitCode: 137,
      exitedAtMs: at,
    });
  });
  it("ignores an exec's exit (a preStop exec hook), other topics and namespaces, and undecodable payloads", () => {
    const e = taskExitEnvelope({ containerId: 'c1', exitCode: 0, exitedAtMs: at });
    expect(taskExitOf(taskExitEnvelope({ containerId: 'c1', id: 'exec-1', exitCode: 0, exitedAtMs: at }))).toBeUndefined();
    expect(taskExitOf({ ...e, topic: '/tasks/start' })).toBeUndefined();
    expect(taskExitOf({ ...e, namespace: 'moby' })).toBeUndefined();
    expect(taskExitOf({ ...e, event: { typeUrl: e.event!.typeUrl, value: new Uint8Array([0xff, 0xff, 0xff]) } })).toBeUndefined();
    expect(taskExitOf({ ...e, event: undefined })).toBeUndefined();
  });
});
