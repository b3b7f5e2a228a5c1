// Secrets never reach a log line, whatever the case or depth of the field holding them, and wherever a
// secret-looking value turns up (error messages, the message itself, unrelated fields).
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../../src/runtime/core/log.js';
import { CENSOR, isSecretField, redactSecrets, redactString } from '../../../../src/runtime/core/redact.js';

const PEM = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const PASSWORD = 'hunter2-do-not-log';
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJl';
const DOCKER_JSON = JSON.stringify({ auths: { 'registry.example.com': { auth: Buffer.from(`u:${PASSWORD}`).toString('base64') } } });

function capture() {
  const out: string[] = [];
  const logger = createLogger({ level: 'debug', name: 'test', destination: { write: (s: string) => void out.push(s) } });
  return { logger, text: () => out.join(''), lines: () => out.map((l) => JSON.parse(l)) };
}

describe('isSecretField', () => {
  it.each([
    ['Authorization', true],
    ['AUTHORIZATION', true],
    ['Proxy-Authorization', true],
    ['StringData', true],
    ['Password', true],
    ['db_password', true],
    ['registry_token', true],
    ['AccessToken', true],
    ['clientSecret', true],
    ['X-Api-Key', false],
    ['api_key', true],
    ['secret', false],
    ['image', false],
    ['name', false],
    ['tokenCount', false],
  ])('%s -> %s', (name, secret) => expect(isSecretField(name)).toBe(secret));
});

describe('redactString', () => {
  it.each([
    ['a PEM private key inside an error message', `bad key: ${PEM} (rejected)`, /^bad key: \[redacted\]/],
    ['a docker config JSON', DOCKER_JSON, /^\[redacted\]$/],
    ['a base64 docker config', Buffer.from(DOCKER_JSON).toString('base64'), /^\[redacted\]$/],
    ['a bearer header line', `GET / failed: Authorization: Bearer ${JWT}`, /Authorization: Bearer \[redacted\]$/],
    ['a basic credential', 'proxy says Basic dTpwYXNzd29yZA==', /Basic \[redacted\]$/],
    ['a bare JWT', `token was ${JWT}`, /^token was \[redacted\]$/],
  ])('%s', (_name, input, want) => {
    const out = redactString(input);
    expect(out).toMatch(want);
    expect(out).not.toContain(PASSWORD);
    expect(out).not.toContain('PRIVATE KEY');
    expect(out).not.toContain(JWT);
  });

  it('keeps ordinary text', () => {
    expect(redactString('pull of nginx:1.25 failed: manifest unknown')).toBe('pull of nginx:1.25 failed: manifest unknown');
  });
});

describe('redactSecrets', () => {
  it('censors by field name at any depth and any case', () => {
    const deep = { a: { b: { c: { d: { e: { f: { Password: PASSWORD, StringData: { p: PASSWORD }, image: 'x' } } } } } } };
    const out = JSON.stringify(redactSecrets(deep));
    expect(out).not.toContain(PASSWORD);
    expect(out).toContain('"image":"x"');
  });

  it('handles arrays, buffers, errors and cycles without throwing', () => {
    const cyc: Record<string, unknown> = { name: 'n' };
    cyc.self = cyc;
    const out = redactSecrets({
      list: [{ Authorization: 'x' }],
      buf: Buffer.from(PASSWORD),
      err: new Error(`Bearer ${JWT}`),
      cyc,
    }) as Record<string, any>;
    expect(out.list).toEqual([{ Authorization: CENSOR }]);
    expect(out.buf).toBe(CENSOR);
    expect(out.err.message).toBe(`Bearer ${CENSOR}`);
    expect(out.cyc.self).toBe('[circular]');
  });

  it('bounds the work on a huge or deep object', () => {
    let deep: Record<string, unknown> = { leaf: PASSWORD };
    for (let i = 0; i < 10_000; i++) deep = { d: deep };
    expect(JSON.stringify(redactSecrets(deep))).toContain('[truncated]');
  });
});

describe('the runtime logger', () => {
  it('hides secrets under upper-case keys deeper than before', () => {
    const { logger, text } = capture();
    logger.info({ request: { headers: { Authorization: `Bearer ${JWT}`, Cookie: 'sid=1' } } }, 'request');
    logger.info({ a: { b: { c: { d: { e: { Password: PASSWORD } } } } } }, 'deep');
    logger.info({ review: { request: { object: { kind: 'Secret', metadata: { name: 's' }, Data: { x: PASSWORD } } } } }, 'upper-case data');
    expect(text()).not.toContain(PASSWORD);
    expect(text()).not.toContain(JWT);
    expect(text()).not.toContain('sid=1');
  });

  it('hides secret-looking values in any field, the message and format arguments', () => {
    const { logger, text } = capture();
    logger.warn({ err: `x509: bad key ${PEM}` }, 'cert failed');
    logger.warn({ annotation: DOCKER_JSON }, 'odd annotation');
    logger.warn(`pull failed with Bearer ${JWT}`);
    logger.warn('config %s', DOCKER_JSON);
    logger.child({ component: 'x', token: JWT }).info('child');
    logger.error(new Error(`boom: ${PEM}`));
    expect(text()).not.toContain('PRIVATE KEY');
    expect(text()).not.toContain(PASSWORD);
    expect(text()).not.toContain(JWT);
    expect(text()).not.toContain(Buffer.from(`u:${PASSWORD}`).toString('base64'));
  });
});
