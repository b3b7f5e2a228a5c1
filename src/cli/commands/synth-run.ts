// `cdk8s-kruise synth`, what runs once the command is chosen (flags are declared in synth.ts).
import { rmSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkParsed, failing, isBlank, parseInputs, selectRules, summarize, UsageError, type TextInput } from '../../policy/engine.js';
import type { Finding } from '../../policy/types.js';
import { parseFormat, parseMaxFindings, progress, ticker } from '../report.js';
import { renderReport } from '../render-report.js';
import { makeStage, replaceDirectory, SignalGate } from '../synth/atomic.js';
import { assertReplaceable, lockOutput } from '../synth/output-guard.js';
import { escapeControl } from '../../api/quote.js';
import { readCdk8sConfig } from '../synth/config.js';
import {
  chartIdOf,
  checkRepoURL,
  checkTargetRevision,
  layout,
  parseGitOps,
  synthDocs,
  type OutputFile,
  type SynthDoc,
} from '../../policy/output-layout.js';
import { runApp, stopApp } from '../synth/run-app.js';
import { CAPABILITIES_ENV, fetchClusterCapabilities } from '../synth/capabilities.js';
import { readPreviousOutput } from '../synth/previous-output.js';
import { previousLookup } from '../../policy/previous.js';
import { updatesOnlyInPlace } from '../../policy/rules/inplace-only.js';
import { PRE_PULL_DEFAULT_TTL_SECONDS, prePullJobs, prePullWorkloadOf } from '../../policy/pre-pull.js';
import { stringify } from 'yaml';

export interface SynthOptions {
  app?: string;
  output?: string;
  config: string;
  syncWaves?: boolean;
  gitops?: string;
  repoPath?: string;
  repoUrl?: string;
  targetRevision?: string;
  format: string;
  report?: string;
  rule?: string[];
  skipRule?: string[];
  warningsAsErrors?: boolean;
  verbose?: boolean;
  quiet?: boolean;
  allowEmpty?: boolean;
  clean?: boolean;
  maxFindings: string;
  capabilitiesFromCluster?: boolean;
  runtimeNamespace?: string;
  kubectl?: string;
  kubeconfig?: string;
  context?: string;
  prePull?: boolean;
  previous?: string;
}

