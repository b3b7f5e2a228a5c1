import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { escapeControl } from '../../api/quote.js';
import { dns1123LabelError } from '../../contracts/validators.js';
import {
  CAPABILITIES_CONFIGMAP,
  CAPABILITIES_ENV,
  CAPABILITIES_KEY,
  CapabilitiesError,
  capabilitiesJson,
  MAX_CAPABILITIES_BYTES,
  parseCapabilities,
} from '../../install/capabilities.js';
import { UsageError } from '../../policy/engine.js';
import { kubectlFailure } from '../commands/apply-diagnose.js';

export { CAPABILITIES_ENV };

export interface ClusterCapabilitiesOptions {
  readonly kubectl: string;
  readonly kubeconfig?: string;
  readonly context?: string;
  /** Namespace of the platform's runtime. */
  readonly namespace: string;
}

/** Largest `kubectl get configmap -o json` answer read (the document itself is bounded far lower). */
const MAX_ANSWER = 4 * MAX_CAPABILITIES_BYTES;

/**
 * Reads the platform runtime's capabilities ConfigMap with the user's kubeconfig (through kubectl, as `apply` does),
 * checks the document and writes it to `<stage>/capabilities.json`. Returns that path, for the app's environment.
 * A missing ConfigMap, an unreachable cluster, refused credentials and a malformed document are UsageErrors that say so.
 */
export async function fetchClusterCapabilities(opts: ClusterCapabilitiesOptions, stage: string): Promise<string> {
  if (dns1123LabelError(opts.namespace) !== undefined) {
    throw new UsageError(`--runtime-namespace "${escapeControl(opts.namespace.slice(0, 80))}" is not a namespace name`);
  }
  const args = [
    ...(opts.kubeconfig ? ['--kubeconfig', opts.kubeconfig] : []),
    ...(opts.context ? ['--context', opts.context] : []),
    'get',
    'configmap',
    CAPABILITIES_CONFIGMAP,
    '-n',
    opts.namespace,
    '-o',
    'json',
  ];
  const where = `ConfigMap ${opts.namespace}/${CAPABILITIES_CONFIGMAP}${opts.context ? ` (context ${escapeControl(opts.context)})` : ''}`;
  const answer = await kubectl(opts.kubectl, args);
  if (!answer.ok) {
    if (/NotFound|not found/.test(answer.stderr)) {
      throw new UsageError(
        `${where} does not exist: no cdk8s-kruise runtime is installed in namespace ${opts.namespace} (install the platform's output first, or pass --runtime-namespace)`,
      );
    }
    const failure = kubectlFailure(answer.stderr);
    const what = failure.kind === 'refused' ? `kubectl could not read ${where}` : failure.what;
    throw new UsageError(`--capabilities-from-cluster: ${what}: ${escapeControl(answer.stderr.trim().slice(0, 400))}`);
  }
  let text: unknown;
  try {
    const cm = JSON.parse(answer.stdout) as { data?: Record<string, unknown> };
    text = cm?.data?.[CAPABILITIES_KEY];
  } catch (e) {
    throw new UsageError(`--capabilities-from-cluster: kubectl's answer for ${where} is not JSON (${(e as Error).message.slice(0, 120)})`);
  }
  if (typeof text !== 'string') throw new UsageError(`${where} has no data.${CAPABILITIES_KEY}`);
  let caps;
  try {
    caps = parseCapabilities(text, where);
  } catch (e) {
    if (e instanceof CapabilitiesError) throw new UsageError(escapeControl(e.message));
    throw e;
  }
  const file = path.join(stage, 'capabilities.json');
  await writeFile(file, capabilitiesJson(caps));
  return file;
}

function kubectl(cmd: string, args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 60_000, maxBuffer: MAX_ANSWER }, (error, stdout, stderr) => {
      if (error && (error as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(new UsageError(`cannot run ${cmd}: not found (pass --kubectl <path>)`));
        return;
      }
      resolve({ ok: !error, stdout: String(stdout), stderr: `${String(stderr)}${error && !stderr ? error.message : ''}` });
    });
  });
}
