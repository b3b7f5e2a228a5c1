/**
 * The storage driver's half of growing a claim, for the harness's host-path volumes.
 *
 * Growing a claim is split between the API server and the storage driver: a user (or a controller, such as an
 * Advanced StatefulSet resizing claims on rollout) raises `spec.resources.requests.storage`; the API server admits it
 * only for a StorageClass with `allowVolumeExpansion: true`; then the driver grows the volume and reports the new
 * size in the PersistentVolume's capacity and the claim's `status.capacity`. kube-controller-manager's in-tree
 * host-path plugin has no such driver ("waiting for an external controller to expand this PVC"), so the harness
 * plays that external resizer for its own host-path volumes. A host-path directory has no size of its own, so
 * growing it is recording the size, which is also all a CSI host-path driver does.
 */
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, type V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { quantityValue } from '../../src/contracts/quantity.js';

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** How often the claims are looked at. */
const PERIOD_MS = 500;

export class HostPathVolumeResizer {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly core: CoreV1Api;
  /** Claims grown so far (`namespace/name → size`), for the harness's log. */
  readonly grown: string[] = [];

  private constructor(kubeconfigPath: string) {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigPath);
    this.core = kc.makeApiClient(CoreV1Api);
  }

  static start(kubeconfigPath: string): HostPathVolumeResizer {
    const r = new HostPathVolumeResizer(kubeconfigPath);
    r.loop = r.run();
    return r;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        const claims = await this.core.listPersistentVolumeClaimForAllNamespaces();
        for (const claim of claims.items) if (!this.stopped) await this.grow(claim);
      } catch {
        // The API server restarting (a fault test) or stopping at the end: the next round tries again.
      }
      await new Promise((resolve) => setTimeout(resolve, PERIOD_MS));
    }
  }

  /** Grows one bound claim whose request exceeds its capacity, when its volume is one of the harness's host paths. */
  private async grow(claim: V1PersistentVolumeClaim): Promise<void> {
    const asked = claim.spec?.resources?.requests?.storage;
    const capacity = claim.status?.capacity?.storage;
    const volume = claim.spec?.volumeName;
    if (claim.status?.phase !== 'Bound' || !volume || asked === undefined || capacity === undefined) return;
    const want = quantityValue(String(asked));
    const have = quantityValue(String(capacity));
    if (want === undefined || have === undefined || want <= have) return;
    const pv = await this.core.readPersistentVolume({ name: volume });
    if (!pv.spec?.hostPath) return;
    await this.core.patchPersistentVolume({ name: volume, body: { spec: { capacity: { storage: asked } } } }, mergePatch);
    await this.core.patchNamespacedPersistentVolumeClaimStatus(
      { name: claim.metadata!.name!, namespace: claim.metadata!.namespace!, body: { status: { capacity: { storage: asked } } } },
      mergePatch,
    );
    this.grown.push(`${claim.metadata!.namespace}/${claim.metadata!.name} → ${asked}`);
  }
}
