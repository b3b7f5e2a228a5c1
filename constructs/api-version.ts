import type { IConstruct } from 'constructs';
import { KRUISE_API_VERSION, KRUISE_GROUP } from '../src/contracts/groups.js';
import { KRUISE_KINDS, type KruiseKindName } from '../src/contracts/resources.js';

/** The versions of apps.kruise.io a construct can emit its object at. */
export enum KruiseApiVersion {
  /** `apps.kruise.io/v1alpha1`: every kind; what the constructs emit unless told otherwise. */
  V1ALPHA1 = 'apps.kruise.io/v1alpha1',
  /**
   * `apps.kruise.io/v1beta1`: the version upstream OpenKruise v1.9 stores ImagePullJob, ImageListPullJob,
   * BroadcastJob and SidecarSet at, and its typed clients write.
   */
  V1BETA1 = 'apps.kruise.io/v1beta1',
}

/** Context key the app-level choice travels under (set by {@link KruiseApiVersions.emitIn}). */
const CONTEXT_KEY = 'cdk8s-kruise:apiVersion';

/**
 * App-level (or chart-level) choice of the apps.kruise.io version the constructs emit, where each construct's own
 * `apiVersion` prop does not say: `KruiseApiVersions.emitIn(app, KruiseApiVersion.V1BETA1)` before the charts are
 * built. Kinds not served at that version (CloneSet, ...) keep v1alpha1.
 */
export class KruiseApiVersions {
  /** Emit the Kruise objects under `scope` at `version` where their kind is served at it. */
  public static emitIn(scope: IConstruct, version: KruiseApiVersion): void {
    if (!Object.values(KruiseApiVersion).includes(version)) {
      throw new Error(
        `[${scope.node.path || 'app'}] KruiseApiVersions.emitIn: ${JSON.stringify(version)} is not one of ${Object.values(KruiseApiVersion).join(', ')}.`,
      );
    }
    if (scope.node.children.length > 0) {
      throw new Error(
        `[${scope.node.path || 'app'}] KruiseApiVersions.emitIn: call it before adding constructs to this scope (context cannot be set once it has children).`,
      );
    }
    scope.node.setContext(CONTEXT_KEY, version);
  }

  private constructor() {}
}

/** The versions (`v1alpha1`, `v1beta1`) the CRD of `kind` serves. */
function servedVersions(kind: KruiseKindName): readonly string[] {
  const id = KRUISE_KINDS[kind];
  return [KRUISE_API_VERSION.slice(KRUISE_GROUP.length + 1), ...(id.alsoServed ?? [])];
}

/**
 * The apiVersion a construct of `kind` at `scope` emits: its own prop, else the app's or chart's choice where the kind
 * is served at it, else v1alpha1. A prop naming a version the kind is not served at is refused with the construct path.
 * @internal
 */
export function kruiseApiVersionOf(scope: IConstruct, kind: KruiseKindName, prop: KruiseApiVersion | undefined): string {
  const served = servedVersions(kind);
  const versionOf = (apiVersion: string) => apiVersion.slice(KRUISE_GROUP.length + 1);
  if (prop !== undefined) {
    if (!Object.values(KruiseApiVersion).includes(prop) || !served.includes(versionOf(prop))) {
      throw new Error(
        `[${scope.node.path}] apiVersion: ${JSON.stringify(prop)} is not a version ${kind} is served at; use one of ${served.map((v) => `${KRUISE_GROUP}/${v}`).join(', ')}.`,
      );
    }
    return prop;
  }
  const chosen: unknown = scope.node.tryGetContext(CONTEXT_KEY);
  if (typeof chosen === 'string' && served.includes(versionOf(chosen))) return chosen;
  return KRUISE_API_VERSION;
}
