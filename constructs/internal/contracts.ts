// Pod-level contract names. Re-exported from the API model once src/api/pod-contracts.ts exists,
// so constructs never spell these strings themselves.
export const ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT = 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT';
export const ENV_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE = 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE';
export const ENV_TERMINATE_SIDECAR_IGNORE_EXIT_CODE = 'KRUISE_TERMINATE_SIDECAR_IGNORE_EXIT_CODE';
export const ANNOTATION_CONTAINER_EXIT_PRIORITY = 'kruise.io/container-exit-priority';
