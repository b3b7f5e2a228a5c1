/**
 * Representative objects of every kind, exercising most fields, so the API tests never pass
 * vacuously (dist/ may hold few objects).
 */
import type {
  BroadcastJob,
  CloneSet,
  ContainerRecreateRequest,
  ImagePullJob,
  NodeImage,
  NodePodProbe,
  PodProbeMarker,
  PodUnavailableBudget,
  SidecarSet,
} from '../../../src/api/index.js';

export function sampleCloneSet(): CloneSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
    spec: {
      replicas: 4,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' }, annotations: { 'kruise.io/container-exit-priority': '{"log-agent":1,"envoy":2}' } },
        spec: {
          restartPolicy: 'Always',
          containers: [
            {
              name: 'app',
              image: 'nginx:1.25',
              ports: [{ containerPort: 80, name: 'http' }],
              env: [
                { name: 'MODE', value: 'prod' },
                { name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              ],
              resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: 0.1 as unknown as string, memory: '128Mi' } },
              readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 5 },
              securityContext: { runAsNonRoot: true, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
            },
            { name: 'log-agent', image: 'fluent-bit:3', lifecycle: { preStop: { exec: { command: ['sleep', '5'] } } } },
          ],
          volumes: [{ name: 'logs', emptyDir: { sizeLimit: '1Gi' } }],
          tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data' },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
      scaleStrategy: { disablePVCReuse: true, podsToDelete: ['web-abc'], maxUnavailable: '10%' },
      updateStrategy: {
        type: 'InPlaceIfPossible',
        partition: 1,
        maxUnavailable: '20%',
        maxSurge: 0,
        paused: false,
        priorityStrategy: { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { tier: 'canary' } } }] },
        scatterStrategy: [{ key: 'zone', value: 'a' }],
        inPlaceUpdateStrategy: { gracePeriodSeconds: 10 },
      },
      lifecycle: {
        preNormal: { finalizersHandler: ['example.io/unready-blocker'] },
        preDelete: { labelsHandler: { 'example.io/block-unready': 'true' }, markPodNotReady: true },
        inPlaceUpdate: { labelsHandler: { 'example.io/block-update': 'true' } },
      },
      revisionHistoryLimit: 5,
      minReadySeconds: 3,
    },
    status: {
      observedGeneration: 2,
      replicas: 4,
      readyReplicas: 4,
      availableReplicas: 4,
      updatedReplicas: 4,
      updatedReadyReplicas: 4,
      updatedAvailableReplicas: 4,
      labelSelector: 'app=web',
      conditions: [{ type: 'FailedScale', status: 'False', lastTransitionTime: '2024-01-02T15:04:05Z' }],
    },
  };
}

export function sampleSidecarSet(): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'logtail' },
    spec: {
      selector: { matchLabels: { app: 'webserver' } },
      namespace: 'default',
      containers: [
        {
          name: 'logtail',
          image: 'logtail:1.0',
          podInjectPolicy: 'BeforeAppContainer',
          shareVolumePolicy: { type: 'enabled' },
          upgradeStrategy: { upgradeType: 'ColdUpgrade' },
          transferEnv: [{ sourceContainerName: 'app', envName: 'TZ' }],
          volumeMounts: [{ name: 'log', mountPath: '/var/log' }],
          env: [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }],
        },
      ],
      initContainers: [{ name: 'init', image: 'busybox', command: ['true'], podInjectPolicy: 'AfterAppContainer' }],
      volumes: [{ name: 'log', emptyDir: {} }],
      updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1, partition: '10%', selector: { matchLabels: { canary: 'true' } } },
      injectionStrategy: { paused: false, revision: { customVersion: 'v2', policy: 'Always' } },
      imagePullSecrets: [{ name: 'regcred' }],
      revisionHistoryLimit: 10,
      patchPodMetadata: [{ annotations: { 'oom-score': '1' }, patchPolicy: 'Retain' }],
    },
    status: { observedGeneration: 1, matchedPods: 3, updatedPods: 3, readyPods: 3, updatedReadyPods: 3, latestRevision: 'logtail-abc' },
  };
}

