import {
  ANNOTATION_CONTAINER_EXIT_PRIORITY,
  ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT,
  ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE,
  LABEL_NODE_TYPE,
  NODE_TYPE_VIRTUAL_KUBELET,
} from '../api/pod-contracts.js';

/** The pod-level contract names the pod rules look for, from the API model. */
export const SIDECAR_ENV = {
  whenJobExit: ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT,
  whenJobExitWithImage: ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE,
  ignoreExitCode: ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE,
} as const;
export const EXIT_PRIORITY_ANNOTATION = ANNOTATION_CONTAINER_EXIT_PRIORITY;
export const VIRTUAL_KUBELET_LABEL = { key: LABEL_NODE_TYPE, value: NODE_TYPE_VIRTUAL_KUBELET } as const;
export { parseExitPriority } from '../api/pod-contracts.js';
