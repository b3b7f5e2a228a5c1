import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { failing, isBlank, parseInputs, summarize, validateInputs, type TextInput } from './engine.js';
import {
  checkRepoURL,
  checkTargetRevision,
  layout,
  outputFileOf,
  phaseOf,
  type OutputFile,
  OUTPUT_MARKER,
  OUTPUT_MARKER_CONTENT,
  parseGitOps,
  synthDocs,
  type GitOpsTarget,
} from './output-layout.js';
import type { Finding } from './types.js';
import { prePullWorkloadOf } from './pre-pull.js';

/**
 * The part of cdk8s-cli's `ValidationContext` (cdk8s-cli/plugins) the plugin uses, declared structurally so the
 * published types do not depend on cdk8s-cli.
 */
export interface Cdk8sValidationContext {
  readonly manifests: readonly string[];
  readonly logger: { log(message: string): void };
  readonly report: {
    addViolation(violation: {
      ruleName: string;
      recommendation: string;
      fix: string;
      violatingResources: Array<{ resourceName: string; locations: string[]; manifestPath: string }>;
    }): void;
    submit(status: 'success' | 'failure', metadata?: Record<string, string>): void;
  };
}

/** Properties accepted from `cdk8s.yaml` (`validations[].properties`). */
export interface KruiseValidationProps {
  /** Run only these rule ids. */
  readonly rules?: readonly string[];
  /** Do not run these rule ids. */
  readonly skipRules?: readonly string[];
  /** Fail the synth on warnings too. */
  readonly warningsAsErrors?: boolean;
  /**
   * After a passing check, rewrite the output directory into the tree `cdk8s-kruise synth --gitops <layout>` writes
   * (file names from chart ids, ops/, kustomization.yaml, the marker), so `cdk8s synth` and `cdk8s-kruise synth`
   * commit the same files. Unset: cdk8s's own file layout is left as it is.
   */
  readonly layout?: GitOpsTarget;
  /** With `layout`: annotate Argo CD sync waves (as `cdk8s-kruise synth --sync-waves`). */
  readonly syncWaves?: boolean;
  /** With `layout` flux or argocd: the output directory's path in the Git repository (default: relative to the working directory). */
  readonly repoPath?: string;
  /** With `layout: argocd`: the Application's `source.repoURL` (`cdk8s-kruise synth` reads it from here too). */
  readonly repoURL?: string;
  /** With `layout: argocd`: the Application's `source.targetRevision` (default HEAD). */
  readonly targetRevision?: string;
}

/**
 * cdk8s validation plugin running the cdk8s-kruise rules on `cdk8s synth`. Register it in cdk8s.yaml:
 *
 * ```yaml
 * validations:
 *   - package: ./lib/cdk8s-plugin.cjs   # or node_modules/cdk8s-kruise/lib/cdk8s-plugin.cjs
 *     version: 0.1.0
 *     class: KruiseValidation
 *     properties: { skipRules: [KRUISE-SCHEMA-003] }
 * ```
 *
 * The cdk8s CLI loads plugins with require(), so this module is bundled to CommonJS (lib/cdk8s-plugin.cjs, which
 * requires the library's CommonJS core) by the package build, which `npm ci` runs through the prepare script;
 * `npm run build:plugin` rebuilds only the library entries and the plugin.
 */
export class KruiseValidation {
  private readonly props: KruiseValidationProps;

  constructor(props: KruiseValidationProps = {}) {
    this.props = props ?? {};
    // A mistyped layout fails when cdk8s loads the plugin, before anything is synthesized.
    if (this.props.layout !== undefined) parseGitOps(String(this.props.layout));
    if (this.props.repoURL !== undefined) checkRepoURL(this.props.repoURL);
    if (this.props.targetRevision !== undefined) checkTargetRevision(this.props.targetRevision);
  }

  async validate(context: Cdk8sValidationContext): Promise<void> {
    let submitted = false;
    try {
      // cdk8s writes an empty file for a chart without objects: its own output, not an empty input to warn about.
      const inputs: TextInput[] = context.manifests
        .map((file) => ({ file, content: readFileSync(file) }))
        .filter((i) => !isBlank(i.content));
      const result = validateInputs(inputs, { rules: this.props.rules, skipRules: this.props.skipRules });
      const s = summarize(result.findings);
      const fail = failing(result.findings, this.props.warningsAsErrors);
      // A passing check with a layout renames cdk8s's files: the report names the file each object ends up in.
      const planned = !fail && this.props.layout ? planLayout(context.manifests, inputs, this.props) : undefined;
      for (const f of result.findings) context.report.addViolation(violation(f, planned?.fileOf(f)));
      context.logger.log(`cdk8s-kruise: ${result.documents} object(s) checked: ${s.errors} error(s), ${s.warnings} warning(s)`);
      context.report.submit(fail ? 'failure' : 'success', {
        objects: String(result.documents),
        errors: String(s.errors),
        warnings: String(s.warnings),
        notes: String(s.infos),
      });
      submitted = true;
      removeConstructMetadata(context.manifests);
      if (planned) relayout(context.manifests, planned);
      // cdk8s has replaced the previous output before a plugin runs, so there is nothing to compare with.
      if (planned?.prePull)
        context.logger.log(
          'cdk8s-kruise: workloads opt into pre-pull (ImagePrePull), which needs the previous output: `cdk8s synth` has replaced it, so no ImagePullJob was emitted; run `cdk8s-kruise synth` for this app',
        );
    } finally {
      // The report must always be submitted, or cdk8s throws "Report is incomplete" and hides the cause.
      if (!submitted) {
        try {
          context.report.addViolation({
            ruleName: 'cdk8s-kruise internal error',
            recommendation: 'The validation could not complete; see the error printed above.',
            fix: 'Run `cdk8s-kruise validate <output dir>` to see the failure, and report it if it is a bug.',
            violatingResources: [],
          });
        } catch {
          // violations can no longer be added once a report is submitted; nothing else to do
        }
        context.report.submit('failure', { error: 'validation did not complete' });
      }
    }
  }
}