export async function synth(opts: SynthOptions): Promise<number> {
  const log = progress(opts.verbose, opts.quiet);
  const status = ticker(opts.quiet);
  const format = parseFormat(opts.format);
  const rules = selectRules({ rules: opts.rule, skipRules: opts.skipRule });
  const maxFindings = parseMaxFindings(opts.maxFindings);
  const gitops = parseGitOps(opts.gitops ?? 'plain');
  const config = await readCdk8sConfig(opts.config);
  const app = opts.app ?? config.app;
  if (!app) throw new UsageError(`no app to run: pass --app <command> or set "app" in ${opts.config}`);
  const outDir = opts.output ?? config.output ?? 'dist';
  // Where Flux and Argo CD find the output in the repository; checked before the app runs.
  const repoPath = gitops === 'plain' ? undefined : (opts.repoPath ?? repoPathOf(outDir));
  // The Argo Application's source: the flag, else the plugin's properties in cdk8s.yaml; checked before the app runs.
  const repoURL = opts.repoUrl ?? config.repoURL;
  const targetRevision = opts.targetRevision ?? config.targetRevision;
  if (repoURL !== undefined) checkRepoURL(repoURL);
  if (targetRevision !== undefined) checkTargetRevision(targetRevision);
  // Refused before the app runs (fail fast), and again under the lock just before the swap.
  await assertReplaceable(outDir, process.cwd(), opts.clean);
  const lock = await lockOutput(outDir);
  // The output path as printed: control characters in it cannot forge terminal or CI log lines.
  const shownOut = escapeControl(outDir);
  // Handlers go in as soon as the lock is held, so a signal at any later point releases it. An interrupted synth
  // must not leave its stage directory beside the output either. Signals that arrive during the swap are held back
  // by the gate until the new output is in place.
  let stage: string | undefined;
  const gate = new SignalGate((signal) => {
    stopApp();
    if (stage) rmSync(stage, { recursive: true, force: true });
    lock.release();
    process.stderr.write(
      gate.completed
        ? `cdk8s-kruise: interrupted (${signal}) after the new output was in place; ${shownOut} holds it.\n`
        : `cdk8s-kruise: interrupted (${signal}); ${shownOut} was left unchanged.\n`,
    );
    process.exit(130);
  });
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const s of signals) process.on(s, gate.handle);
  try {
    stage = await makeStage(outDir);
  } catch (e) {
    for (const s of signals) process.off(s, gate.handle);
    lock.release();
    throw e;
  }
  try {
    const raw = path.join(stage, 'raw');
    const t0 = performance.now();
    const env: Record<string, string> = {};
    if (opts.capabilitiesFromCluster) {
      const clusterOpts = { kubectl: opts.kubectl ?? 'kubectl', kubeconfig: opts.kubeconfig, context: opts.context };
      env[CAPABILITIES_ENV] = await fetchClusterCapabilities(
        { ...clusterOpts, namespace: opts.runtimeNamespace ?? 'kruise-system' },
        stage,
      );
      log(`read the platform runtime's capabilities from the cluster`);
    }
    log(`running the app: ${app}`);
    const result = await runApp(app, raw, process.cwd(), env);
    if (result.code !== 0) {
      process.stderr.write(
        `cdk8s-kruise: the cdk8s app failed (${result.signal ? `signal ${result.signal}` : `exit code ${result.code}`}): ${app}\n` +
          `cdk8s-kruise: ${shownOut} was left unchanged.\n`,
      );
      return 1;
    }
    const t1 = performance.now();
    // cdk8s writes an empty file for a chart without objects (the chart `cdk8s init` creates, a KruiseRuntime
    // under target openkruise): that is the tool's own output, not an empty input worth a warning.
    const raws = (await readSynthesized(raw)).filter((i) => !isBlank(i.content));
    const rawParsed = parseInputs(raws);
    const docs: SynthDoc[] = synthDocs(rawParsed.manifests);
    const prePull = opts.prePull === true || docs.some((d) => prePullWorkloadOf(d.object)?.optedIn);
    // What reads the previous output: pre-pull (its new images), and the check of InPlaceOnly workloads' changes.
    const inPlaceOnly = docs.some((d) => updatesOnlyInPlace(d.object));
    const previous = prePull || inPlaceOnly ? await readPreviousOutput(opts.previous, outDir) : undefined;
    if (prePull) {
      const jobs = prePullJobs(
        docs.map((d) => d.object),
        previous?.objects,
        // Under Flux a job its TTL deleted would be created again at the next reconciliation; Git prunes it instead.
        { all: opts.prePull, ttlSecondsAfterFinished: gitops === 'flux' ? undefined : PRE_PULL_DEFAULT_TTL_SECONDS },
      );
      for (const job of jobs) docs.push({ chartFile: PRE_PULL_SOURCE, object: job, text: stringify(job, { lineWidth: 0 }) });
      log(
        previous
          ? `pre-pull: compared with ${escapeControl(previous.from)}: ${jobs.length} ImagePullJob(s) for changed images`
          : `pre-pull: no previous output to compare with (${shownOut} was not written by synth; see --previous): nothing to pre-pull`,
      );
    } else if (opts.previous !== undefined && !inPlaceOnly) {
      process.stderr.write(
        `cdk8s-kruise: --previous is read only with pre-pull on (--pre-pull, or ImagePrePull.enableIn in the app) or an InPlaceOnly workload; ignored.\n`,
      );
    }
    let files: OutputFile[];
    try {
      files = layout(docs, { syncWaves: opts.syncWaves, gitops, repoPath, repoURL, targetRevision, prePull });
    } catch (e) {
      process.stderr.write(`cdk8s-kruise: ${escapeControl((e as Error).message)}; ${shownOut} was left unchanged.\n`);
      return 1;
    }
    // The rules run on the files as they will be committed, so every finding names the output file, its line and
    // column (what code scanning and editors link to); what cdk8s could not parse is reported against its own file.
    const inputs: TextInput[] = files.filter((f) => f.sources).map((f) => ({ file: shownPath(outDir, f.name), content: f.content }));
    status.tick(`checking ${docs.length} object(s) in ${inputs.length} file(s)`);
    const parsed = parseInputs(inputs);
    const constructPaths = await readConstructMetadata(raw);
    const chartsOf = new Map(files.filter((f) => f.sources).map((f) => [shownPath(outDir, f.name), new Set(f.sources!.map(chartIdOf))]));
    const findings = [
      ...rawParsed.findings,
      ...withConstructPaths(
        checkParsed(
          parsed,
          rules,
          inputs.map((i) => i.file),
          previous ? previousLookup(previous.objects) : undefined,
        ),
        constructPaths,
        chartsOf,
      ),
    ];
    const t2 = performance.now();
    status.clear();
    const stats = { documents: parsed.manifests.length, files: inputs.length };
    if (findings.length > 0 || format !== 'text' || opts.report) {
      const report = renderReport(format, findings, stats, maxFindings);
      if (opts.report) await writeFile(opts.report, report);
      else process.stdout.write(report);
    }
    const s = summarize(findings);
    log(
      `app ran in ${(t1 - t0).toFixed(0)} ms; checked ${stats.documents} object(s) in ${(t2 - t1).toFixed(0)} ms: ${s.errors} error(s), ${s.warnings} warning(s)`,
    );
    if (failing(findings, opts.warningsAsErrors)) {
      process.stderr.write(
        `cdk8s-kruise: synth failed with ${s.errors} error(s)${opts.warningsAsErrors ? ` and ${s.warnings} warning(s)` : ''}; ${shownOut} was left unchanged.\n`,
      );
      return 1;
    }
    if (docs.length === 0 && !opts.allowEmpty) {
      process.stderr.write(
        `cdk8s-kruise: the app produced no manifests; ${shownOut} was left unchanged. An empty output would make a GitOps sync ` +
          `with pruning delete everything deployed from it; pass --allow-empty if that is intended.\n`,
      );
      return 1;
    }
    await assertReplaceable(outDir, process.cwd(), opts.clean);
    await replaceDirectory(stage, outDir, files, { gate });
    log(`wrote ${files.length} file(s) to ${shownOut} in ${(performance.now() - t0).toFixed(0)} ms`);
    return 0;
  } finally {
    for (const s of signals) process.off(s, gate.handle);
    await rm(stage, { recursive: true, force: true });
    lock.release();
  }
}

