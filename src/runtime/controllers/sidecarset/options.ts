// Light on purpose: the CLI builds the controller's flags from this file without loading the controller.
import { DEFAULT_RUNTIME_NAMESPACE, RUNTIME_ENV } from '../../../contracts/index.js';
import { stringOption } from '../../core/options.js';

/** Where the SidecarSet ControllerRevisions live (upstream: the Kruise namespace). */
export const SIDECARSET_REVISION_NAMESPACE = stringOption(
  'sidecarSetRevisionNamespace',
  '--sidecarset-revision-namespace <ns>',
  'namespace of the SidecarSet ControllerRevisions (default: $POD_NAMESPACE, else kruise-system)',
  (env) => env[RUNTIME_ENV.podNamespace] ?? DEFAULT_RUNTIME_NAMESPACE,
);
