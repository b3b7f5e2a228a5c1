export * from './sidecar-strategy.js';
export * from './job-sidecar-termination.js';
export * from './container-exit-priority.js';
export * from './lifecycle-hook.js';
export * from './clone-set.js';
export * from './sidecar-set.js';
export * from './image-pull-job.js';
export * from './container-recreate-request.js';
