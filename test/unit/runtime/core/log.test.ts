// The runtime logger shows work-queue keys and hides secret material (Secret payloads, private keys,
// registry credentials, auth headers), also when it sits a few levels down in a logged object.
import { generateKeyPairSync } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ControllerRunner } from '../../../../src/runtime/core/controller.js';
import { createLogger } from '../../../../src/runtime/core/log.js';
import { RuntimeMetrics } from '../../../../src/runtime/core/metrics.js';

function capture(): { logger: ReturnType<typeof createLogger>; lines: () => Record<string, any>[]; text: () => string } {
  const out: string[] = [];
  const logger = createLogger({ level: 'debug', name: 'test', destination: { write: (s: string) => void out.push(s) } });
  return { logger, lines: () => out.map((l) => JSON.parse(l)), text: () => out.join('') };
}

const PEM = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const PASSWORD = 'hunter2-do-not-log';
const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.not-for-logs';

describe('runtime logger', () => {
  it('logs the reconcile key of a failed reconcile (namespace/name), as the controller runner writes it', async () => {
    const { logger, lines } = capture();
    const runner = new ControllerRunner(
      'imagepulljob',
      {
        reconcile: async () => {
          throw new Error('boom');
        },
      },
      1,
      new RuntimeMetrics(),
      logger,
    );
    runner.enqueue('team-a/prepull');
    runner.start();
    for (let i = 0; i < 100 && !lines().some((l) => l.msg === 'reconcile failed'); i++) await sleep(10);
    await runner.stop();
    const failed = lines().find((l) => l.msg === 'reconcile failed');
    expect(failed).toMatchObject({ controller: 'imagepulljob', key: 'team-a/prepull', err: 'boom' });
  });

  it("hides a Secret's data and stringData wherever the Secret is logged", () => {
    const { logger, lines, text } = capture();
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'regcred', namespace: 'team-a' },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from(PASSWORD).toString('base64') },
      stringData: { password: PASSWORD },
    };
    logger.info(secret, 'top level');
    logger.info({ secret }, 'one down');
    logger.info({ review: { request: { object: secret } } }, 'three down');
    expect(text()).not.toContain(PASSWORD);
    expect(text()).not.toContain(Buffer.from(PASSWORD).toString('base64'));
    const [top, one, three] = lines();
    expect(top!.data).toBe('[redacted]');
    expect(one!.secret).toMatchObject({ metadata: { name: 'regcred', namespace: 'team-a' }, data: '[redacted]', stringData: '[redacted]' });
    expect(three!.review.request.object.data).toBe('[redacted]');
  });

  it('hides private keys, tokens, registry credentials and auth headers', () => {
    const { logger, lines, text } = capture();
    logger.info({ key: PEM }, 'pem under key');
    logger.info({ serving: { cert: 'CERT', key: PEM }, ca: { privateKey: PEM } }, 'key pair');
    logger.info({ caKey: PEM, token: TOKEN }, 'flat');
    logger.info({ config: { auths: { 'registry.example.com': { username: 'u', password: PASSWORD } } } }, 'docker config');
    logger.info({ pull: { image: 'nginx', auth: { username: 'u', password: PASSWORD, registryToken: TOKEN } } }, 'cri auth');
    logger.info({ req: { headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' } } }, 'request');
    expect(text()).not.toContain('PRIVATE KEY');
    expect(text()).not.toContain(PASSWORD);
    expect(text()).not.toContain(TOKEN);
    const l = lines();
    expect(l[0]!.key).toBe('[redacted]');
    expect(l[1]!.serving).toEqual({ cert: 'CERT', key: '[redacted]' });
    expect(l[3]!.config.auths).toBe('[redacted]');
    expect(l[4]!.pull).toEqual({ image: 'nginx', auth: '[redacted]' });
    expect(l[5]!.req.headers).toEqual({ authorization: '[redacted]', accept: 'application/json' });
  });

  it('keeps what is not secret: names, images, nested object keys', () => {
    const { logger, lines } = capture();
    logger.info(
      { key: 'kruise-daemon-config/team-a.regcred', job: 'team-a/prepull', image: 'nginx:1.9.1', nested: { key: 'ns/name' } },
      'ok',
    );
    expect(lines()[0]).toMatchObject({
      key: 'kruise-daemon-config/team-a.regcred',
      job: 'team-a/prepull',
      image: 'nginx:1.9.1',
      nested: { key: 'ns/name' },
    });
  });
});
