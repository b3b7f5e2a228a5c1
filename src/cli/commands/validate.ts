import { writeFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
import { FORMATS, guarded, parseFormat, progress, usageExitCodes } from '../report.js';

interface ValidateOptions {
  format: string;
  rule?: string[];
  skipRule?: string[];
  warningsAsErrors?: boolean;
  output?: string;
  verbose?: boolean;
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
    .addHelpText(
      'after',
      '\nExit codes: 0 no errors, 1 errors found (or warnings with --warnings-as-errors), 2 usage or I/O error.\n' +
        'Example: cdk8s-kruise validate dist/ --format sarif --output kruise.sarif',
    )
    .action(
      guarded(async (paths: string[], opts: ValidateOptions) => {
        const log = progress(opts.verbose);
        const format = parseFormat(opts.format);
        // The engine, its rules and validators load only when the command runs (--help/--version stay fast).
        const [{ failing, summarize, validateInputs }, { readInputs }, { renderReport }] = await Promise.all([
          import('../../policy/engine.js'),
          import('../../policy/inputs.js'),
          import('../render-report.js'),
        ]);
        const t0 = performance.now();
        const inputs = await readInputs(paths);
        const t1 = performance.now();
        const result = validateInputs(inputs, { rules: opts.rule, skipRules: opts.skipRule });
        const t2 = performance.now();
        const report = renderReport(format, result.findings, result);
        if (opts.output) await writeFile(opts.output, report);
        else process.stdout.write(report);
        const s = summarize(result.findings);
        log(
          `${result.documents} object(s) from ${result.files} input(s): read ${(t1 - t0).toFixed(0)} ms, validated ${(t2 - t1).toFixed(0)} ms; ` +
            `${s.errors} error(s), ${s.warnings} warning(s)`,
        );
        return failing(result.findings, opts.warningsAsErrors) ? 1 : 0;
      }),
    );
  usageExitCodes(cmd);
}