export function sampleImagePullJob(): ImagePullJob {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ImagePullJob',
    metadata: { name: 'pull-nginx', namespace: 'default' },
    spec: {
      image: 'nginx:1.9.1',
      pullSecrets: ['regcred'],
      selector: { names: ['node-a', 'node-b'] },
      parallelism: 2,
      pullPolicy: { timeoutSeconds: 300, backoffLimit: 2 },
      completionPolicy: { type: 'Always', activeDeadlineSeconds: 1200, ttlSecondsAfterFinished: 300 },
      sandboxConfig: {
        annotations: { 'io.kubernetes.image.metrics.tags': 'cluster=cn-shanghai' },
        labels: { 'io.kubernetes.image.app': 'foo' },
      },
      imagePullPolicy: 'IfNotPresent',
    },
    status: { desired: 2, active: 1, succeeded: 1, failed: 0, startTime: '2024-01-02T15:04:05Z', failedNodes: [] },
  };
}

export function sampleContainerRecreateRequest(): ContainerRecreateRequest {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ContainerRecreateRequest',
    metadata: {
      name: 'sidecar-termination-1234',
      namespace: 'default',
      labels: { 'crr.apps.kruise.io/pod-uid': '1234', 'crr.apps.kruise.io/node-name': 'node-a' },
    },
    spec: {
      podName: 'job-abc',
      containers: [
        {
          name: 'envoy',
          preStop: { httpGet: { path: '/quit', port: 15000 } },
          ports: [{ containerPort: 15000, protocol: 'TCP' }],
          statusContext: { containerID: 'containerd://abc', restartCount: 0 },
        },
      ],
      strategy: {
        failurePolicy: 'Ignore',
        forceRecreate: true,
        orderedRecreate: false,
        terminationGracePeriodSeconds: 30,
        unreadyGracePeriodSeconds: 5,
        minStartedSeconds: 1,
      },
      activeDeadlineSeconds: 300,
      ttlSecondsAfterFinished: 600,
    },
    status: {
      phase: 'Completed',
      completionTime: '2024-01-02T15:04:05Z',
      containerRecreateStates: [{ name: 'envoy', phase: 'Succeeded', isKilled: true }],
    },
  };
}

export function sampleNodeImage(): NodeImage {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'NodeImage',
    metadata: { name: 'node-a', labels: { 'kubernetes.io/hostname': 'node-a' } },
    spec: {
      images: {
        'docker.io/library/nginx': {
          pullSecrets: [{ namespace: 'kruise-daemon-config', name: 'regcred' }],
          sandboxConfig: { labels: { 'io.kubernetes.image.app': 'foo' } },
          tags: [
            {
              tag: '1.9.1',
              createdAt: '2024-01-02T15:04:05Z',
              version: 1,
              imagePullPolicy: 'IfNotPresent',
              pullPolicy: { timeoutSeconds: 600, backoffLimit: 3, ttlSecondsAfterFinished: 900, activeDeadlineSeconds: 1200 },
              ownerReferences: [
                { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ImagePullJob', name: 'pull-nginx', namespace: 'default', uid: 'u1' },
              ],
            },
          ],
        },
      },
    },
    status: {
      desired: 1,
      succeeded: 1,
      pulling: 0,
      waiting: 0,
      failed: 0,
      imageStatuses: {
        'docker.io/library/nginx': { tags: [{ tag: '1.9.1', phase: 'Succeeded', progress: 100, version: 1, imageID: 'sha256:abc' }] },
      },
      firstSyncStatus: { status: 'Succeeded', syncAt: '2024-01-02T15:04:05Z' },
    },
  };
}

