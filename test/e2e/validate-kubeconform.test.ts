// `cdk8s-kruise validate` reports at least every finding kubeconform reports. kubeconform (built by the prepare step)
// runs strict and offline against schemas generated as its users generate them: the core kinds from this run's API
// server's OpenAPI v2 document, the Kruise kinds from upstream OpenKruise's CRDs (the peer version). The sample has
// mistakes in Kruise kinds and in core kinds (KRUISE-SCHEMA-004), plus valid core objects that neither may flag.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { validateInputs } from '../../src/policy/engine.js';
import { findAssets } from '../harness/assets.js';
import { uncoveredKubeconformFindings, type OurReport } from '../harness/kubeconform-compare.js';
import { crdFilesIn, fetchOpenApiV2, findKubeconform, runKubeconform, writeKubeconformSchemas } from '../harness/kubeconform.js';
import { findKruisePeerAssets } from '../harness/kruise-peer.js';

const SAMPLE = `apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata: {name: web, namespace: team}
spec:
  replicas: "3"
  selector: {matchLabels: {app: web}}
  scaleStrategy: {maxUnavailable: 1, podsToDelete: [web-0], bogus: true}
  updateStrategy: {type: InPlaceIfPossible, maxUnavaliable: 1, partition: "a"}
  revisionHistoryLimit: -1
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: "nginx:1.27"}]
  unknownTopLevel: {a: 1}
---
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: logtail}
spec:
  selector: {matchLabels: {app: web}}
  updateStrategy: {type: Rolling, maxUnavailable: [1]}
  injectionStrategy: {paused: "no"}
  containers:
    - {name: logtail, image: "busybox:1.36", podInjectPolicy: Sometimes}
  volumes: [{name: log, emptyDir: {}}]
---
apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata: {name: pull, namespace: team}
spec:
  image: "nginx:1.27"
  parallelism: true
  pullPolicy: {timeoutSeconds: "300", backoffLimit: 3, retries: 2}
  completionPolicy: {type: Sometimes}
---
apiVersion: apps.kruise.io/v1alpha1
kind: ContainerRecreateRequest
metadata: {name: crr, namespace: team}
spec:
  podName: pod-0
  containers: [{name: app, port: 80}]
  strategy: {failurePolicy: Maybe, orderedRecreate: "yes"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: team}
spec:
  replicas: "2"
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: api, image: "example.io/api:1", imagePullPolcy: Always, ports: [{containerPort: "8080"}]}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: team}
spec:
  backoffLimit: "3"
  template:
    spec:
      restartPolicy: Never
      containers: [{image: "busybox:1.36"}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: team}
spec:
  suspend: "no"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: main, image: "busybox:1.36", args: [1]}]
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: team}
spec:
  selectr: {app: api}
  ports: [{port: "80", targetPort: 8080}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: team}
data: {key: value, port: 8080}
binaryDat: {}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: valid, namespace: team}
data: {key: value}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: team}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: "example.io/db:1", resources: {requests: {cpu: 500m, memory: 1Gi}}}]
  volumeClaimTemplates:
    - metadata: {name: data}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`;

describe('validate vs kubeconform', () => {
  let dir: string;
  let schemas: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-kubeconform-'));
    const openapi = fetchOpenApiV2(findAssets().kubectl, inject('kubeconfig'));
    schemas = writeKubeconformSchemas(path.join(dir, 'schemas'), { openapi, crdFiles: crdFilesIn(findKruisePeerAssets().crdDir) });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reports every resource and field kubeconform reports on a sample with mistakes', () => {
    const file = path.join(dir, 'sample.yaml');
    writeFileSync(file, SAMPLE);
    const theirs = { resources: runKubeconform(findKubeconform(), schemas, [file]) };
    // kubeconform read every document against a schema (none missing) and found the broken ones invalid (it lists
    // only those: the valid ConfigMap and StatefulSet are absent).
    expect(theirs.resources.map((r) => `${r.kind}:${r.status}`).sort()).toEqual([
      'CloneSet:statusInvalid',
      'ConfigMap:statusInvalid',
      'ContainerRecreateRequest:statusInvalid',
      'CronJob:statusInvalid',
      'Deployment:statusInvalid',
      'ImagePullJob:statusInvalid',
      'Job:statusInvalid',
      'Service:statusInvalid',
      'SidecarSet:statusInvalid',
    ]);
    const result = validateInputs([{ file, content: SAMPLE }]);
    const ours: OurReport = { summary: {}, findings: result.findings };
    const { total, uncovered } = uncoveredKubeconformFindings(ours, theirs);
    expect(total).toBeGreaterThanOrEqual(20);
    expect(uncovered).toEqual([]);
    // The valid core objects get no schema finding from us either.
    expect(result.findings.filter((f) => f.ruleId === 'KRUISE-SCHEMA-004' && ['valid', 'db'].includes(f.resource.name))).toEqual([]);
    // Without our core-kind schema findings, kubeconform's findings on the core kinds are uncovered.
    const withoutCore = { summary: {}, findings: result.findings.filter((f) => f.ruleId !== 'KRUISE-SCHEMA-004') };
    expect(new Set(uncoveredKubeconformFindings(withoutCore, theirs).uncovered.map((u) => u.resource.split(' ')[0]))).toEqual(
      new Set(['Deployment', 'Job', 'CronJob', 'Service', 'ConfigMap']),
    );
    // The comparison notices a miss: without our findings on the CloneSet, its kubeconform errors are uncovered.
    const withoutCloneSet = { summary: {}, findings: result.findings.filter((f) => f.resource.kind !== 'CloneSet') };
    expect(uncoveredKubeconformFindings(withoutCloneSet, theirs).uncovered.map((u) => u.resource)).toContain(
      'CloneSet web (apps.kruise.io/v1alpha1)',
    );
  });
});
