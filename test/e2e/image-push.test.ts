// `cdk8s-kruise image build --push` against real registries (Debian's docker-registry, distribution 2.8):
// one with htpasswd (Basic) auth, where the command must stop before building when the credentials are
// missing, wrong or unreadable; and one with token auth, where a token service of this test signs real JWTs
// the registry verifies (the Bearer flow registries such as ghcr.io and Docker Hub use).
import { execFile, type ChildProcess } from 'node:child_process';
import { createSign, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImage } from '../../src/image/oci.js';
import { parsePushReference, readDockerConfig } from '../../src/image/registry-auth.js';
import { pushContent } from '../../src/image/registry-push.js';
import { TestRegistry } from '../cri-harness/registry.js';
import { freePort, spawnLogged, stopProcess, waitFor } from '../cri-harness/util.js';

const run = promisify(execFile);
const repoRoot = path.resolve(import.meta.dirname, '../..');
const USER = { username: 'alice', password: 's3cret' };

let work: string;
let basic: TestRegistry;
let tokenRegistry: { host: string; proc: ChildProcess; server: Server; requests: string[] };

const b64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/** A token service: checks Basic credentials, grants what is asked, signs an RS256 JWT with x5c (distribution's format). */
function tokenService(key: string, certDer: Buffer, requests: string[]): Server {
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const auth = req.headers.authorization ?? '';
    requests.push(`${url.searchParams.get('scope')} ${auth.split(' ')[0] || 'anonymous'}`);
    const [user, pass] = Buffer.from(auth.replace(/^Basic /, ''), 'base64')
      .toString()
      .split(':');
    if (!auth.startsWith('Basic ') || user !== USER.username || pass !== USER.password) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"details":"wrong user name or password"}');
      return;
    }
    const [, name, actions] = /^repository:([^:]+):(.+)$/.exec(url.searchParams.get('scope') ?? '') ?? [];
    const now = Math.floor(Date.now() / 1000);
    const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', x5c: [certDer.toString('base64')] }));
    const claims = b64url(
      JSON.stringify({
        iss: 'cdk8s-kruise-test',
        sub: user,
        aud: url.searchParams.get('service'),
        exp: now + 300,
        nbf: now - 10,
        iat: now,
        jti: randomUUID(),
        access: name ? [{ type: 'repository', name, actions: actions!.split(',') }] : [],
      }),
    );
    const signature = createSign('RSA-SHA256').update(`${header}.${claims}`).sign(key);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: `${header}.${claims}.${b64url(signature)}` }));
  });
}

async function startTokenRegistry(dir: string) {
  mkdirSync(path.join(dir, 'data'), { recursive: true });
  await run(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=token-signer', '-keyout', 'key.pem', '-out', 'cert.pem'],
    {
      cwd: dir,
    },
  );
  const { stdout: der } = await run('openssl', ['x509', '-in', 'cert.pem', '-outform', 'DER'], { cwd: dir, encoding: 'buffer' });
  const requests: string[] = [];
  const server = tokenService(readFileSync(path.join(dir, 'key.pem'), 'utf8'), der, requests);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const tokenPort = (server.address() as { port: number }).port;
  const port = await freePort();
  writeFileSync(
    path.join(dir, 'config.yml'),
    `version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: ${path.join(dir, 'data')}\n` +
      `http:\n  addr: 127.0.0.1:${port}\nauth:\n  token:\n    realm: http://127.0.0.1:${tokenPort}/token\n    service: test-registry\n` +
      `    issuer: cdk8s-kruise-test\n    rootcertbundle: ${path.join(dir, 'cert.pem')}\n`,
  );
  const proc = spawnLogged('docker-registry', ['serve', path.join(dir, 'config.yml')], path.join(dir, 'registry.log'));
  const host = `127.0.0.1:${port}`;
  await waitFor(`token-auth registry on ${host}`, async () => (await fetch(`http://${host}/v2/`).catch(() => undefined))?.status === 401);
  return { host, proc, server, requests };
}