export function sampleBroadcastJob(): BroadcastJob {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'BroadcastJob',
    metadata: { name: 'warm-cache', namespace: 'default' },
    spec: {
      parallelism: '50%',
      template: {
        metadata: { labels: { app: 'warm-cache' } },
        spec: {
          restartPolicy: 'Never',
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }],
          containers: [{ name: 'warm', image: 'busybox:1.36', command: ['sh', '-c', 'echo warm'] }],
        },
      },
      completionPolicy: { type: 'Always', activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 300 },
      failurePolicy: { type: 'Continue', restartLimit: 2 },
      paused: false,
    },
    status: {
      startTime: '2024-01-02T15:04:05Z',
      completionTime: '2024-01-02T15:05:05Z',
      active: 0,
      succeeded: 2,
      failed: 0,
      desired: 2,
      phase: 'completed',
      conditions: [
        {
          type: 'Complete',
          status: 'True',
          lastProbeTime: '2024-01-02T15:05:05Z',
          lastTransitionTime: '2024-01-02T15:05:05Z',
          reason: 'Complete',
          message: 'Job completed, 2 pods succeeded, 0 pods failed',
        },
      ],
    },
  };
}

export function samplePodProbeMarker(): PodProbeMarker {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'PodProbeMarker',
    metadata: { name: 'game-probes', namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: 'game' } },
      probes: [
        {
          name: 'idle',
          containerName: 'main',
          probe: { exec: { command: ['/bin/sh', '-c', 'test -f /tmp/idle'] }, initialDelaySeconds: 1, periodSeconds: 5, timeoutSeconds: 2 },
          markerPolicy: [
            {
              state: 'Succeeded',
              labels: { 'game.io/idle': 'true' },
              annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-10' },
            },
            { state: 'Failed', labels: { 'game.io/idle': 'false' } },
          ],
          podConditionType: 'game.io/idle',
        },
        {
          name: 'http',
          containerName: 'main',
          probe: {
            httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP', httpHeaders: [{ name: 'X-Probe', value: 'kruise' }] },
            successThreshold: 1,
            failureThreshold: 3,
          },
          podConditionType: 'game.io/http',
        },
        { name: 'tcp', containerName: 'main', probe: { tcpSocket: { port: 8080 } }, podConditionType: 'game.io/tcp' },
      ],
    },
    status: { observedGeneration: 1, matchedPods: 2 },
  };
}

export function sampleNodePodProbe(): NodePodProbe {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'NodePodProbe',
    metadata: { name: 'node-1' },
    spec: {
      podProbes: [
        {
          name: 'game-0',
          namespace: 'default',
          uid: '6b1f6c1e-0000-4000-8000-000000000001',
          IP: '10.0.0.7',
          probes: [{ name: 'game-probes#idle', containerName: 'main', probe: { exec: { command: ['cat', '/tmp/idle'] } } }],
        },
      ],
    },
    status: {
      podProbeStatuses: [
        {
          name: 'game-0',
          namespace: 'default',
          uid: '6b1f6c1e-0000-4000-8000-000000000001',
          probeStates: [
            {
              name: 'game-probes#idle',
              state: 'Succeeded',
              lastProbeTime: '2024-01-02T15:04:05Z',
              lastTransitionTime: '2024-01-02T15:04:05Z',
              message: 'ok',
            },
          ],
        },
      ],
    },
  };
}

export function sampleImageListPullJob(): import('../../../src/api/index.js').ImageListPullJob {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ImageListPullJob',
    metadata: { name: 'prepull-release', namespace: 'default' },
    spec: {
      images: ['registry.example.com/app:2.0', 'registry.example.com/sidecar:1.4'],
      pullSecrets: ['registry-cred'],
      selector: { names: ['node-a'], matchLabels: { pool: 'web' } },
      parallelism: 2,
      pullPolicy: { timeoutSeconds: 300, backoffLimit: 2 },
      completionPolicy: { type: 'Always', activeDeadlineSeconds: 900, ttlSecondsAfterFinished: 600 },
      sandboxConfig: { labels: { team: 'web' } },
      imagePullPolicy: 'IfNotPresent',
    },
    status: {
      startTime: '2024-01-02T15:04:05Z',
      completionTime: '2024-01-02T15:06:05Z',
      desired: 2,
      active: 0,
      completed: 2,
      succeeded: 1,
      failedImageStatuses: [
        {
          imagePullJob: 'prepull-release-x7k2p',
          name: 'registry.example.com/sidecar:1.4',
          message: 'pull failed on 1 of 2 node(s); ImagePullJob prepull-release-x7k2p lists them in status.failedNodes',
        },
      ],
    },
  };
}

