import { describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify } from 'yaml';
import { validateInputs } from '../../../src/policy/engine.js';
import { previousLookup } from '../../../src/policy/previous.js';
import { RULES } from '../../../src/policy/rules/index.js';
import { advancedCronJob, CLONESET_YAML } from '../support/manifests.js';

/** Runs one rule over a YAML text (with `previous`, the previous output's objects) and returns its findings. */
function run(ruleId: string, yaml: string, previous?: string) {
  const previousOf =
    previous === undefined ? undefined : previousLookup(parseAllDocuments(previous).map((d) => d.toJS() as Record<string, unknown>));
  return validateInputs([{ file: 'case.yaml', content: yaml }], { rules: [ruleId] }, previousOf).findings.filter(
    (f) => f.ruleId === ruleId,
  );
}

const job = (containers: string, extra = { restartPolicy: 'Never', annotations: '' }) => `
apiVersion: batch/v1
kind: Job
metadata: {name: job, namespace: batch}
spec:
  template:
    metadata:
      annotations: {${extra.annotations}}
    spec:
      restartPolicy: ${extra.restartPolicy}
      containers:
${containers}
`;
const main = `        - {name: main, image: "busybox:1.36"}`;
const killSidecar = (name = 'log-agent') => `        - name: ${name}
          image: fluent-bit:3
          env: [{name: KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT, value: "true"}]`;

const cloneSet = (spec: string) => `\n${CLONESET_YAML}${spec}`;
const preDownloadCloneSet = (annotations: string) => `
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: web
  annotations: ${annotations}
spec:
  replicas: 5
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.25"}]
`;

const podProbeMarker = (selector: string, container: string) => `
apiVersion: apps.kruise.io/v1alpha1
kind: PodProbeMarker
metadata: {name: probes, namespace: default}
spec:
  selector: ${selector}
  probes:
    - name: healthy
      containerName: ${container}
      probe: {exec: {command: [cat, /healthy]}}
      podConditionType: example.io/healthy
`;
const budget = (spec: string) => `
apiVersion: policy.kruise.io/v1alpha1
kind: PodUnavailableBudget
metadata: {name: budget, namespace: default}
spec:
${spec}`;
const webDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: main, image: "nginx:1.27"}]
`;

const livenessDeployment = (value: string, probe: string) => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {apps.kruise.io/using-enhanced-liveness: ${value}}}
    spec:
      containers:
        - {name: main, image: "nginx:1.27", ${probe}}
`;

const imagePullJob = (spec: string) => `
apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata: {name: pull, namespace: default}
spec:
${spec}`;

const imageListPullJob = (spec: string) => `
apiVersion: apps.kruise.io/v1beta1
kind: ImageListPullJob
metadata: {name: prepull, namespace: default}
spec:
${spec}`;

const broadcastJob = (podSpec: string, spec = '', labels = '{app: warm}') => `
apiVersion: apps.kruise.io/v1beta1
kind: BroadcastJob
metadata: {name: warm, namespace: default}
spec:
  template:
    metadata:
      labels: ${labels}
    spec:
      containers: [{name: main, image: busybox:1.36}]
${podSpec}${spec}`;

const daemonSet = (podSpec: string, spec = '') => `
apiVersion: apps.kruise.io/v1alpha1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers: [{name: agent, image: busybox:1.36}]
${podSpec}${spec}`;

const statefulSet = (podSpec: string, spec = '') => `
apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  selector: {matchLabels: {app: db}}
  template:
    metadata:
      labels: {app: db}
    spec:
      containers: [{name: db, image: busybox:1.36}]
${podSpec}${spec}`;

const sidecarSet = (name: string, spec: string) => `
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata: {name: ${name}}
spec:
${spec}`;

const hotUpgradeSpec = (upgradeType: string) => `  selector: {matchLabels: {app: web}}
  containers:
    - name: agent
      image: "busybox:1.36"
      upgradeStrategy: {upgradeType: ${upgradeType}}
`;

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: webserver, namespace: default}
spec:
  selector: {matchLabels: {app: webserver}}
  template:
    metadata: {labels: {app: webserver}}
    spec:
      containers: [{name: nginx, image: "nginx:1.25"}, {name: logtail, image: "busybox:1.36"}]
`;

const install = (gates: string) => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: kruise-controller-manager, namespace: kruise-system}
spec:
  selector: {matchLabels: {control-plane: controller-manager}}
  template:
    metadata: {labels: {control-plane: controller-manager}}
    spec:
      containers:
        - name: manager
          image: registry.example.com/cdk8s-kruise:0.1.0
          args: ["--enable-leader-election", "--feature-gates=${gates}"]
`;

/** The bundled runtime's controller-manager as KruiseRuntime labels it (what KRUISE-RUNTIME-00x look for). */
const bundledManager = (annotations = '{}') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: kruise-controller-manager
  namespace: kruise-system
  labels: {app.kubernetes.io/part-of: cdk8s-kruise}
  annotations: ${annotations}
spec: {}
`;
const managerRunning = (image: string) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: kruise-controller-manager
  namespace: kruise-system
  labels: {app.kubernetes.io/part-of: cdk8s-kruise}
spec:
  template:
    spec:
      containers:
        - image: ${image}
          name: manager
`;
// An Advanced StatefulSet: a kind the bundled runtime serves and carries out.
const advancedStatefulSet = `apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: "db:1"}]}
`;
// An AdvancedCronJob stands for a feature the bundled runtime does not carry out: it does not serve the kind at all.
const advancedCronJobYaml = stringify(advancedCronJob());
const labelled = (apiVersion: string, kind: string, value: string, extra = '') =>
  `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: x\n  labels: {policy.kruise.io/delete-protection: ${value}}\n${extra}`;
