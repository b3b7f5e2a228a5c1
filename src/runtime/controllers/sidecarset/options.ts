// Re-exported from the core: the pod webhook (pinned revisions) reads it too, and webhooks may not import controllers.
export { SIDECARSET_REVISION_NAMESPACE } from '../../core/options.js';