export function samplePodUnavailableBudget(): PodUnavailableBudget {
  return {
    apiVersion: 'policy.kruise.io/v1alpha1',
    kind: 'PodUnavailableBudget',
    metadata: { name: 'web-budget', namespace: 'default' },
    spec: { targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web' }, maxUnavailable: '25%' },
    status: {
      observedGeneration: 1,
      unavailableAllowed: 1,
      currentAvailable: 4,
      desiredAvailable: 3,
      totalReplicas: 4,
      disruptedPods: { 'web-x7k2p': '2026-01-02T03:04:05Z' },
    },
  };
}

export function sampleDaemonSet(): import('../../../src/api/index.js').DaemonSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'DaemonSet',
    metadata: { name: 'node-agent', namespace: 'kube-system' },
    spec: {
      selector: { matchLabels: { app: 'node-agent' } },
      template: {
        metadata: { labels: { app: 'node-agent' } },
        spec: { containers: [{ name: 'agent', image: 'registry.example.com/agent:1.0' }], tolerations: [{ operator: 'Exists' }] },
      },
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: {
          rollingUpdateType: 'InPlaceIfPossible',
          maxUnavailable: '10%',
          partition: 2,
          selector: { matchLabels: { 'node-pool': 'canary' } },
          paused: false,
        },
      },
      burstReplicas: 50,
      minReadySeconds: 5,
      revisionHistoryLimit: 5,
      lifecycle: { preDelete: { labelsHandler: { 'example.com/drained': 'false' } } },
    },
    status: {
      currentNumberScheduled: 3,
      numberMisscheduled: 0,
      desiredNumberScheduled: 3,
      numberReady: 3,
      observedGeneration: 2,
      updatedNumberScheduled: 1,
      numberAvailable: 3,
      numberUnavailable: 0,
      daemonSetHash: '6d5f7c8b9',
    },
  };
}

/** At v1alpha1, upstream's fields of that version (the v1beta1-only ones are checked per version). */
export function sampleStatefulSet(): import('../../../src/api/index.js').AdvancedStatefulSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'default' },
    spec: {
      replicas: 3,
      serviceName: 'db',
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { app: 'db' } },
      template: {
        metadata: { labels: { app: 'db' } },
        spec: { readinessGates: [{ conditionType: 'InPlaceUpdateReady' }], containers: [{ name: 'db', image: 'postgres:16' }] },
      },
      volumeClaimTemplates: [
        { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
      ],
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: {
          partition: 1,
          maxUnavailable: '50%',
          podUpdatePolicy: 'InPlaceIfPossible',
          paused: false,
          minReadySeconds: 10,
          inPlaceUpdateStrategy: { gracePeriodSeconds: 5 },
          unorderedUpdate: { priorityStrategy: { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { zone: 'a' } } }] } },
        },
      },
      revisionHistoryLimit: 10,
    },
    status: {
      observedGeneration: 2,
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      currentReplicas: 1,
      updatedReplicas: 2,
      currentRevision: 'db-7b9d8c6f5',
      updateRevision: 'db-5f6c7d8b9',
      collisionCount: 0,
      labelSelector: 'app=db',
    },
  };
}

export const SAMPLES = {
  SidecarSet: sampleSidecarSet,
  CloneSet: sampleCloneSet,
  ImagePullJob: sampleImagePullJob,
  ContainerRecreateRequest: sampleContainerRecreateRequest,
  NodeImage: sampleNodeImage,
  BroadcastJob: sampleBroadcastJob,
  ImageListPullJob: sampleImageListPullJob,
  PodProbeMarker: samplePodProbeMarker,
  NodePodProbe: sampleNodePodProbe,
  PodUnavailableBudget: samplePodUnavailableBudget,
  StatefulSet: sampleStatefulSet,
  DaemonSet: sampleDaemonSet,
} as const;
