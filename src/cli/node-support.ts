/**
 * Which Node.js versions the CLI runs on. The compiler commands (synth, validate, schema, explain) run on
 * every maintained Node LTS; the runtime commands (controller, daemon) need the Node the runtime image
 * ships, because their HTTP and gRPC libraries use newer Node APIs.
 *
 * This module must stay free of imports and of syntax newer than Node 14, so `bin.ts` can load it first
 * and print a clear message on an old Node instead of a syntax or module error.
 */

/** The oldest Node for the compiler commands (the `engines` range of package.json, kept equal by a test). */
export const MIN_CLI_NODE = '20.19.0';
/** The oldest Node for `controller` and `daemon` (the runtime image runs Node 24). */
export const MIN_RUNTIME_NODE = '24.0.0';

function parse(version: string): number[] {
  return version
    .replace(/^v/, '')
    .split('.')
    .map((p) => Number.parseInt(p, 10) || 0);
}

/** True when `version` (e.g. `v20.19.1` or `20.19.1`) is at least `minimum`. */
export function nodeAtLeast(version: string, minimum: string): boolean {
  const have = parse(version);
  const want = parse(minimum);
  for (let i = 0; i < 3; i++) {
    if ((have[i] ?? 0) !== (want[i] ?? 0)) return (have[i] ?? 0) > (want[i] ?? 0);
  }
  return true;
}

/** The message for a Node older than `minimum`, or undefined when `version` is new enough. */
export function unsupportedNodeMessage(what: string, version: string, minimum: string): string | undefined {
  if (nodeAtLeast(version, minimum)) return undefined;
  return (
    `cdk8s-kruise: ${what} needs Node.js >= ${minimum}, but this is Node.js ${version.replace(/^v?/, 'v')}.\n` +
    `  Install a maintained Node.js LTS (https://nodejs.org) or select one with your version manager (e.g. nvm install ${minimum.split('.')[0]}).\n`
  );
}

/** Exits with status 2 and a clear message when the running Node is too old for a runtime command. */
export function requireRuntimeNode(command: 'controller' | 'daemon'): void {
  const message = unsupportedNodeMessage(`\`cdk8s-kruise ${command}\``, process.version, MIN_RUNTIME_NODE);
  if (message) {
    process.stderr.write(message + '  (the runtime image ships a suitable Node; the other commands run on older ones.)\n');
    process.exit(2);
  }
}
