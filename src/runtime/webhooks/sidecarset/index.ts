import type { SidecarSet } from '../../../api/kinds/sidecarset.js';
import { NAMESPACES, SIDECARSETS } from '../../../contracts/index.js';
import type { WebhookDefinition } from '../../core/controller.js';
import { POD_MUTATOR_ORDER } from '../../core/webhook/compose.js';
import { podMutator } from '../../core/webhook/pod-mutator.js';
import type { KubeObject } from '../../core/types.js';
import { injectSidecarSets } from './decision.js';

/** Pod webhook step: SidecarSet injection (first, so later steps see the injected containers). */
export const sidecarSetInjectionWebhook: WebhookDefinition = {
  name: 'sidecarsetinjection',
  featureGate: 'PodWebhook',
  reads: [
    // The whole spec is injected; annotations carry the native-sidecar opt-in.
    { resource: SIDECARSETS, fields: ['metadata.annotations', 'metadata.labels', 'spec'] },
    // namespaceSelector matches the pod's namespace labels.
    { resource: NAMESPACES, fields: ['metadata.labels'] },
  ],
  setup(ctx) {
    const sets = ctx.informers.for<SidecarSet & KubeObject>(SIDECARSETS);
    const namespaces = ctx.informers.for<KubeObject>(NAMESPACES);
    // Without a kruise-configuration whitelist, upstream lets patchPodMetadata through only under this gate.
    const metadataDefaultsAllowed = ctx.featureGates.get('SidecarSetPatchPodMetadataDefaultsAllowed') === true;
    return [
      podMutator('sidecarsetinjection', POD_MUTATOR_ORDER.sidecarSetInjection, (pod, req) => {
        const namespace = req.namespace ?? pod.metadata.namespace ?? 'default';
        const result = injectSidecarSets({
          pod,
          namespace,
          namespaceLabels: namespaces.get(namespace)?.metadata.labels,
          sidecarSets: sets.list(),
          now: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
          metadataKeyAllowed: () => metadataDefaultsAllowed,
        });
        if ('deny' in result) return { deny: result.deny };
        return { warnings: result.warnings };
      }),
    ];
  },
};