function dockerConfig(name: string, content: string): string {
  const file = path.join(work, `${name}.json`);
  writeFileSync(file, content);
  return file;
}

const auths = (host: string, user: string, pass: string) =>
  JSON.stringify({ auths: { [host]: { auth: Buffer.from(`${user}:${pass}`).toString('base64') } } });

/** The CLI from the checkout, as a user runs it; returns exit code and output. */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(path.join(repoRoot, 'node_modules', '.bin', 'tsx'), ['src/cli/main.ts', ...args], {
      cwd: repoRoot,
      env: { ...process.env, NO_COLOR: '1' },
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: err.code ?? -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
  }
}

/** A small image (two files), enough to exercise every call of a push. */
async function smallImage() {
  const created = new Date(1_700_000_000_000);
  const image = await buildImage({
    name: 'push-test',
    tag: '1',
    architecture: 'amd64',
    created,
    runtime: { User: '65532:65532', Entrypoint: ['/bin/x'], Env: [], WorkingDir: '/', Labels: {} },
    layers: [
      { entries: [{ kind: 'file', path: '/bin/x', mode: 0o755, content: Buffer.from(`#!/x ${randomUUID()}\n`) }], createdBy: 'test' },
    ],
  });
  const blobs = new Map<string, Buffer>([[image.config.digest, image.blobs.get(image.config.digest)!]]);
  for (const l of image.layers) blobs.set(l.digest, l.blob);
  return {
    digest: image.manifestDigest,
    content: { manifest: image.blobs.get(image.manifestDigest)!, manifestMediaType: 'application/vnd.oci.image.manifest.v1+json', blobs },
  };
}

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'cdk8s-kruise-image-push-'));
  basic = await TestRegistry.create(path.join(work, 'basic'), { auth: USER });
  tokenRegistry = await startTokenRegistry(path.join(work, 'token'));
});

