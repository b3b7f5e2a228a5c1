import type { FeatureGateName } from '../../contracts/features.js';
import type { ControllerOption } from './options.js';

/**
 * What a registered controller or webhook does, as the CLI describes it (`cdk8s-kruise controller --help`,
 * `daemon --help`). The lists live beside the registries (`manager/parts.ts`, `daemon/parts.ts`) so the CLI
 * describes a process without loading its controllers; test/unit/cli/commands/runtime-help.test.ts holds each list to
 * its registry.
 */
export interface RuntimePart {
  /** The registered name. */
  readonly name: string;
  /** The feature gate it runs under, as registered. */
  readonly gate?: FeatureGateName;
  /** What it does, for the command's help. */
  readonly does: string;
}

/** A controller also names its subject in a few words, for the command's one-line description. */
export interface RuntimeControllerPart extends RuntimePart {
  readonly topic: string;
  /**
   * The options the controller reads with `ctx.options.get` (declared here once: the CLI builds the process's flags
   * from them, and the process parses exactly these; reading another one throws).
   */
  readonly options?: readonly ControllerOption<unknown>[];
}
