#!/usr/bin/env node
import { Command } from 'commander';
import { registerCommands } from './commands/index.js';
import { packageVersion } from '../version.js';

const program = new Command()
  .name('cdk8s-kruise')
  .description('Compile, validate and run OpenKruise-style pod-lifecycle features')
  .version(packageVersion(), '-V, --version')
  .showHelpAfterError();

registerCommands(program);

await program.parseAsync(process.argv);
