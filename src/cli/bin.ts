#!/usr/bin/env node
// The published `cdk8s-kruise` binary: checks the Node version before anything else loads, so an old Node
// gets a clear message instead of a syntax or module error, then starts the CLI.
import module from 'node:module';
import { MIN_CLI_NODE, unsupportedNodeMessage } from './node-support.js';
import { packageVersion } from '../version.js';

const message = unsupportedNodeMessage('cdk8s-kruise', process.version, MIN_CLI_NODE);
if (message) {
  process.stderr.write(message);
  process.exit(2);
}
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  // Answered here, as the full CLI would (same flags, same output), without loading the command-line parser
  // and every command's options: a version check (CI logs, `npx` probes) costs little more than Node's start.
  process.stdout.write(`${packageVersion()}\n`);
} else {
  // Node >= 22.1 keeps the bundle's compiled code in its on-disk cache, so later runs skip most parsing and
  // compiling (the bundle carries the precompiled validators); older Nodes simply compile each time.
  (module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
  await import('./main.js');
}
