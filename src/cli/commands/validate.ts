import { writeFile } from 'node:fs/promises';
import { setFlagsFromString } from 'node:v8';
import { Command, Option } from 'commander';
import { DEFAULT_MAX_FINDINGS, FORMATS, guarded, parseFormat, parseMaxFindings, progress, ticker, usageExitCodes } from '../report.js';

/** The largest input file read by default; the policy engine's inputs module holds the same figure (a unit test checks). */
export const DEFAULT_MAX_FILE_SIZE_MIB = 64;

interface ValidateOptions {
  format: string;
  rule?: string[];
  skipRule?: string[];
  warningsAsErrors?: boolean;
  output?: string;
  verbose?: boolean;
  quiet?: boolean;
  maxFileSize: string;
  maxFindings: string;
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

export function register(program: Command): void {
  const cmd = program
    .command('validate')
    .description('Check YAML/JSON manifests (files, directories, or - for stdin) against the Kruise schemas and policy rules')
    .argument('<paths...>', 'files, directories (searched for *.yaml, *.yml, *.json) or - for standard input')
    .addOption(new Option('-f, --format <format>', 'report format').choices(FORMATS).default('text'))
    .option('-r, --rule <id>', 'run only this rule (repeatable, or comma-separated)', collect)
    .option('-s, --skip-rule <id>', 'do not run this rule (repeatable, or comma-separated)', collect)
    .option('-W, --warnings-as-errors', 'exit 1 on warnings too')
    .option('-o, --output <file>', 'write the report to a file instead of stdout')
    .option('-v, --verbose', 'progress and timing on stderr (default: only when stderr is a terminal)')
    .option('-q, --quiet', 'no progress or timing, even on a terminal')
    .option(
      '--max-file-size <size>',
      'largest input file read (bytes, or with KiB/MiB/GiB); larger ones are reported, not read',
      `${DEFAULT_MAX_FILE_SIZE_MIB}MiB`,
    )
    .option('--max-findings <n>', 'findings listed in the report (the summary counts all; 0 lists all)', String(DEFAULT_MAX_FINDINGS))
    .addHelpText(
      'after',
      '\nOnly regular files are read (FIFOs and devices are reported); symbolic links inside directories are followed.\n' +
        'Exit codes: 0 no errors, 1 errors found (or warnings with --warnings-as-errors), 2 usage or I/O error.\n' +
        'Example: cdk8s-kruise validate dist/ --format sarif --output kruise.sarif',
    )
    .action(
      guarded(async (paths: string[], opts: ValidateOptions) => {
        // The engine checks documents in small batches whose objects die young. By default V8 doubles its young
        // generation whenever a scavenge finds it busy, up to several times 16 MiB on a large machine, and never
        // gives it back: on 10,000 documents that was half the peak RSS and no faster. Kept at its initial size,
        // the scavenges are more frequent and each one cheaper. (Set here, not as a node flag: `npx cdk8s-kruise`
        // passes none.)
        setFlagsFromString('--semi-space-growth-factor=1');
        const log = progress(opts.verbose, opts.quiet);
        const status = ticker(opts.quiet);
        const format = parseFormat(opts.format);
        const maxFindings = parseMaxFindings(opts.maxFindings);
        // The engine, its rules and validators load only when the command runs (--help/--version stay fast).
        const [{ checkInputStreamWindow, selectRules }, { iterateInputs, parseSize }, { renderReport }] = await Promise.all([
          import('../../policy/engine.js'),
          import('../../policy/inputs.js'),
          import('../render-report.js'),
        ]);
        const maxFileSize = parseSize(opts.maxFileSize);
        const rules = selectRules({ rules: opts.rule, skipRules: opts.skipRule });
        const t0 = performance.now();
        let read = 0;
        // Read, parsed and checked in batches; only the listed findings are kept (and located), the others counted.
        const findings = await checkInputStreamWindow(
          (async function* () {
            for await (const item of iterateInputs(paths, { maxFileSize })) {
              status.tick(`read and checking ${++read} file(s): ${item.file}`);
              yield item;
            }
          })(),
          rules,
          maxFindings,
        );
        const t1 = performance.now();
        status.clear();
        const counts = { documents: findings.documents, files: findings.files.length };
        const report = renderReport(format, findings, counts, maxFindings);
        if (opts.output) await writeFile(opts.output, report);
        else process.stdout.write(report);
        const s = findings.total;
        log(
          `${counts.documents} object(s) from ${counts.files} input(s): read, parsed and validated in ${(t1 - t0).toFixed(0)} ms; ` +
            `${s.errors} error(s), ${s.warnings} warning(s)`,
        );
        return s.errors > 0 || (opts.warningsAsErrors && s.warnings > 0) ? 1 : 0;
      }),
    );
  usageExitCodes(cmd);
}
