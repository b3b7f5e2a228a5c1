import type { SidecarSet } from '../../../api/kinds/sidecarset.js';
import {
  parsePatchMetadataWhitelist,
  patchMetadataKeysRefused,
  type PatchMetadataWhitelist,
  type SidecarSetRevisionData,
} from '../../control/sidecarset-pod.js';
import {
  CONFIGMAPS,
  kindWebhookPath,
  CONTROLLER_REVISIONS,
  KRUISE_CONFIGURATION_CONFIGMAP,
  SIDECARSET_PATCH_METADATA_WHITELIST_KEY,
  LABEL_SIDECARSET_CUSTOM_VERSION,
  LABEL_SIDECARSET_NAME,
  KRUISE_GROUP,
  kruiseResource,
  NAMESPACES,
  SIDECARSETS,
} from '../../../contracts/index.js';
import { convertSidecarSet, SIDECARSET_V1BETA1 } from '../../../api/sidecarset-conversion.js';
import { isNotFound, type KubeClient } from '../../core/client.js';
import type { WebhookDefinition } from '../../core/controller.js';
import { rfc3339 } from '../../core/meta.js';
import { SIDECARSET_REVISION_NAMESPACE } from '../../control/sidecarset-options.js';
import { POD_MUTATOR_ORDER, VALIDATING_CHAIN_ORDER } from '../../control/admission-order.js';
import { podMutator } from '../../core/webhook/pod-mutator.js';
import type { KubeObject } from '../../core/types.js';
import { computeHashes, injectSidecarSets, type SidecarSetHashes } from './decision.js';
import { patchMetadataRefusal, resourcesPolicyRefusal, sidecarSetConflict } from './validation.js';

type Revision = { readonly name: string; readonly data: SidecarSetRevisionData };

/** Revisions are immutable: found ones are kept (bounded); misses are retried after a few seconds (and forgotten). */
const MAX_CACHED_REVISIONS = 512;
const MISS_TTL_MS = 5000;

/** Looks up the ControllerRevisions that `injectionStrategy.revision` pins, with a small cache. */
class PinnedRevisions {
  private readonly found = new Map<string, Revision>();
  private readonly missed = new Map<string, number>();

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
  ) {}

  private key(set: SidecarSet): string | undefined {
    const pin = set.spec.injectionStrategy?.revision;
    if (pin?.revisionName) return `${set.metadata.name}\0name\0${pin.revisionName}`;
    if (pin?.customVersion) return `${set.metadata.name}\0custom\0${pin.customVersion}`;
    return undefined;
  }

  /** Resolves the pins of `sets` (network only for pins not seen yet). */
  async resolve(sets: readonly SidecarSet[]): Promise<(set: SidecarSet) => Revision | undefined> {
    for (const set of sets) {
      const key = this.key(set);
      if (!key || this.found.has(key) || (this.missed.get(key) ?? 0) > Date.now()) continue;
      const revision = await this.fetch(set);
      if (revision) {
        if (this.found.size >= MAX_CACHED_REVISIONS) this.found.delete(this.found.keys().next().value!);
        this.found.set(key, revision);
        this.missed.delete(key);
      } else {
        // Expired misses go when there are many: pins of deleted SidecarSets must not accumulate.
        if (this.missed.size >= MAX_CACHED_REVISIONS) for (const [k, until] of this.missed) if (until <= Date.now()) this.missed.delete(k);
        this.missed.set(key, Date.now() + MISS_TTL_MS);
      }
    }
    return (set) => {
      const key = this.key(set);
      return key ? this.found.get(key) : undefined;
    };
  }

  private async fetch(set: SidecarSet): Promise<Revision | undefined> {
    const pin = set.spec.injectionStrategy!.revision!;
    const toRevision = (cr: KubeObject): Revision | undefined =>
      cr.metadata.labels?.[LABEL_SIDECARSET_NAME] === set.metadata.name
        ? { name: cr.metadata.name!, data: cr.data as SidecarSetRevisionData }
        : undefined;
    if (pin.revisionName) {
      try {
        return toRevision(await this.client.get<KubeObject>(CONTROLLER_REVISIONS, pin.revisionName, this.namespace));
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    }
    const list = await this.client.list<KubeObject>(CONTROLLER_REVISIONS, {
      namespace: this.namespace,
      labelSelector: `${LABEL_SIDECARSET_NAME}=${set.metadata.name},${LABEL_SIDECARSET_CUSTOM_VERSION}=${pin.customVersion}`,
    });
    // The newest revision of that custom version, as upstream picks it.
    const newest = [...list.items].sort((a, b) => Number(b.revision ?? 0) - Number(a.revision ?? 0))[0];
    return newest ? toRevision(newest) : undefined;
  }
}

