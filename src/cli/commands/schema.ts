import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { guarded, progress, usageExitCodes } from '../report.js';

interface SchemaOptions {
  out?: string;
  verbose?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('schema')
    .description('Write a JSON Schema per kind, for editors (YAML language server) and other validators')
    .option('-o, --out <dir>', 'write one <kind>.json per kind into this directory (default: print one JSON object to stdout)')
    .option('-v, --verbose', 'list written files on stderr')
    .addHelpText(
      'after',
      '\nUse in a hand-written manifest (path relative to the YAML file):\n' +
        '  # yaml-language-server: $schema=./schemas/cloneset.json\n',
    )
    .action(
      guarded(async (opts: SchemaOptions) => {
        const log = progress(opts.verbose);
        // The API model loads only when the command runs (--help/--version stay fast).
        const [{ jsonSchemaFileName, jsonSchemaFor }, { KINDS }] = await Promise.all([
          import('../../api/json-schema.js'),
          import('../../api/registry.js'),
        ]);
        if (!opts.out) {
          const all = Object.fromEntries(KINDS.map((def) => [`${def.group}/${def.version}/${def.kind}`, jsonSchemaFor(def)]));
          process.stdout.write(JSON.stringify(all, null, 2) + '\n');
          return 0;
        }
        await mkdir(opts.out, { recursive: true });
        for (const def of KINDS) {
          const file = path.join(opts.out, jsonSchemaFileName(def));
          await writeFile(file, JSON.stringify(jsonSchemaFor(def), null, 2) + '\n');
          log(`wrote ${file}`);
        }
        return 0;
      }),
    );
  usageExitCodes(cmd);
}