afterAll(async () => {
  await basic?.stop();
  if (tokenRegistry) {
    await stopProcess(tokenRegistry.proc, 5000);
    tokenRegistry.server.close();
  }
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('image build --push stops before building when the push cannot succeed', () => {
  it('no credentials for a registry that asks for them: names docker login', async () => {
    const r = await cli([
      'image',
      'build',
      '--push',
      `${basic.host}/platform/cdk8s-kruise:0.1.0`,
      '--docker-config',
      dockerConfig('none', '{}'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${basic.host} asks for a user name and password; none in docker config (docker login ${basic.host})`);
    expect(r.stderr).not.toMatch(/building|fetching/);
  });

  it('a wrong password: the registry 401 is reported with its answer', async () => {
    const r = await cli([
      'image',
      'build',
      '--push',
      `${basic.host}/platform/cdk8s-kruise:0.1.0`,
      '--docker-config',
      dockerConfig('wrong', auths(basic.host, 'alice', 'nope')),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /refused POST \/v2\/platform\/cdk8s-kruise\/blobs\/uploads\/ with the credentials from docker config \(401: .*UNAUTHORIZED/,
    );
  });

  it('an unreadable docker config and a bad reference are usage errors naming the problem', async () => {
    const broken = await cli(['image', 'build', '--push', `${basic.host}/p/k:1`, '--docker-config', dockerConfig('broken', '{"auths": {')]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/docker config .*broken\.json is not valid JSON/);
    const bad = await cli(['image', 'build', '--push', `${basic.host}/Platform/K`]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/push target .* is not an image reference: the repository name "Platform\/K" has upper case/);
    const nothing = await cli(['image', 'build']);
    expect(nothing.stderr).toContain('nothing to do: give --push <reference>, --output <path>, or both');
  });

  it('an unreachable registry is reported as a connection error, not as a refusal', async () => {
    const port = await freePort();
    const r = await cli(['image', 'build', '--push', `127.0.0.1:${port}/p/k:1`, '--docker-config', dockerConfig('none2', '{}')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `cannot reach http://127.0.0.1:${port} for POST /v2/p/k/blobs/uploads/: ECONNREFUSED (plain HTTP after TLS failed: ECONNREFUSED`,
    );
  });
});

describe('the distribution API push', () => {
  it('Basic auth: pushes, skopeo reads back the digest, a second push uploads nothing', async () => {
    const { digest, content } = await smallImage();
    const ref = parsePushReference(`${basic.host}/platform/push-test:1`);
    const config = readDockerConfig(dockerConfig('basic-good', auths(basic.host, USER.username, USER.password)));
    const first = await pushContent(content, ref, { config });
    expect(first).toMatchObject({ digest, uploaded: 2, skipped: 0 });
    const { stdout } = await run('skopeo', [
      'inspect',
      '--tls-verify=false',
      '--creds',
      `${USER.username}:${USER.password}`,
      `docker://${basic.host}/platform/push-test:1`,
    ]);
    expect((JSON.parse(stdout) as { Digest: string }).Digest).toBe(digest);
    expect(await pushContent(content, ref, { config })).toMatchObject({ digest, uploaded: 0, skipped: 2 });
  });

  it('Bearer tokens: fetched from the realm with the docker config credentials, scoped to the repository, accepted by the registry', async () => {
    const { digest, content } = await smallImage();
    const ref = parsePushReference(`${tokenRegistry.host}/team/push-test:1`);
    tokenRegistry.requests.length = 0;
    const result = await pushContent(content, ref, {
      config: readDockerConfig(dockerConfig('token-good', auths(tokenRegistry.host, USER.username, USER.password))),
    });
    expect(result).toMatchObject({ digest, uploaded: 2 });
    expect(tokenRegistry.requests).toEqual(['repository:team/push-test:pull,push Basic']);
    const { stdout } = await run('skopeo', [
      'inspect',
      '--tls-verify=false',
      '--creds',
      `${USER.username}:${USER.password}`,
      `docker://${tokenRegistry.host}/team/push-test:1`,
    ]);
    expect((JSON.parse(stdout) as { Digest: string }).Digest).toBe(digest);
  });

  it('Bearer tokens: a refused token request names the token service and the credentials', async () => {
    const { content } = await smallImage();
    const ref = parsePushReference(`${tokenRegistry.host}/team/push-test:2`);
    await expect(pushContent(content, ref, { config: readDockerConfig(dockerConfig('token-none', '{}')) })).rejects.toThrow(
      /refused a push token for team\/push-test \(401: .*wrong user name or password.*\); no credentials for 127\.0\.0\.1:\d+ in docker config/,
    );
    await expect(
      pushContent(content, ref, { config: readDockerConfig(dockerConfig('token-wrong', auths(tokenRegistry.host, 'alice', 'nope'))) }),
    ).rejects.toThrow(/refused a push token .*; check the docker config credentials/);
  });

  it('a push target pinned to another digest is refused before anything is sent', async () => {
    const { content } = await smallImage();
    const other = `sha256:${'0'.repeat(64)}`;
    await expect(
      pushContent(content, parsePushReference(`${basic.host}/platform/push-test@${other}`), {
        config: readDockerConfig(dockerConfig('x', '{}')),
      }),
    ).rejects.toThrow(`the push target pins ${other}, but the image's manifest digest is`);
  });
});

describe('TLS', () => {
  /** A registry on loopback with a certificate from a CA of this test (TLS is tried before plain HTTP there). */
  async function tlsRegistry(dir: string): Promise<{ host: string; ca: string; proc: ChildProcess }> {
    mkdirSync(path.join(dir, 'data'), { recursive: true });
    const ssl = (args: string[]) => run('openssl', args, { cwd: dir });
    await ssl([
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=test-ca',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
    ]);
    await ssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'tls.key', '-out', 'tls.csr']);
    writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n');
    await ssl([
      'x509',
      '-req',
      '-in',
      'tls.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      'san.ext',
      '-out',
      'tls.pem',
    ]);
    const port = await freePort();
    writeFileSync(
      path.join(dir, 'config.yml'),
      `version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: ${path.join(dir, 'data')}\n` +
        `http:\n  addr: 127.0.0.1:${port}\n  tls:\n    certificate: ${path.join(dir, 'tls.pem')}\n    key: ${path.join(dir, 'tls.key')}\n`,
    );
    const proc = spawnLogged('docker-registry', ['serve', path.join(dir, 'config.yml')], path.join(dir, 'registry.log'));
    const host = `127.0.0.1:${port}`;
    await waitFor(`TLS registry on ${host}`, async () => {
      const { stdout } = await run('curl', [
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        '--cacert',
        path.join(dir, 'ca.pem'),
        `https://${host}/v2/`,
      ]).catch(() => ({ stdout: '' }));
      return stdout === '200';
    });
    return { host, ca: path.join(dir, 'ca.pem'), proc };
  }

  it('pushes over TLS verified against NODE_EXTRA_CA_CERTS, and names the certificate problem without it', async () => {
    const dir = path.join(work, 'tls');
    const registry = await tlsRegistry(dir);
    try {
      // A process of its own: Node reads NODE_EXTRA_CA_CERTS when it starts.
      const script = path.join(dir, 'push.mts');
      writeFileSync(
        script,
        `import { buildImage } from ${JSON.stringify(path.join(repoRoot, 'src/image/oci.ts'))};\n` +
          `import { parsePushReference } from ${JSON.stringify(path.join(repoRoot, 'src/image/registry-auth.ts'))};\n` +
          `import { pushContent } from ${JSON.stringify(path.join(repoRoot, 'src/image/registry-push.ts'))};\n` +
          "const image = await buildImage({ name: 't', tag: '1', architecture: 'amd64', created: new Date(0), runtime: { User: '0', Entrypoint: ['/x'], Env: [], WorkingDir: '/', Labels: {} }, layers: [{ entries: [{ kind: 'file', path: '/x', mode: 0o755, content: Buffer.from('x') }], createdBy: 't' }] });\n" +
          'const blobs = new Map([[image.config.digest, image.blobs.get(image.config.digest)], ...image.layers.map((l) => [l.digest, l.blob])]);\n' +
          `const r = await pushContent({ manifest: image.blobs.get(image.manifestDigest), manifestMediaType: 'application/vnd.oci.image.manifest.v1+json', blobs }, parsePushReference('${registry.host}/tls/push-test:1'), { config: { auths: new Map(), helpers: new Map() } });\n` +
          'console.log(JSON.stringify({ pushed: r.digest, built: image.manifestDigest }));\n',
      );
      const tsx = path.join(repoRoot, 'node_modules', '.bin', 'tsx');
      const ok = await run(tsx, [script], { cwd: repoRoot, env: { ...process.env, NODE_EXTRA_CA_CERTS: registry.ca } });
      const { pushed, built } = JSON.parse(ok.stdout) as { pushed: string; built: string };
      expect(pushed).toBe(built);
      // skopeo reads the CA from a directory of *.crt files (and takes *.key files there for client certificates).
      mkdirSync(path.join(dir, 'skopeo-certs'));
      writeFileSync(path.join(dir, 'skopeo-certs', 'ca.crt'), readFileSync(registry.ca));
      const { stdout } = await run('skopeo', [
        'inspect',
        '--cert-dir',
        path.join(dir, 'skopeo-certs'),
        `docker://${registry.host}/tls/push-test:1`,
      ]);
      expect((JSON.parse(stdout) as { Digest: string }).Digest).toBe(built);
      const env = { ...process.env };
      delete env.NODE_EXTRA_CA_CERTS;
      const refused = await run(tsx, [script], { cwd: repoRoot, env }).then(
        () => '',
        (e: { stderr?: string }) => e.stderr ?? '',
      );
      expect(refused).toMatch(
        /plain HTTP after TLS failed: (UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY); a private CA needs NODE_EXTRA_CA_CERTS/,
      );
    } finally {
      await stopProcess(registry.proc, 5000);
    }
  });
});
