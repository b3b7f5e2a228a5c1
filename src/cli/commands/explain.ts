import type { Command } from 'commander';
import { UsageError } from '../../policy/usage-error.js';
import { guarded, usageExitCodes } from '../report.js';

function wrap(text: string, width = 100): string {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + word.length + 1 > width) {
      out.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(line);
  return out.join('\n');
}

export function register(program: Command): void {
  const cmd = program
    .command('explain')
    .description('Print the documentation of a rule, or list every rule')
    .argument('[ruleId]', 'a rule id such as KRUISE-SIDECAR-001 (omit to list all rules)')
    .action(
      guarded(async (ruleId?: string) => {
        // The rules load only when the command runs (--help/--version stay fast).
        const [{ selectRules }, { RULES, findRule }] = await Promise.all([
          import('../../policy/engine.js'),
          import('../../policy/rules/index.js'),
        ]);
        if (!ruleId) {
          for (const r of RULES) process.stdout.write(`${r.id.padEnd(26)} ${r.severity.padEnd(8)} ${r.title}\n`);
          return 0;
        }
        const rule = findRule(ruleId);
        if (!rule) {
          selectRules({ rules: [ruleId] }); // throws a UsageError with suggestions
          throw new UsageError(`unknown rule id "${ruleId}"`);
        }
        process.stdout.write(`${rule.id} (${rule.severity}): ${rule.title}\n\n${wrap(rule.doc)}\n`);
        return 0;
      }),
    );
  usageExitCodes(cmd);
}
