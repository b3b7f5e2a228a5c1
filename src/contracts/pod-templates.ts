import { KRUISE_GROUP } from './groups.js';

/**
 * Where each pod-template owner keeps its pod template(s), by API group and kind (`''` is the core group). Kinds not
 * listed carry no pod: the pod-level rules skip them, and pre-pull does not treat them as workloads.
 */
export const POD_TEMPLATE_PATHS: Readonly<Record<string, Readonly<Record<string, readonly (readonly string[])[]>>>> = {
  '': { Pod: [[]], ReplicationController: [['spec', 'template']], PodTemplate: [['template']] },
  apps: {
    Deployment: [['spec', 'template']],
    StatefulSet: [['spec', 'template']],
    DaemonSet: [['spec', 'template']],
    ReplicaSet: [['spec', 'template']],
  },
  batch: { Job: [['spec', 'template']], CronJob: [['spec', 'jobTemplate', 'spec', 'template']] },
  [KRUISE_GROUP]: {
    CloneSet: [['spec', 'template']],
    StatefulSet: [['spec', 'template']],
    DaemonSet: [['spec', 'template']],
    BroadcastJob: [['spec', 'template']],
    AdvancedCronJob: [
      ['spec', 'template', 'jobTemplate', 'spec', 'template'],
      ['spec', 'template', 'broadcastJobTemplate', 'spec', 'template'],
    ],
  },
};
