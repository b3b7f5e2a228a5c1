import { AppFeature, BUNDLED_ADMISSION, FEATURES } from '../contracts/features.js';
import { kindWebhookPath, POD_MUTATING_PATH } from '../contracts/names.js';
import type { FeatureUse } from './app-features.js';
import type { ServedKind } from './spec.js';
import { describeRef } from './types.js';

/** The admission paths the bundled runtime serves for `kinds`, from the contract layer's declaration. */
export function bundledWebhookPaths(kinds: readonly ServedKind[]): { mutating: string[]; validating: string[] } {
  return {
    mutating: [
      ...(BUNDLED_ADMISSION.podWebhook ? [POD_MUTATING_PATH] : []),
      ...kinds.filter((k) => BUNDLED_ADMISSION.mutatingKinds.includes(k.kind)).map((k) => kindWebhookPath('mutate', k)),
    ],
    validating: kinds
      .filter((k) => !BUNDLED_ADMISSION.validatedByMutatingKinds.includes(k.kind))
      .map((k) => kindWebhookPath('validate', k)),
  };
}

/** Whether the bundled runtime answers pod CREATE admission requests. */
export function bundledServesPods(): boolean {
  return BUNDLED_ADMISSION.podWebhook;
}

/** The target runtime of an install, as the feature table names it. */
export type TargetRuntime = 'bundled' | 'upstream';

/** What an app's feature uses mean for one target: errors stop the synth, warnings are reported. */
export interface RuntimeSupport {
  readonly errors: string[];
  readonly warnings: string[];
}

/** Extra advice for features that have a compile-time alternative to a runtime. */
const ALTERNATIVES: Partial<Record<AppFeature, string>> = {
  [AppFeature.CONTAINER_EXIT_PRIORITY]:
    'Compile it to native sidecars instead (context cdk8s-kruise:kubernetesVersion >= 1.29), which the kubelet orders itself.',
};

/**
 * Features the bundled runtime refuses instead of leaving inert: emitting them would change how pods are
 * built or upgraded in a way the app relies on, so the synth stops rather than warn.
 */
const BUNDLED_REFUSED: ReadonlySet<AppFeature> = new Set([AppFeature.SIDECARSET_HOT_UPGRADE]);

function at(u: FeatureUse): string {
  return u.pointer ? ` at ${u.pointer}` : '';
}

/** One feature use the target runtime does not carry out: what is not carried out, and what to do instead. */
export interface UnsupportedUse {
  readonly use: FeatureUse;
  /** `uses <feature> at <pointer>, which <runtime> does not carry out` (without the resource). */
  readonly problem: string;
  /** Names only a runtime that carries the feature out, or says that none does. */
  readonly advice: string;
  /**
   * An error rather than a warning: upstream's webhooks refuse or ignore what it lacks, and the bundled runtime
   * refuses the features that would change how pods are built or upgraded (`BUNDLED_REFUSED`).
   */
  readonly refused: boolean;
}

/** The feature uses `target` does not carry out, with advice (one source for the construct, the rule and tests). */
export function unsupportedUses(uses: readonly FeatureUse[], target: TargetRuntime): UnsupportedUse[] {
  const out: UnsupportedUse[] = [];
  for (const u of uses) {
    const { carriedOutBy } = FEATURES[u.feature];
    if (carriedOutBy[target]) continue;
    const other: TargetRuntime = target === 'bundled' ? 'upstream' : 'bundled';
    const alternative = ALTERNATIVES[u.feature];
    const advice = carriedOutBy[other]
      ? other === 'upstream'
        ? 'Use target openkruise (upstream OpenKruise carries it out).'
        : `Use target bundled (the cdk8s-kruise runtime carries it out).${alternative ? ` ${alternative}` : ''}`
      : `No runtime carries it out yet, neither the bundled runtime nor upstream OpenKruise: the manifests are emitted, but nothing acts on them.${alternative ? ` ${alternative}` : ''}`;
    const refused = target === 'upstream' || BUNDLED_REFUSED.has(u.feature);
    const runtime = target === 'upstream' ? 'upstream OpenKruise' : refused ? 'the bundled runtime' : 'this version of the bundled runtime';
    out.push({ use: u, problem: `uses ${u.feature}${at(u)}, which ${runtime} does not carry out`, advice, refused });
  }
  return out;
}

/**
 * Which feature uses the target runtime does not carry out, with advice that names only a runtime that
 * does. A feature no runtime carries out says so. Under the bundled target such uses are warnings (the
 * manifests are valid, nothing acts on them); under the upstream target they are errors, because upstream's
 * webhooks refuse or ignore them.
 */
export function runtimeSupport(uses: readonly FeatureUse[], target: TargetRuntime): RuntimeSupport {
  const errors: string[] = [];
  const warnings: string[] = [];
  for (const x of unsupportedUses(uses, target))
    (x.refused ? errors : warnings).push(`${describeRef(x.use.resource)} ${x.problem}. ${x.advice}`);
  return { errors, warnings };
}
