// Issuing webhook certificates in a short-lived child process. The X.509 builder (@peculiar/x509 and its
// ASN.1 schemas) is about 4 MiB of a Node process's memory once loaded, and a module cannot be unloaded: a
// manager that issued its certificates in-process would hold that for the rest of its life although it
// issues again only at renewal, months later (bench/memory-peer.bench.ts, "first start"). The child
// exits once it has answered, and its memory with it.
import { spawn } from 'node:child_process';
import type { CertBundle, CertIssuer, CertOptions } from './certs.js';

/** What the parent sends the child on stdin. */
export interface IssueRequest {
  readonly old?: CertBundle;
  readonly options: CertOptions & { readonly renewBeforeMs: number };
}

/** How to start this program again with the issuing command (`issue-webhook-certs`). */
export interface IssuerCommand {
  readonly execPath: string;
  readonly args: readonly string[];
}

/** A PEM bundle with a previous CA is a few KiB; anything much larger is not an answer. */
const MAX_ANSWER_BYTES = 256 * 1024;
const MAX_STDERR_BYTES = 16 * 1024;
/** Key generation and signing take milliseconds; a child this slow is stuck. */
const ISSUE_TIMEOUT_MS = 60_000;

/** A CertIssuer that runs `command` and exchanges one JSON request and answer with it. */
export function issueInChildProcess(command: IssuerCommand): CertIssuer {
  return (old, o) =>
    new Promise<CertBundle>((resolve, reject) => {
      const request: IssueRequest = {
        ...(old ? { old } : {}),
        options: { hosts: o.hosts, caValidityMs: o.caValidityMs, certValidityMs: o.certValidityMs, renewBeforeMs: o.renewBeforeMs },
      };
      const child = spawn(command.execPath, command.args, { stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      let outBytes = 0;
      let err = '';
      let settled = false;
      const fail = (why: string) => {
        if (settled) return;
        settled = true;
        child.kill('SIGKILL');
        reject(new Error(`issuing webhook certificates in a child process (${command.args.at(-1)}): ${why}`));
      };
      const timer = setTimeout(() => fail(`no answer within ${ISSUE_TIMEOUT_MS / 1000} s`), ISSUE_TIMEOUT_MS);
      child.stdout.on('data', (b: Buffer) => {
        outBytes += b.length;
        if (outBytes > MAX_ANSWER_BYTES) fail(`answer larger than ${MAX_ANSWER_BYTES} bytes`);
        else out.push(b);
      });
      child.stderr.on('data', (b: Buffer) => {
        if (err.length < MAX_STDERR_BYTES) err += b.toString('utf8').slice(0, MAX_STDERR_BYTES - err.length);
      });
      child.on('error', (e) => {
        clearTimeout(timer);
        fail(e.message);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (settled) return;
        if (code !== 0) return fail(`exited with ${signal ?? `code ${code}`}: ${err.trim() || 'no message'}`);
        try {
          const bundle = parseBundle(JSON.parse(Buffer.concat(out).toString('utf8')));
          settled = true;
          resolve(bundle);
        } catch (e) {
          fail(`unreadable answer: ${(e as Error).message}`);
        }
      });
      // The request holds the CA's private key: it goes through the pipe only, never argv or the environment.
      child.stdin.on('error', () => undefined); // a child that died early is reported by 'close'
      child.stdin.end(JSON.stringify(request));
    });
}

function isPem(v: unknown): v is string {
  return typeof v === 'string' && v.includes('-----BEGIN ');
}

/** The bundle in `v`, or an error naming the first field that is not PEM. */
export function parseBundle(v: unknown): CertBundle {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not a JSON object');
  const o = v as Record<string, unknown>;
  for (const k of ['caCert', 'caKey', 'cert', 'key'] as const) if (!isPem(o[k])) throw new Error(`/${k} is not a PEM block`);
  if (o.previousCaCert !== undefined && !isPem(o.previousCaCert)) throw new Error('/previousCaCert is not a PEM block');
  return {
    caCert: o.caCert as string,
    caKey: o.caKey as string,
    cert: o.cert as string,
    key: o.key as string,
    ...(o.previousCaCert ? { previousCaCert: o.previousCaCert as string } : {}),
  };
}

/**
 * What the Secret held, as the parent read it: possibly partial or unreadable (that is why it is renewed),
 * so only the types are checked; the issuer keeps the CA only when it parses and is still good.
 */
function storedBundle(v: unknown): CertBundle {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('/old is not a JSON object');
  const o = v as Record<string, unknown>;
  const text = (k: string) => {
    if (o[k] !== undefined && typeof o[k] !== 'string') throw new Error(`/old/${k} is not a string`);
    return (o[k] as string | undefined) ?? '';
  };
  const previous = text('previousCaCert');
  return {
    caCert: text('caCert'),
    caKey: text('caKey'),
    cert: text('cert'),
    key: text('key'),
    ...(previous ? { previousCaCert: previous } : {}),
  };
}

/** The request in `v`, or an error naming the first field that is wrong. */
export function parseIssueRequest(v: unknown): IssueRequest {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not a JSON object');
  const r = v as Record<string, unknown>;
  const o = r.options as Record<string, unknown> | undefined;
  if (!o || typeof o !== 'object') throw new Error('/options is missing');
  if (!Array.isArray(o.hosts) || o.hosts.length === 0 || !o.hosts.every((h) => typeof h === 'string' && h.length > 0)) {
    throw new Error('/options/hosts must be a non-empty list of names');
  }
  for (const k of ['caValidityMs', 'certValidityMs', 'renewBeforeMs'] as const) {
    if (typeof o[k] !== 'number' || !Number.isFinite(o[k]) || o[k] < 0) throw new Error(`/options/${k} must be a number of milliseconds`);
  }
  return {
    ...(r.old !== undefined ? { old: storedBundle(r.old) } : {}),
    options: {
      hosts: o.hosts as string[],
      caValidityMs: o.caValidityMs as number,
      certValidityMs: o.certValidityMs as number,
      renewBeforeMs: o.renewBeforeMs as number,
    },
  };
}