/**
 * The patchPodMetadata whitelist from ConfigMap kruise-configuration in the runtime namespace, read fresh
 * for every admission that needs it: an admin typically creates or edits the whitelist right before the
 * SidecarSet that needs it (upstream reads it from a watched cache, so a second later it is seen), and a
 * reused read would refuse that set. Calls are coalesced without going stale: a caller joins the read that
 * starts after it arrived, so at most one GET runs and one waits, however many pods arrive meanwhile. A
 * failed read keeps the last value read; before any value, every patch is refused with the reason.
 */
export class WhitelistSource {
  private value: PatchMetadataWhitelist | undefined;
  private loaded = false;
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  constructor(private readonly read: () => Promise<{ data?: Record<string, string> } | undefined>) {}

  async get(): Promise<PatchMetadataWhitelist | undefined> {
    if (!this.running) {
      await this.start();
    } else {
      // The running read may have been sent before this call: wait for the next one.
      await (this.queued ??= this.running.then(() => {
        this.queued = undefined;
        return this.start();
      }));
    }
    return this.value;
  }

  private start(): Promise<void> {
    const p = this.load().finally(() => {
      if (this.running === p) this.running = undefined;
    });
    this.running = p;
    return p;
  }

  private async load(): Promise<void> {
    let cm: { data?: Record<string, string> } | undefined;
    try {
      cm = await this.read();
    } catch (err) {
      // Keep the last value; before any value, refuse every patch (fail closed) with the reason.
      if (!this.loaded) this.value = { error: `ConfigMap ${KRUISE_CONFIGURATION_CONFIGMAP} could not be read: ${(err as Error).message}` };
      return;
    }
    const text = cm?.data?.[SIDECARSET_PATCH_METADATA_WHITELIST_KEY];
    this.value = text === undefined ? undefined : parsePatchMetadataWhitelist(text);
    this.loaded = true;
  }
}

/** Reads ConfigMap kruise-configuration in `namespace`; undefined when it does not exist. */
function configurationReader(client: KubeClient, namespace: string): () => Promise<{ data?: Record<string, string> } | undefined> {
  return async () => {
    try {
      return await client.get<KubeObject & { data?: Record<string, string> }>(CONFIGMAPS, KRUISE_CONFIGURATION_CONFIGMAP, namespace);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
}

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
    let pins: PinnedRevisions | undefined;
    let whitelist: WhitelistSource | undefined;
    // The informer replaces a cached object on every change and never edits one, so a set's hashes can be
    // kept with the object (a pinned version is a fresh object per pod and is hashed each time).
    const hashMemo = new WeakMap<SidecarSet, SidecarSetHashes>();
    const hashes = (set: SidecarSet): SidecarSetHashes => {
      let h = hashMemo.get(set);
      if (!h) hashMemo.set(set, (h = computeHashes(set)));
      return h;
    };
    return [
      podMutator('sidecarsetinjection', POD_MUTATOR_ORDER.sidecarSetInjection, async (pod, req) => {
        const namespace = req.namespace ?? pod.metadata.namespace ?? 'default';
        const all = sets.list();
        const pinned = all.filter((s) => s.spec.injectionStrategy?.revision);
        // The whitelist is read only when a SidecarSet that could match patches metadata.
        const patching = all.some((s) => (s.spec.patchPodMetadata ?? []).length > 0);
        const list = patching
          ? await (whitelist ??= new WhitelistSource(configurationReader(ctx.client, ctx.options.get(SIDECARSET_REVISION_NAMESPACE)))).get()
          : undefined;
        const refusedBySet = new Map<SidecarSet, ReadonlySet<string>>();
        const keyAllowed = (set: SidecarSet, key: string): boolean => {
          let refused = refusedBySet.get(set);
          if (!refused) refusedBySet.set(set, (refused = new Set(patchMetadataKeysRefused(set, list, metadataDefaultsAllowed).refused)));
          return !refused.has(key);
        };
        const result = injectSidecarSets({
          pod,
          namespace,
          namespaceLabels: namespaces.get(namespace)?.metadata.labels,
          sidecarSets: all,
          now: rfc3339(),
          metadataKeyAllowed: keyAllowed,
          hashes,
          pinnedRevision:
            pinned.length > 0
              ? await (pins ??= new PinnedRevisions(ctx.client, ctx.options.get(SIDECARSET_REVISION_NAMESPACE))).resolve(pinned)
              : () => undefined,
        });
        if ('deny' in result) return { deny: result.deny };
        return { warnings: result.warnings };
      }),
    ];
  },
};