/** The source named for the pre-pull jobs synth adds (they come from no chart). */
const PRE_PULL_SOURCE = 'pre-pull';

/** The YAML files cdk8s wrote, relative to its output directory, in sorted (chart) order. */
async function readSynthesized(dir: string): Promise<TextInput[]> {
  let entries: string[];
  try {
    entries = (await readdir(dir, { recursive: true })).map(String);
  } catch {
    return [];
  }
  const files = entries.filter((f) => /\.ya?ml$/i.test(f)).sort();
  return Promise.all(files.map(async (file) => ({ file: file.split(path.sep).join('/'), content: await readFile(path.join(dir, file)) })));
}

/** cdk8s's construct metadata (resource name → construct path), written when CDK8S_RECORD_CONSTRUCT_METADATA=true. */
async function readConstructMetadata(dir: string): Promise<Map<string, string>> {
  try {
    const json = JSON.parse(await readFile(path.join(dir, 'construct-metadata.json'), 'utf8')) as {
      resources?: Record<string, { path?: string }>;
    };
    return new Map(Object.entries(json.resources ?? {}).flatMap(([name, v]) => (v.path ? [[name, v.path] as [string, string]] : [])));
  } catch {
    return new Map();
  }
}

/**
 * Adds the construct path to findings. cdk8s records paths by object name only, so a name used in two charts keeps
 * only one path: it is used only when its chart is one the finding's output file was written from.
 */
function withConstructPaths(findings: Finding[], paths: Map<string, string>, chartsOf: Map<string, Set<string>>): Finding[] {
  return findings.map((f) => {
    const p = paths.get(f.resource.name);
    if (!p || !chartsOf.get(f.file ?? '')?.has(p.split('/')[0]!)) return f;
    return { ...f, constructPath: p };
  });
}

/** The output file as reports name it: relative to the working directory when inside it (`dist/…`), else absolute. */
function shownPath(outDir: string, name: string): string {
  const abs = path.resolve(outDir, name);
  const rel = path.relative(process.cwd(), abs);
  return (rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : abs).split(path.sep).join('/');
}

/** The output directory as a path from the working directory (assumed the repository root), for Flux and Argo CD. */
function repoPathOf(outDir: string): string {
  const rel = path.relative(process.cwd(), path.resolve(outDir)).split(path.sep).join('/');
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel))
    throw new UsageError(
      `--output ${escapeControl(outDir)} is outside the working directory: pass --repo-path with its path in the Git repository`,
    );
  return `./${rel}`;
}