const crd = (group: string, plural: string, value: string) =>
  labelled(
    'apiextensions.k8s.io/v1',
    'CustomResourceDefinition',
    value,
    `spec:\n  group: ${group}\n  scope: Namespaced\n  names: {plural: ${plural}, kind: X}\n  versions: [{name: v1, served: true, storage: true}]\n`,
  );

interface Case {
  /** A manifest set the rule accepts. */
  readonly pass: string;
  /** A manifest set the rule rejects, the pointer of the first finding, and its line in `fail`. */
  readonly fail: string;
  readonly pointer: string;
  readonly line: number;
  readonly message: RegExp;
  /** The previous output, for a rule that judges a change (both manifests are compared with it). */
  readonly previous?: string;
}

// One passing and one failing manifest per rule. The table is checked against RULES, so a new rule without
// cases fails the suite.
const CASES: Record<string, Case> = {
  'KRUISE-INPUT-001': {
    pass: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n',
    fail: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [a\n',
    pointer: '',
    line: 5,
    message: /malformed YAML in document 1/,
  },
  'KRUISE-INPUT-002': {
    pass: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n',
    fail: '# nothing here\n\n',
    pointer: '',
    line: 0,
    message: /no documents/,
  },
  'KRUISE-SCHEMA-001': {
    pass: cloneSet('  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 1}'),
    fail: cloneSet('  updateStrategy:\n    type: InPlaceIfPossible\n    maxUnavaliable: 1'),
    pointer: '/spec/updateStrategy/maxUnavaliable',
    line: 14,
    message: /unknown field "maxUnavaliable"/,
  },
  'KRUISE-SCHEMA-002': {
    pass: cloneSet(''),
    fail: 'apiVersion: apps.kruise.io/v1alpha1\nkind: ClonSet\nmetadata: {name: x}\n',
    pointer: '/kind',
    line: 2,
    message: /has no kind "ClonSet"/,
  },
  'KRUISE-SCHEMA-003': {
    pass: cloneSet(''),
    fail: 'apiVersion: apps.kruise.io/v1alpha1\nkind: UnitedDeployment\nmetadata: {name: ud}\n',
    pointer: '/kind',
    line: 2,
    message: /does not model/,
  },
  'KRUISE-SCHEMA-004': {
    pass: 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      containers: [{name: c, image: i, imagePullPolicy: Always}]\n',
    fail: 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      containers:\n        - name: c\n          image: i\n          imagePullPolcy: Always\n',
    pointer: '/spec/template/spec/containers/0/imagePullPolcy',
    line: 12,
    message: /unknown field "imagePullPolcy"/,
  },
  'KRUISE-IMAGE-001': {
    pass: deployment,
    fail: deployment.replace('{name: nginx, image: "nginx:1.25"}', '{name: nginx, image: "NGINX:1.27 "}'),
    pointer: '/spec/template/spec/containers/0/image',
    line: 10,
    message:
      /image "NGINX:1\.27 " of container "nginx" is not a valid image reference: it has leading or trailing whitespace, and the repository name "NGINX" has upper case/,
  },
  'KRUISE-SIDECAR-001': {
    pass: job(`${main}\n${killSidecar()}`),
    fail: job(`${main}\n${killSidecar()}`, { restartPolicy: 'Always', annotations: '' }),
    pointer: '/spec/template/spec/containers/1/env/0',
    line: 15,
    message: /restartPolicy is Always/,
  },
  'KRUISE-SIDECAR-002': {
    pass: job(`${main}\n${killSidecar()}`),
    fail: job(`${killSidecar('a')}\n${killSidecar('b')}`),
    pointer: '/spec/template/spec/containers',
    line: 11,
    message: /no main container remains/,
  },
  'KRUISE-SIDECAR-003': {
    pass: job(
      `${main}\n        - name: envoy\n          image: envoy:1\n          env: [{name: KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE, value: "registry.example.com/quick-exit:1.0"}]`,
    ),
    fail: job(
      `${main}\n        - name: envoy\n          image: envoy:1\n          env: [{name: KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE, value: "Quick Exit:latest"}]`,
    ),
    pointer: '/spec/template/spec/containers/1/env/0/value',
    line: 15,
    message: /not a valid image reference/,
  },
  'KRUISE-SIDECAR-004': {
    pass: job(
      `${main}\n        - name: envoy\n          image: envoy:1\n          env: [{name: KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE, value: "quick-exit:1"}]`,
    ).replace('restartPolicy: Never', 'restartPolicy: Never\n      nodeSelector: {type: virtual-kubelet}'),
    fail: job(
      `${main}\n        - name: envoy\n          image: envoy:1\n          env: [{name: KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE, value: "quick-exit:1"}]`,
    ),
    pointer: '/spec/template/spec/containers/1/env/0',
    line: 15,
    message: /only acts on virtual-kubelet nodes/,
  },
  'KRUISE-SIDECAR-005': {
    pass: job(`${main}\n${killSidecar()}\n          # both markers\n`).replace(
      '{name: KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT, value: "true"}',
      '{name: KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT, value: "true"}, {name: KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE, value: "true"}',
    ),
    fail: job(
      `${main}\n        - name: envoy\n          image: envoy:1\n          env: [{name: KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE, value: "true"}]`,
    ),
    pointer: '/spec/template/spec/containers/1/env/0',
    line: 15,
    message: /without KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true/,
  },
  'KRUISE-SIDECAR-006': {
    pass: job(`${main}`, {
      restartPolicy: 'Never',
      annotations: `kruise.cdk8s.io/terminate-sidecars: '[{"name":"istio-proxy","ignoreExitCode":true},{"imagePattern":"cloud-sql-proxy"}]'`,
    }),
    fail: job(`${main}`, {
      restartPolicy: 'Never',
      annotations: `kruise.cdk8s.io/terminate-sidecars: '[{"namePattern":"(a+)+$"}]'`,
    }),
    pointer: '/spec/template/metadata/annotations/kruise.cdk8s.io~1terminate-sidecars',
    line: 8,
    message: /never matches: namePattern "\(a\+\)\+\$" repeats a group/,
  },
  'KRUISE-LIVENESS-001': {
    pass: livenessDeployment('"true"', 'livenessProbe: {exec: {command: [cat, /tmp/healthy]}}'),
    fail: livenessDeployment('"true"', 'readinessProbe: {exec: {command: [cat, /tmp/healthy]}}'),
    pointer: '/spec/template/metadata/annotations/apps.kruise.io~1using-enhanced-liveness',
    line: 8,
    message: /opts into enhanced liveness, but no container declares a livenessProbe/,
  },
  'KRUISE-LIVENESS-002': {
    pass: livenessDeployment('"false"', 'livenessProbe: {exec: {command: [cat, /tmp/healthy]}}'),
    fail: livenessDeployment('"True"', 'livenessProbe: {exec: {command: [cat, /tmp/healthy]}}'),
    pointer: '/spec/template/metadata/annotations/apps.kruise.io~1using-enhanced-liveness',
    line: 8,
    message: /apps.kruise.io\/using-enhanced-liveness is "True", which no runtime reads as on/,
  },
  'KRUISE-EXITPRIO-001': {
    pass: job(`${main}\n        - {name: envoy, image: "envoy:1"}`, {
      restartPolicy: 'Never',
      annotations: `kruise.io/container-exit-priority: '{"envoy":2}'`,
    }),
    fail: job(`${main}\n        - {name: envoy, image: "envoy:1"}`, {
      restartPolicy: 'Never',
      annotations: `kruise.io/container-exit-priority: '{envoy:2}'`,
    }),
    pointer: '/spec/template/metadata/annotations/kruise.io~1container-exit-priority',
    line: 8,
    message: /not valid JSON/,
  },
  'KRUISE-EXITPRIO-002': {
    pass: job(`${main}\n        - {name: envoy, image: "envoy:1"}`, {
      restartPolicy: 'Never',
      annotations: `kruise.io/container-exit-priority: '{"envoy":2}'`,
    }),
    fail: job(`${main}\n        - {name: envoy, image: "envoy:1"}`, {
      restartPolicy: 'Never',
      annotations: `kruise.io/container-exit-priority: '{"envoi":2}'`,
    }),
    pointer: '/spec/template/metadata/annotations/kruise.io~1container-exit-priority',
    line: 8,
    message: /names container "envoi", which is not in the pod/,
  },
  'KRUISE-EXITPRIO-003': {
    pass: job(`${main}\n        - {name: envoy, image: "envoy:1"}`, {
      restartPolicy: 'Never',
      annotations: `kruise.io/container-exit-priority: '{"envoy":0}'`,
    }),
    fail: job(`${main}\n        - {name: envoy, image: "envoy:1"}`, {
      restartPolicy: 'Never',
      annotations: `kruise.io/container-exit-priority: '{"envoy":1.5}'`,
    }),
    pointer: '/spec/template/metadata/annotations/kruise.io~1container-exit-priority',
    line: 8,
    message: /non-negative integer/,
  },
  'KRUISE-LAUNCHPRIO-001': {
    pass: job(`${main}\n        - {name: envoy, image: "envoy:1", env: [{name: KRUISE_CONTAINER_PRIORITY, value: "-3"}]}`),
    fail: job(`${main}\n        - {name: envoy, image: "envoy:1", env: [{name: KRUISE_CONTAINER_PRIORITY, value: "high"}]}`),
    pointer: '/spec/template/spec/containers/1/env/0/value',
    line: 13,
    message: /container "envoy": KRUISE_CONTAINER_PRIORITY must be an integer, got "high"/,
  },
  'KRUISE-LAUNCHPRIO-002': {
    pass: job(`${main}\n        - {name: envoy, image: "envoy:1"}`),
    fail: job(`${main}\n        - {name: envoy, image: "envoy:1", env: [{name: KRUISE_CONTAINER_PRIORITY, value: "10"}]}`),
    pointer: '/spec/template/spec/containers/1/env/0',
    line: 13,
    message: /launch priority uses the barrier: one <pod>-barrier ConfigMap per pod/,
  },
  'KRUISE-LAUNCHPRIO-003': {
    pass: job(`${main}\n      initContainers:\n        - {name: setup, image: "busybox:1"}`),
    fail: job(
      `${main}\n      initContainers:\n        - {name: setup, image: "busybox:1", env: [{name: KRUISE_CONTAINER_PRIORITY, value: "1"}]}`,
    ),
    pointer: '/spec/template/spec/initContainers/0/env/0',
    line: 14,
    message: /init container "setup" sets KRUISE_CONTAINER_PRIORITY, which no webhook reads there/,
  },
  'KRUISE-EXITPRIO-004': {
    pass: job(`${main}\n        - {name: log-agent, image: "busybox:1"}\n        - {name: envoy, image: "envoy:1"}`, {
      restartPolicy: 'Never',
      annotations: `kruise.io/container-exit-priority: '{"log-agent":1,"envoy":2}'`,
    }),
    fail: job(`${main}\n        - {name: log-agent, image: "busybox:1"}\n        - {name: envoy, image: "envoy:1"}`, {
      restartPolicy: 'Never',
      annotations: `kruise.io/container-exit-priority: '{"log-agent":1,"envoy":2}'`,
    }).replace('restartPolicy: Never', 'restartPolicy: Never\n      terminationGracePeriodSeconds: 5'),
    pointer: '/spec/template/spec/terminationGracePeriodSeconds',
    line: 11,
    message: /terminationGracePeriodSeconds 5 cannot fit the 3 exit levels.*at least 6 s/,
  },
  'KRUISE-SIDECARSET-001': {
    pass: sidecarSet('logtail', '  selector: {matchLabels: {app: webserver}}\n  containers: [{name: logtail, image: "busybox:1.36"}]'),
    fail: sidecarSet(
      'logtail',
      '  selector: {matchLabels: {app: webserver}}\n  initContainers: [{name: logtail, image: "busybox:1.36"}]\n  containers:\n    - {name: logtail, image: "busybox:1.36"}',
    ),
    pointer: '/spec/containers/0/name',
    line: 9,
    message: /appears more than once/,
  },
  'KRUISE-SIDECARSET-002': {
    pass:
      deployment +
      '---' +
      sidecarSet('logtail', '  selector: {matchLabels: {app: webserver}}\n  containers: [{name: logtail-agent, image: "busybox:1.36"}]'),
    fail:
      deployment +
      '---' +
      sidecarSet('logtail', '  selector: {matchLabels: {app: webserver}}\n  containers:\n    - {name: logtail, image: "busybox:1.36"}'),
    pointer: '/spec/containers/0/name',
    line: 18,
    message: /name of a container of Deployment default\/webserver/,
  },
  'KRUISE-SIDECARSET-003': {
    pass: sidecarSet(
      's',
      '  selector: {matchLabels: {app: a}}\n  containers: [{name: c, image: "busybox:1.36"}]\n  updateStrategy: {type: RollingUpdate, maxUnavailable: 1}',
    ),
    fail: sidecarSet(
      's',
      '  selector: {matchLabels: {app: a}}\n  containers: [{name: c, image: "busybox:1.36"}]\n  updateStrategy:\n    type: RollingUpdate\n    maxUnavailable: 0',
    ),
    pointer: '/spec/updateStrategy/maxUnavailable',
    line: 10,
    message: /can never proceed/,
  },
  'KRUISE-SIDECARSET-004': {
    pass: sidecarSet('s', '  selector: {matchLabels: {app: a}}\n  containers: [{name: c, image: "busybox:1.36"}]'),
    fail: sidecarSet('s', '  selector: {}\n  containers: [{name: c, image: "busybox:1.36"}]'),
    pointer: '/spec/selector',
    line: 6,
    message: /matches no pod/,
  },
  'KRUISE-SIDECARSET-006': {
    pass: sidecarSet(
      's',
      '  selector: {matchLabels: {app: a}}\n  volumes: [{name: logs, emptyDir: {}}]\n  containers: [{name: c, image: "busybox:1.36", ports: [{name: metrics, containerPort: 9100}], volumeMounts: [{name: logs, mountPath: /logs}], readinessProbe: {tcpSocket: {port: 9100}}}]',
    ),
    fail: sidecarSet(
      's',
      '  selector: {matchLabels: {app: a}}\n  containers:\n    - name: c\n      image: "busybox:1.36"\n      volumeMounts: [{name: logs, mountPath: /logs}]',
    ),
    pointer: '/spec/containers/0/volumeMounts/0/name',
    line: 10,
    message: /mounts volume "logs", which spec\.volumes does not define/,
  },
  'KRUISE-SIDECARSET-008': {
    pass: sidecarSet(
      's',
      '  selector: {matchLabels: {app: a}}\n  containers: [{name: c, image: "busybox:1.36", resourcesPolicy: {targetContainersMode: sum, resourcesExpr: {limits: {cpu: "max(cpu*50%, 50m)"}}}}]',
    ),
    fail: sidecarSet(
      's',
      '  selector: {matchLabels: {app: a}}\n  containers:\n    - name: c\n      image: "busybox:1.36"\n      resourcesPolicy: {targetContainersMode: sum, resourcesExpr: {limits: {cpu: "cpu * cpu"}}}',
    ),
    pointer: '/spec/containers/0/resourcesPolicy/resourcesExpr/limits/cpu',
    line: 10,
    message: /invalid expression: a quantity cannot be multiplied by a quantity/,
  },
  'KRUISE-SIDECARSET-007': {
    pass:
      deployment +
      '---' +
      sidecarSet('logtail', '  selector: {matchLabels: {app: webserver}}\n  containers: [{name: logtail-agent, image: "busybox:1.36"}]'),
    fail:
      deployment +
      '---' +
      sidecarSet('logtail', '  selector:\n    matchLabels: {app: webserer}\n  containers: [{name: logtail-agent, image: "busybox:1.36"}]'),
    pointer: '/spec/selector',
    line: 16,
    message: /selector \{app: webserer\} does not match the one pod template in these inputs/,
  },
  'KRUISE-SIDECARSET-005': {
    pass:
      sidecarSet('a', '  selector: {matchLabels: {app: web}}\n  containers: [{name: proxy, image: "envoy:1"}]') +
      '\n---' +
      sidecarSet('b', '  selector: {matchLabels: {app: db}}\n  containers: [{name: proxy, image: "envoy:1"}]'),
    fail:
      sidecarSet('a', '  selector: {matchLabels: {app: web}}\n  containers: [{name: proxy, image: "envoy:1"}]') +
      '\n---' +
      sidecarSet('b', '  selector: {matchLabels: {tier: front}}\n  containers:\n    - {name: proxy, image: "envoy:1"}'),
    pointer: '/spec/containers/0/name',
    line: 15,
    message: /also declared by SidecarSet "a"/,
  },
  'KRUISE-IMAGEPULLJOB-001': {
    pass: imagePullJob('  image: nginx:1.9.1\n  selector: {names: [node-1]}'),
    fail: imagePullJob('  image: nginx:1.9.1\n  selector: {names: [node-1]}\n  podSelector: {matchLabels: {app: web}}'),
    pointer: '/spec/podSelector',
    line: 8,
    message: /mutually exclusive/,
  },
  'KRUISE-IMAGEPULLJOB-002': {
    pass: imagePullJob('  image: nginx:1.9.1\n  parallelism: 10'),
    fail: imagePullJob('  image: nginx:1.9.1\n  parallelism: "50%"'),
    pointer: '/spec/parallelism',
    line: 7,
    message: /is a percentage/,
  },
  'KRUISE-IMAGEPULLJOB-003': {
    pass: imagePullJob('  image: nginx:1.9.1\n  completionPolicy: {type: Always, ttlSecondsAfterFinished: 300}'),
    fail: imagePullJob('  image: nginx:1.9.1\n  completionPolicy:\n    type: Never\n    ttlSecondsAfterFinished: 300'),
    pointer: '/spec/completionPolicy/ttlSecondsAfterFinished',
    line: 9,
    message: /completionPolicy.type is Never/,
  },
  'KRUISE-BROADCASTJOB-001': {
    pass: broadcastJob('      restartPolicy: OnFailure'),
    fail: broadcastJob('      restartPolicy: Always'),
    pointer: '/spec/template/spec/restartPolicy',
    line: 11,
    message: /restartPolicy "Always" is not Never or OnFailure/,
  },
  'KRUISE-BROADCASTJOB-002': {
    pass: broadcastJob('      restartPolicy: Never', '\n  completionPolicy: {type: Always, ttlSecondsAfterFinished: 30}'),
    fail: broadcastJob('      restartPolicy: Never', '\n  completionPolicy:\n    type: Never\n    activeDeadlineSeconds: 30'),
    pointer: '/spec/completionPolicy/activeDeadlineSeconds',
    line: 14,
    message: /completionPolicy.type is Never/,
  },
  'KRUISE-BROADCASTJOB-003': {
    pass: broadcastJob('      restartPolicy: Never'),
    fail: broadcastJob('      restartPolicy: Never', '', '{app: warm, broadcastjob-name: other}'),
    pointer: '/spec/template/metadata/labels/broadcastjob-name',
    line: 8,
    message: /set by the BroadcastJob controller/,
  },
  'KRUISE-DAEMONSET-001': {
    pass: daemonSet('      restartPolicy: Always'),
    fail: daemonSet('      restartPolicy: OnFailure'),
    pointer: '/spec/template/spec/restartPolicy',
    line: 12,
    message: /restartPolicy "OnFailure" is not Always/,
  },
  'KRUISE-DAEMONSET-002': {
    pass: daemonSet(
      '',
      '  updateStrategy:\n    type: RollingUpdate\n    rollingUpdate: {rollingUpdateType: InPlaceIfPossible, maxUnavailable: 10%}',
    ),
    fail: daemonSet(
      '',
      '  updateStrategy:\n    type: RollingUpdate\n    rollingUpdate: {rollingUpdateType: InPlaceIfPossible, maxUnavailable: 0, maxSurge: 1}',
    ),
    pointer: '/spec/updateStrategy/rollingUpdate/maxSurge',
    line: 14,
    message: /maxSurge is set with rollingUpdateType InPlaceIfPossible/,
  },
  'KRUISE-STATEFULSET-001': {
    pass: statefulSet(
      '      readinessGates: [{conditionType: InPlaceUpdateReady}]',
      '\n  updateStrategy:\n    type: RollingUpdate\n    rollingUpdate: {podUpdatePolicy: InPlaceIfPossible}',
    ),
    fail: statefulSet('', '  updateStrategy:\n    type: RollingUpdate\n    rollingUpdate: {podUpdatePolicy: InPlaceIfPossible}'),
    pointer: '/spec/updateStrategy/rollingUpdate/podUpdatePolicy',
    line: 14,
    message: /podUpdatePolicy "InPlaceIfPossible" needs the InPlaceUpdateReady readiness gate/,
  },
  'KRUISE-STATEFULSET-002': {
    pass: statefulSet(
      '',
      '  podManagementPolicy: Parallel\n  updateStrategy:\n    type: RollingUpdate\n    rollingUpdate: {maxUnavailable: 2}',
    ),
    fail: statefulSet('', '  updateStrategy:\n    type: RollingUpdate\n    rollingUpdate: {maxUnavailable: 2}'),
    pointer: '/spec/updateStrategy/rollingUpdate/maxUnavailable',
    line: 14,
    message: /maxUnavailable 2 needs podManagementPolicy Parallel/,
  },
  'KRUISE-IMAGEPULLJOB-004': {
    pass: imagePullJob(
      '  image: nginx:1.9.1\n  pullPolicy: {timeoutSeconds: 100}\n  completionPolicy: {type: Always, activeDeadlineSeconds: 100}',
    ),
    fail: imagePullJob('  image: nginx:1.9.1\n  completionPolicy:\n    type: Always\n    activeDeadlineSeconds: 100'),
    pointer: '/spec/completionPolicy/activeDeadlineSeconds',
    line: 9,
    message: /shorter than pullPolicy.timeoutSeconds 600 \(the default\)/,
  },
  'KRUISE-IMAGEPULLJOB-005': {
    pass: imagePullJob('  image: registry.example.com:5000/team/nginx:1.9.1@sha256:' + 'a'.repeat(64)),
    fail: imagePullJob('  image: nginx::1.9.1'),
    pointer: '/spec/image',
    line: 6,
    message: /not a valid image reference/,
  },
  'KRUISE-IMAGELISTPULLJOB-001': {
    pass: imageListPullJob('  images: [nginx:1.25]'),
    fail: imageListPullJob('  images: []'),
    pointer: '/spec/images',
    line: 6,
    message: /spec.images is empty/,
  },
  'KRUISE-IMAGELISTPULLJOB-002': {
    pass: imageListPullJob('  images:\n    - nginx:1.25\n    - redis:7.2'),
    fail: imageListPullJob('  images:\n    - nginx:1.25\n    - redis:7.2\n    - nginx:1.25'),
    pointer: '/spec/images/2',
    line: 9,
    message: /"nginx:1.25" is listed again \(first at \/spec\/images\/0\)/,
  },
  'KRUISE-IMAGELISTPULLJOB-003': {
    pass: imageListPullJob('  images:\n    - nginx:1.25\n    - registry.example.com:5000/team/app@sha256:' + 'a'.repeat(64)),
    fail: imageListPullJob('  images:\n    - nginx:1.25\n    - nginx::1.25'),
    pointer: '/spec/images/1',
    line: 8,
    message: /not a valid image reference/,
  },
  'KRUISE-IMAGELISTPULLJOB-004': {
    pass: imageListPullJob(`  images: [${Array.from({ length: 255 }, (_, i) => `app${i}:1`).join(', ')}]`),
    fail: imageListPullJob(`  images: [${Array.from({ length: 256 }, (_, i) => `app${i}:1`).join(', ')}]`),
    pointer: '/spec/images/255',
    line: 6,
    message: /256 images; at most 255/,
  },
  'KRUISE-IMAGELISTPULLJOB-005': {
    pass: imageListPullJob('  images: [nginx:1.25]\n  selector: {names: [node-1]}'),
    fail: imageListPullJob('  images: [nginx:1.25]\n  selector: {names: [node-1]}\n  podSelector: {matchLabels: {app: web}}'),
    pointer: '/spec/podSelector',
    line: 8,
    message: /mutually exclusive/,
  },
  'KRUISE-IMAGELISTPULLJOB-006': {
    pass: imageListPullJob('  images: [nginx:1.25]\n  parallelism: 4'),
    fail: imageListPullJob('  images: [nginx:1.25]\n  parallelism: "50%"'),
    pointer: '/spec/parallelism',
    line: 7,
    message: /is a percentage/,
  },
  'KRUISE-IMAGELISTPULLJOB-007': {
    pass: imageListPullJob('  images: [nginx:1.25]\n  completionPolicy: {type: Always, ttlSecondsAfterFinished: 300}'),
    fail: imageListPullJob('  images: [nginx:1.25]\n  completionPolicy:\n    type: Never\n    ttlSecondsAfterFinished: 300'),
    pointer: '/spec/completionPolicy/ttlSecondsAfterFinished',
    line: 9,
    message: /completionPolicy.type is Never/,
  },
  'KRUISE-IMAGELISTPULLJOB-008': {
    pass: imageListPullJob(
      '  images: [nginx:1.25]\n  pullPolicy: {timeoutSeconds: 60}\n  completionPolicy: {type: Always, activeDeadlineSeconds: 120}',
    ),
    fail: imageListPullJob('  images: [nginx:1.25]\n  completionPolicy:\n    type: Always\n    activeDeadlineSeconds: 120'),
    pointer: '/spec/completionPolicy/activeDeadlineSeconds',
    line: 9,
    message: /shorter than pullPolicy.timeoutSeconds 600 \(the default\)/,
  },
  'KRUISE-PREPULL-001': {
    pass: imagePullJob('  image: nginx:1.27\n  podSelector: {matchLabels: {app: web}}'),
    fail: `
apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata:
  name: web-pre-pull-0123456789
  namespace: default
  annotations: {kruise.cdk8s.io/pre-pull-for: Deployment.apps/web}
spec:
  image: nginx:1.27
  podSelector: {matchLabels: {app: web}}
`,
    pointer: '/spec/image',
    line: 9,
    message: /pulls "nginx:1.27" onto the nodes running Deployment.apps\/web's pods before the app is applied/,
  },
  'KRUISE-PREPULL-002': {
    pass: webDeployment.replace(
      'namespace: default}',
      'namespace: default, annotations: {kruise.cdk8s.io/pre-pull-changed-images: "true"}}',
    ),
    fail: `
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: default, annotations: {kruise.cdk8s.io/pre-pull-changed-images: "true"}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: "migrate:2"}]
`,
    pointer: '/metadata/annotations/kruise.cdk8s.io~1pre-pull-changed-images',
    line: 4,
    message: /Job.batch\/migrate opts into pre-pull but has neither spec.selector nor pod template labels/,
  },
  'KRUISE-CLONESET-001': {
    pass: cloneSet('  lifecycle:\n    preNormal: {finalizersHandler: [example.io/unready-blocker]}'),
    fail: cloneSet('  lifecycle:\n    preDelete:\n      markPodNotReady: true'),
    pointer: '/spec/lifecycle/preDelete',
    line: 13,
    message: /neither finalizersHandler nor labelsHandler/,
  },
  'KRUISE-CLONESET-002': {
    pass: cloneSet('  lifecycle:\n    preDelete: {markPodNotReady: true, labelsHandler: {example.io/block: "true"}}'),
    fail: cloneSet('  lifecycle:\n    preNormal:\n      labelsHandler: {example.io/block-unready: "true"}\n      markPodNotReady: true'),
    pointer: '/spec/lifecycle/preNormal/markPodNotReady',
    line: 15,
    message: /no effect on preNormal/,
  },
  'KRUISE-CLONESET-003': {
    pass: cloneSet(
      '  lifecycle:\n    preNormal: {finalizersHandler: [example.io/unready-blocker], labelsHandler: {example.io/block-unready: "true"}}',
    ),
    fail: cloneSet('  lifecycle:\n    preNormal:\n      finalizersHandler:\n        - Example.IO/unready blocker'),
    pointer: '/spec/lifecycle/preNormal/finalizersHandler/0',
    line: 15,
    message: /not a valid qualified name/,
  },
  'KRUISE-INPLACE-001': {
    previous: cloneSet('  updateStrategy: {type: InPlaceOnly}'),
    pass: cloneSet('  updateStrategy: {type: InPlaceOnly}')
      .replace('nginx:1.25', 'nginx:1.27')
      .replace('{app: web}}\n    spec', '{app: web, tier: front}}\n    spec'),
    fail: cloneSet('  updateStrategy: {type: InPlaceOnly}').replace(
      'image: "nginx:1.25"}',
      'image: "nginx:1.27", args: [-g, daemon off;]}',
    ),
    pointer: '/spec/template/spec/containers/0/args',
    line: 11,
    message: /changed at \/spec\/template\/spec\/containers\/0\/args since the previous output/,
  },
  'KRUISE-CLONESET-004': {
    pass: preDownloadCloneSet(
      '{apps.kruise.io/image-predownload-parallelism: "2", apps.kruise.io/image-predownload-timeout-seconds: "90", apps.kruise.io/image-predownload-min-updated-ready-pods: "20%"}',
    ),
    fail: preDownloadCloneSet(
      '\n    apps.kruise.io/image-predownload-parallelism: "2"\n    apps.kruise.io/image-predownload-timeout-seconds: 1m',
    ),
    pointer: '/metadata/annotations/apps.kruise.io~1image-predownload-timeout-seconds',
    line: 8,
    message: /is "1m", not a positive integer \(seconds per pull\): the controller uses 300 instead/,
  },
  'KRUISE-CRR-001': {
    pass: 'apiVersion: apps.kruise.io/v1alpha1\nkind: ContainerRecreateRequest\nmetadata: {name: c, namespace: d}\nspec:\n  podName: web-0\n  containers: [{name: app}]\n',
    fail: 'apiVersion: apps.kruise.io/v1alpha1\nkind: ContainerRecreateRequest\nmetadata: {name: c, namespace: d}\nspec:\n  podName: web-0\n  containers: []\n',
    pointer: '/spec/containers',
    line: 6,
    message: /spec.containers is missing or empty/,
  },
  // The cases are read from case.yaml (not under ops/): a request there sits in a synced tree.
  'KRUISE-CRR-002': {
    pass: 'apiVersion: v1\nkind: Pod\nmetadata: {name: web-0, namespace: d}\nspec:\n  containers: [{name: app, image: busybox}]\n',
    fail: 'apiVersion: apps.kruise.io/v1alpha1\nkind: ContainerRecreateRequest\nmetadata: {name: c, namespace: d}\nspec:\n  podName: web-0\n  containers: [{name: app}]\n',
    pointer: '',
    line: 1,
    message: /sits in a manifest tree a GitOps sync applies/,
  },
  'KRUISE-PROTECT-001': {
    pass: labelled('v1', 'Namespace', 'Cascading') + '---\n' + labelled('v1', 'Service', 'Always'),
    fail: labelled('v1', 'Namespace', 'Cascading') + '---\n' + labelled('v1', 'Service', 'Cascading'),
    pointer: '/metadata/labels/policy.kruise.io~1delete-protection',
    line: 11,
    message: /delete-protection=Cascading is not honoured on a Service \(it takes only Always\)/,
  },
  'KRUISE-PROTECT-002': {
    pass: labelled('apps/v1', 'Deployment', 'Always'),
    fail: labelled('v1', 'ConfigMap', 'Always'),
    pointer: '/metadata/labels/policy.kruise.io~1delete-protection',
    line: 5,
    message: /on a ConfigMap protects nothing: no runtime checks deletions of this kind/,
  },
  'KRUISE-PROTECT-003': {
    pass: crd('example.com', 'widgets', 'Always'),
    fail: crd('example.com', 'widgets', 'Cascading'),
    pointer: '/metadata/labels/policy.kruise.io~1delete-protection',
    line: 5,
    message: /the bundled runtime may not list example.com\/widgets to count its resources/,
  },
  'KRUISE-GATE-001': {
    pass: install('KruiseDaemon=true,SidecarTerminator=true') + '---' + job(`${main}\n${killSidecar()}`),
    fail: install('KruiseDaemon=true,SidecarTerminator=false') + '---' + job(`${main}\n${killSidecar()}`),
    pointer: '/spec/template/spec/containers/1/env/0',
    line: 28,
    message: /needs feature gate SidecarTerminator.*it sets SidecarTerminator=false/,
  },
  // AdvancedCronJob is carried out by upstream only (the feature table); the finding follows the table and points at
  // the whole object, since it is the kind itself that the bundled runtime lacks.
  'KRUISE-RUNTIME-001': {
    // A HotUpgrade SidecarSet is carried out by the bundled runtime too: no finding.
    pass: bundledManager() + '---\n' + advancedStatefulSet + '---' + sidecarSet('hot', hotUpgradeSpec('HotUpgrade')),
    fail: bundledManager() + '---\n' + advancedCronJobYaml,
    pointer: '',
    line: 10,
    message: /^uses AdvancedCronJob, which this version of the bundled runtime does not carry out$/,
  },
  'KRUISE-IMAGE-002': {
    pass: managerRunning('registry.example/platform/cdk8s-kruise:0.1.0'),
    fail: managerRunning('ghcr.io/cdk8s-kruise/cdk8s-kruise:0.1.0'),
    pointer: '/spec/template/spec/containers/0/image',
    line: 11,
    message: /runtime image ghcr\.io\/cdk8s-kruise\/cdk8s-kruise:0\.1\.0 is the default/,
  },
  'KRUISE-RUNTIME-002': {
    pass: bundledManager(),
    fail: bundledManager('{kruise.cdk8s.io/ignored-feature-gates: "ResourceDistributionGate=true"}'),
    pointer: '/metadata/annotations/kruise.cdk8s.io~1ignored-feature-gates',
    line: 7,
    message: /ResourceDistributionGate=true are not known to the bundled runtime/,
  },
  'KRUISE-PODPROBEMARKER-001': {
    pass: podProbeMarker('{matchLabels: {app: web}}', 'main'),
    fail: podProbeMarker('{}', 'main'),
    pointer: '/spec/selector',
    line: 6,
    message: /selector is missing or empty/,
  },
  'KRUISE-PUB-001': {
    pass: budget('  selector: {matchLabels: {app: web}}\n  maxUnavailable: 25%\n'),
    fail: budget('  selector: {matchLabels: {app: web}}\n  maxUnavailable: 150%\n'),
    pointer: '/spec/maxUnavailable',
    line: 7,
    message: /maxUnavailable: 150% is above 100%/,
  },
  'KRUISE-PUB-002': {
    pass: webDeployment + '---' + budget('  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minAvailable: 1\n'),
    fail: webDeployment + '---' + budget('  targetRef: {apiVersion: apps/v1, kind: Deployment, name: webb}\n  minAvailable: 1\n'),
    pointer: '/spec/targetRef',
    line: 16,
    message: /targetRef "Deployment\/webb" is none of the 1 workload\(s\) in namespace "default"/,
  },
  'KRUISE-PODPROBEMARKER-002': {
    pass: webDeployment + '---' + podProbeMarker('{matchLabels: {app: web}}', 'main'),
    fail: webDeployment + '---' + podProbeMarker('{matchLabels: {app: webb}}', 'main'),
    pointer: '/spec/selector',
    line: 16,
    message: /matches none of the 1 pod template\(s\) in namespace "default"/,
  },
  'KRUISE-PODPROBEMARKER-003': {
    pass: webDeployment + '---' + podProbeMarker('{matchLabels: {app: web}}', 'main'),
    fail: webDeployment + '---' + podProbeMarker('{matchLabels: {app: web}}', 'mian'),
    pointer: '/spec/probes/0/containerName',
    line: 19,
    message: /targets container "mian", which Deployment web \(selected\) does not have; its containers: main/,
  },
};

describe('policy rules', () => {
  it('every rule has an id, a severity, a title, a one-paragraph doc and test cases', () => {
    const ids = RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of RULES) {
      expect(r.id).toMatch(/^KRUISE-[A-Z]+-\d{3}$/);
      expect(['error', 'warning', 'info']).toContain(r.severity);
      expect(r.doc.length).toBeGreaterThan(80);
      expect(r.doc).not.toContain('\n');
      expect(CASES[r.id], `test cases for ${r.id}`).toBeDefined();
    }
    expect(Object.keys(CASES).sort()).toEqual([...ids].sort());
  });

  it('a did-you-mean hint is one question, without a full stop after it', () => {
    const [f] = run('KRUISE-SCHEMA-001', cloneSet('  updateStrategy: {type: inplaceifpossible}'));
    expect(f?.hint).toBe('Did you mean "InPlaceIfPossible"?');
  });

  it('the lifecycle hook rules read Advanced StatefulSet and Advanced DaemonSet hooks as CloneSet ones', () => {
    const workload = (kind: string, lifecycle: string) => `
apiVersion: apps.kruise.io/v1beta1
kind: ${kind}
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: "example.io/agent:1"}]
  lifecycle:
${lifecycle}`;
    for (const kind of ['StatefulSet', 'DaemonSet']) {
      const unhooked = run('KRUISE-CLONESET-001', workload(kind, '    preDelete: {markPodNotReady: true}'));
      expect(unhooked.map((f) => [f.jsonPointer, f.message])).toEqual([
        ['/spec/lifecycle/preDelete', 'lifecycle.preDelete has neither finalizersHandler nor labelsHandler, so it never holds a pod'],
      ]);
      expect(run('KRUISE-CLONESET-001', workload(kind, '    preDelete: {labelsHandler: {example.io/drain: "true"}}'))).toEqual([]);
      const badKey = run('KRUISE-CLONESET-003', workload(kind, '    preNormal: {finalizersHandler: ["Example.IO/not ready"]}'));
      expect(badKey.map((f) => f.jsonPointer)).toEqual(['/spec/lifecycle/preNormal/finalizersHandler/0']);
    }
  });

  it('KRUISE-INPLACE-001 reads an Advanced StatefulSet under podUpdatePolicy InPlaceOnly, a removed field at its parent, and nothing without a previous output', () => {
    const sts = (policy: string, container: string) => `
apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata: {name: db, namespace: data}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      readinessGates: [{conditionType: InPlaceUpdateReady}]
      containers: [${container}]
  updateStrategy: {type: RollingUpdate, rollingUpdate: {podUpdatePolicy: ${policy}}}
`;
    const before = sts('InPlaceOnly', '{name: db, image: "postgres:16", env: [{name: MODE, value: a}]}');
    const removed = sts('InPlaceOnly', '{name: db, image: "postgres:17"}');
    expect(run('KRUISE-INPLACE-001', removed, before).map((f) => [f.jsonPointer, f.message])).toEqual([
      [
        '/spec/template/spec/containers/0',
        'the pod template changed at /spec/template/spec/containers/0/env since the previous output, which no update in place carries out (InPlaceOnly changes images and pod metadata only)',
      ],
    ]);
    // The same change is fine where pods may be recreated, and with no previous output there is nothing to compare.
    expect(run('KRUISE-INPLACE-001', sts('InPlaceIfPossible', '{name: db, image: "postgres:17"}'), before)).toEqual([]);
    expect(run('KRUISE-INPLACE-001', removed)).toEqual([]);
    // An image change alone, at v1alpha1 this time: the same object across API versions.
    expect(
      run(
        'KRUISE-INPLACE-001',
        sts('InPlaceOnly', '{name: db, image: "postgres:17", env: [{name: MODE, value: a}]}').replace('v1beta1', 'v1alpha1'),
        before,
      ),
    ).toEqual([]);
  });

  for (const rule of RULES) {
    const c = CASES[rule.id];
    if (!c) continue;
    describe(rule.id, () => {
      it('accepts the passing manifest', () => {
        expect(run(rule.id, c.pass, c.previous)).toEqual([]);
      });
      it('reports the failing manifest with pointer, line, severity, message and hint', () => {
        const findings = run(rule.id, c.fail, c.previous);
        expect(findings.length).toBeGreaterThan(0);
        const f = findings[0]!;
        expect(f.severity).toBe(rule.severity);
        expect(f.jsonPointer).toBe(c.pointer);
        expect(f.message).toMatch(c.message);
        expect(f.hint.length).toBeGreaterThan(10);
        // One closing mark: a hint that is a question ("did you mean ...?") gets no full stop after it.
        expect(f.hint).not.toMatch(/[.?!]\.$/);
        expect(f.file).toBe('case.yaml');
        if (c.line) expect(f.line).toBe(c.line);
      });
    });
  }
});