/**
 * cdk8s writes construct-metadata.json beside the manifests when validations are configured; every plugin's context
 * has read it before any plugin runs. Left in the output directory, a directory-based Argo CD app would try to
 * apply it, so it is removed once the check is done.
 */
function removeConstructMetadata(manifests: readonly string[]): void {
  const top = outputDirOf(manifests);
  if (top !== undefined) rmSync(path.join(top, CONSTRUCT_METADATA_FILE), { force: true });
}

/** The output directory cdk8s wrote: the shortest directory every manifest is in (undefined if there is none). */
function outputDirOf(manifests: readonly string[]): string | undefined {
  const dirs = new Set(manifests.map((m) => path.dirname(m)));
  const top = [...dirs].sort((a, b) => a.length - b.length)[0];
  if (top === undefined || ![...dirs].every((d) => d === top || d.startsWith(top + path.sep))) return undefined;
  return top;
}

const CONSTRUCT_METADATA_FILE = 'construct-metadata.json';

interface PlannedLayout {
  readonly dir: string;
  readonly files: OutputFile[];
  /** The file (absolute) a finding's object is written to, or undefined when it cannot be told. */
  fileOf(this: void, f: Finding): string | undefined;
  /** Some workload opts into pre-pull, which this plugin cannot carry out. */
  readonly prePull: boolean;
}

/** The synth layout of the directory cdk8s wrote, and where each object goes in it. */
function planLayout(manifests: readonly string[], inputs: readonly TextInput[], props: KruiseValidationProps): PlannedLayout {
  const dir = outputDirOf(manifests);
  if (dir === undefined) throw new Error('the manifests are not in one output directory; cannot apply the layout');
  const gitops = parseGitOps(props.layout!);
  const parsed = parseInputs(inputs.map((i) => ({ file: path.relative(dir, i.file).split(path.sep).join('/'), content: i.content })));
  const docs = synthDocs(parsed.manifests);
  const rel = path.relative(process.cwd(), dir).split(path.sep).join('/');
  const prePull = docs.some((d) => prePullWorkloadOf(d.object)?.optedIn);
  const files = layout(docs, {
    gitops,
    syncWaves: props.syncWaves,
    repoURL: props.repoURL,
    targetRevision: props.targetRevision,
    repoPath: props.repoPath ?? (rel && !rel.startsWith('..') ? `./${rel}` : undefined),
    prePull,
  });
  const fileOf = (f: Finding): string | undefined => {
    const chartFile = f.file === undefined ? undefined : path.relative(dir, f.file).split(path.sep).join('/');
    const doc = docs.find((d) => {
      const m = (d.object.metadata ?? {}) as { name?: string; namespace?: string };
      return (
        d.chartFile === chartFile &&
        d.object.kind === f.resource.kind &&
        m.name === f.resource.name &&
        (f.resource.namespace === undefined || m.namespace === f.resource.namespace)
      );
    });
    return doc ? path.join(dir, outputFileOf(doc, phaseOf(doc.object), gitops)) : undefined;
  };
  return { dir, files, fileOf, prePull };
}

/**
 * Rewrites the directory cdk8s wrote into the synth layout: the same documents, byte for byte, under the names and
 * in the files `cdk8s-kruise synth` gives them. Every file goes in before cdk8s's chart files are removed.
 */
function relayout(manifests: readonly string[], { dir, files }: PlannedLayout): void {
  const written = new Set(files.map((f) => path.join(dir, f.name)));
  for (const f of files) {
    mkdirSync(path.dirname(path.join(dir, f.name)), { recursive: true });
    writeFileSync(path.join(dir, f.name), f.content);
  }
  writeFileSync(path.join(dir, OUTPUT_MARKER), OUTPUT_MARKER_CONTENT);
  for (const m of manifests) if (!written.has(m)) rmSync(m, { force: true });
}

function violation(f: Finding, writtenTo?: string) {
  const location = [f.line ? `line ${f.line}` : '', f.jsonPointer || ''].filter(Boolean).join(' ') || '(whole file)';
  return {
    ruleName: `${f.ruleId} [${f.severity}]`,
    recommendation: f.message,
    fix: f.hint,
    violatingResources: [{ resourceName: f.resource.name || '(input)', locations: [location], manifestPath: writtenTo ?? f.file ?? '' }],
  };
}
