/**
 * Where the SidecarSet ControllerRevisions live, which the SidecarSet controller writes and the pod webhook reads
 * (pinned revisions, the patch-metadata whitelist ConfigMap): one option both units read in the manager.
 */
import { DEFAULT_RUNTIME_NAMESPACE, RUNTIME_ENV } from '../../contracts/names.js';
import { stringOption } from '../core/options.js';

/** Upstream keeps them in the Kruise namespace; so do we by default (the manager's own namespace). */
export const SIDECARSET_REVISION_NAMESPACE = stringOption(
  'sidecarSetRevisionNamespace',
  '--sidecarset-revision-namespace <ns>',
  'namespace of the SidecarSet ControllerRevisions (default: $POD_NAMESPACE, else kruise-system)',
  (env) => env[RUNTIME_ENV.podNamespace] ?? DEFAULT_RUNTIME_NAMESPACE,
);
