import { judgeUse, outermost } from '../api/feature-uses.js';
import { BUNDLED_ADMISSION } from '../contracts/features.js';
import { DELETION_PROTECTION_PATH } from '../contracts/deletion-protection.js';
import { kindWebhookPath, POD_MUTATING_PATH, POD_VALIDATING_PATH } from '../contracts/names.js';
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
    validating: [
      ...kinds.filter((k) => !BUNDLED_ADMISSION.validatedByMutatingKinds.includes(k.kind)).map((k) => kindWebhookPath('validate', k)),
      // Registered only while gate ResourcesDeletionProtection is on (webhooks.ts), for every protected kind.
      DELETION_PROTECTION_PATH,
      // Registered only while gate PodUnavailableBudgetDeleteGate is on and the app has a budget (webhooks.ts).
      POD_VALIDATING_PATH,
    ],
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

/** One feature use the target runtime does not carry out: what is not carried out, and what to do instead. */
export interface UnsupportedUse {
  readonly use: FeatureUse;
  /** `uses <feature> at <pointer>, which <runtime> does not carry out` (without the resource). */
  readonly problem: string;
  /** Names only a runtime that carries the feature out, or says that none does. */
  readonly advice: string;
  /**
   * An error rather than a warning: upstream's webhooks refuse or ignore what only the bundled runtime carries out,
   * and the bundled runtime refuses the features that would change how pods are built or upgraded. A feature no
   * runtime carries out is a warning under either target.
   */
  readonly refused: boolean;
  /** Neither runtime carries the feature out: reported whatever the target. */
  readonly noRuntime: boolean;
}

/** The feature uses `target` does not carry out, with advice (one source for the construct, the rule and tests). */
export function unsupportedUses(uses: readonly FeatureUse[], target: TargetRuntime): UnsupportedUse[] {
  // Judged per object, so that a use inside another the target does not carry out is said once, by the outer one.
  const byResource = new Map<FeatureUse['resource'], Array<UnsupportedUse & { readonly pointer: string }>>();
  for (const u of uses) {
    const j = judgeUse(u, target, u.resource);
    if (!j) continue;
    let list = byResource.get(u.resource);
    if (!list) byResource.set(u.resource, (list = []));
    list.push({ use: u, pointer: u.pointer, problem: j.problem, advice: j.advice, refused: j.refused, noRuntime: j.noRuntime });
  }
  const out: UnsupportedUse[] = [];
  for (const list of byResource.values()) {
    for (const { pointer: _pointer, ...x } of outermost(list)) out.push(x);
  }
  return out;
}

/**
 * Which feature uses the target runtime does not carry out, with advice that names only a runtime that
 * does. A feature no runtime carries out says so, as a warning under either target. Under the bundled target
 * the others are warnings too (the manifests are valid, nothing acts on them), except the refused ones; under
 * the upstream target they are errors, because upstream's webhooks refuse or ignore them.
 */
export function runtimeSupport(uses: readonly FeatureUse[], target: TargetRuntime): RuntimeSupport {
  const errors: string[] = [];
  const warnings: string[] = [];
  for (const x of unsupportedUses(uses, target))
    (x.refused ? errors : warnings).push(`${describeRef(x.use.resource)} ${x.problem}. ${x.advice}`);
  return { errors, warnings };
}
