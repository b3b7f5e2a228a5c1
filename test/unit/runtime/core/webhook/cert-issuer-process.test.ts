// Webhook certificates issued in a child process (the controller command's issuer): the real CLI started
// again with its hidden `issue-webhook-certs` command, and what the parent does with a child that fails.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ISSUE_WEBHOOK_CERTS } from '../../../../../src/cli/commands/controller.js';
import { issueInChildProcess, parseBundle, parseIssueRequest } from '../../../../../src/runtime/core/webhook/cert-issuer-process.js';
import { renewalReason } from '../../../../../src/runtime/core/webhook/certs.js';

const DAY = 24 * 3600_000;
const HOSTS = ['kruise-webhook-service.kruise-system.svc', '127.0.0.1'];
const OPTIONS = { hosts: HOSTS, caValidityMs: 3650 * DAY, certValidityMs: 365 * DAY, renewBeforeMs: 30 * DAY };
const CLI = ['--import', 'tsx', 'src/cli/main.ts', ISSUE_WEBHOOK_CERTS];
const node = (script: string) => issueInChildProcess({ execPath: process.execPath, args: ['-e', script] });

describe('issueInChildProcess', () => {
  it('gets a bundle that serves every host from the CLI started again, and keeps a CA that is still good', async () => {
    const issue = issueInChildProcess({ execPath: process.execPath, args: CLI });
    const first = await issue(undefined, OPTIONS);
    expect(renewalReason(first, HOSTS, OPTIONS.renewBeforeMs)).toBeUndefined();
    const second = await issue({ ...first, cert: '' }, OPTIONS);
    expect(second.caCert).toBe(first.caCert);
    expect(second.cert).not.toBe(first.cert);
    expect(renewalReason(second, HOSTS, OPTIONS.renewBeforeMs)).toBeUndefined();
  }, 60_000);

  it('reports a child that fails with its exit code and message', async () => {
    await expect(node('process.stderr.write("no entropy"); process.exit(3)')(undefined, OPTIONS)).rejects.toThrow(
      /exited with code 3: no entropy/,
    );
  });

  it('refuses an answer that is not a bundle, naming the field', async () => {
    await expect(node('process.stdout.write(JSON.stringify({ caCert: "x" }))')(undefined, OPTIONS)).rejects.toThrow(
      /unreadable answer: \/caCert is not a PEM block/,
    );
    await expect(node('process.stdout.write("not json")')(undefined, OPTIONS)).rejects.toThrow(/unreadable answer/);
  });

  it('stops reading an answer that never ends', async () => {
    await expect(node('const b = "x".repeat(65536); setInterval(() => process.stdout.write(b), 1)')(undefined, OPTIONS)).rejects.toThrow(
      /answer larger than/,
    );
  });
});

describe('the issue-webhook-certs command', () => {
  const run = (input: string) => {
    try {
      execFileSync(process.execPath, CLI, { input, stdio: ['pipe', 'pipe', 'pipe'] });
      return '';
    } catch (err) {
      return String((err as { stderr: Buffer }).stderr);
    }
  };

  it('refuses a request that is not JSON or misses its options, saying what is wrong', () => {
    expect(run('{')).toMatch(/the request on stdin is not JSON/);
    expect(run('{"options":{"hosts":[],"caValidityMs":1,"certValidityMs":1,"renewBeforeMs":0}}')).toMatch(
      /\/options\/hosts must be a non-empty list of names/,
    );
  }, 60_000);
});

describe('parseIssueRequest and parseBundle', () => {
  it.each([
    [null, /not a JSON object/],
    [{}, /\/options is missing/],
    [{ options: { hosts: ['a'], caValidityMs: 1, certValidityMs: -1, renewBeforeMs: 0 } }, /\/options\/certValidityMs must be/],
    [{ options: { ...OPTIONS }, old: { caCert: 3 } }, /\/old\/caCert is not a string/],
  ])('%j is refused', (input, message) => {
    expect(() => parseIssueRequest(input)).toThrow(message);
  });

  it('passes on a partial stored bundle (the issuer decides what of it to keep)', () => {
    expect(parseIssueRequest({ options: OPTIONS, old: { caCert: 'garbage' } }).old).toEqual({
      caCert: 'garbage',
      caKey: '',
      cert: '',
      key: '',
    });
  });

  it('takes a previous CA only as PEM', () => {
    const pem = '-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n';
    const b = { caCert: pem, caKey: pem, cert: pem, key: pem };
    expect(parseBundle({ ...b, previousCaCert: pem }).previousCaCert).toBe(pem);
    expect(() => parseBundle({ ...b, previousCaCert: 'x' })).toThrow(/\/previousCaCert is not a PEM block/);
  });
});