/**
 * SidecarSet checks that need the cluster, chained after the policy rules of `kruisevalidation` on the
 * SidecarSet validate path: resourcesPolicy, conflicts with existing SidecarSets, and the patchPodMetadata whitelist.
 */
export const sidecarSetValidationWebhook: WebhookDefinition = {
  name: 'sidecarsetvalidation',
  reads: [{ resource: SIDECARSETS, fields: ['metadata.annotations', 'metadata.labels', 'spec'] }],
  // The CRD's conversion webhook (v1alpha1 <-> v1beta1, the storage version).
  converters: [{ group: KRUISE_GROUP, kind: 'SidecarSet', convert: convertSidecarSet }],
  setup(ctx) {
    const sets = ctx.informers.for<SidecarSet & KubeObject>(SIDECARSETS);
    const metadataDefaultsAllowed = ctx.featureGates.get('SidecarSetPatchPodMetadataDefaultsAllowed') === true;
    let whitelist: WhitelistSource | undefined;
    return [
      {
        name: 'vsidecarset',
        // The path keeps the model version's name; the configuration sends both served versions to it.
        path: kindWebhookPath('validate', kruiseResource('SidecarSet')),
        type: 'validating',
        order: VALIDATING_CHAIN_ORDER.kindChecks,
        async handle(req) {
          if ((req.operation !== 'CREATE' && req.operation !== 'UPDATE') || !req.object) return { allowed: true };
          // Compared with the cached sets at the version the runtime reads (a v1alpha1 namespace is a selector there).
          const converted = convertSidecarSet(req.object, SIDECARSET_V1BETA1);
          if (!converted.ok) return { allowed: false, code: 400, reason: 'Invalid', message: converted.message };
          const set = converted.object as unknown as SidecarSet;
          if (!set.spec || !set.metadata) return { allowed: true };
          const badPolicy = resourcesPolicyRefusal(set);
          if (badPolicy) return { allowed: false, code: 422, reason: 'Invalid', message: badPolicy };
          const conflict = sidecarSetConflict(set, sets.list());
          if (conflict) return { allowed: false, code: 422, reason: 'Invalid', message: conflict };
          if ((set.spec.patchPodMetadata ?? []).length > 0) {
            const list = await (whitelist ??= new WhitelistSource(
              configurationReader(ctx.client, ctx.options.get(SIDECARSET_REVISION_NAMESPACE)),
            )).get();
            const refusal = patchMetadataRefusal(set, list, metadataDefaultsAllowed);
            if (refusal) return { allowed: false, code: 422, reason: 'Invalid', message: refusal };
          }
          return { allowed: true };
        },
      },
    ];
  },
};
