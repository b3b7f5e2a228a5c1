import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDockerfile } from '../../../src/image/dockerfile.js';
import {
  ENTRYPOINT_PATH,
  IMAGE_ENTRYPOINT,
  IMAGE_ENV,
  IMAGE_NAME,
  IMAGE_USER,
  IMAGE_WORKDIR,
  NODE_PATH,
  NONROOT,
} from '../../../src/image/spec.js';
import { RuntimeImage } from '../../../src/install/image.js';
import { RUNTIME_UID } from '../../../src/install/pod-security.js';

const repoRoot = resolve(import.meta.dirname, '../../..');
const dockerfile = parseDockerfile(readFileSync(resolve(repoRoot, 'Dockerfile'), 'utf8'));

describe('root Dockerfile matches the offline image (src/image/spec.ts)', () => {
  it('runs on the distroless Node 24 nonroot image, whose node sits where the bundle shebang points', () => {
    expect(dockerfile.base).toBe('gcr.io/distroless/nodejs24-debian12:nonroot');
    // distroless nodejs images keep Node at /nodejs/bin/node; the offline image copies it to the same place.
    expect(NODE_PATH).toBe('/nodejs/bin/node');
  });

  it('declares the same entrypoint, user, working directory and environment', () => {
    expect(dockerfile.entrypoint).toEqual(IMAGE_ENTRYPOINT);
    expect(dockerfile.user).toBe(IMAGE_USER);
    expect(dockerfile.workdir).toBe(IMAGE_WORKDIR);
    const env = Object.fromEntries(IMAGE_ENV.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
    expect(dockerfile.env).toEqual(env);
  });

  it('ships exactly the application files the offline build stages (same code path)', () => {
    expect(dockerfile.copies).toEqual(['--from=build /stage/ /']);
    expect(dockerfile.runs).toContain('node node_modules/tsx/dist/cli.mjs src/image/build.ts --stage-app /stage');
  });
});

describe('install manifests run what the image provides', () => {
  it('same non-root uid, repository name and entrypoint name', () => {
    expect(RUNTIME_UID).toBe(NONROOT.uid);
    expect(IMAGE_USER).toBe(`${RUNTIME_UID}:${RUNTIME_UID}`);
    expect(RuntimeImage.bundled({ registry: 'registry.example.com/platform', tag: '1.2.3' }).reference).toBe(
      `registry.example.com/platform/${IMAGE_NAME}:1.2.3`,
    );
    // The Deployment/DaemonSet say `command: [cdk8s-kruise]`, found through the image PATH.
    expect(ENTRYPOINT_PATH.split('/').pop()).toBe('cdk8s-kruise');
    expect(IMAGE_ENV).toContain('PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
    expect(ENTRYPOINT_PATH.startsWith('/usr/local/bin/')).toBe(true);
  });
});

describe('parseDockerfile', () => {
  it('reads the last stage, continuation lines and quoted ENV values', () => {
    const parsed = parseDockerfile(
      [
        'FROM a AS build',
        'USER 0',
        'RUN make \\',
        '  all',
        'FROM b:1',
        '# comment',
        'ENV A=1 \\',
        '    B="two words"',
        'ENTRYPOINT ["/x", "y"]',
      ].join('\n'),
    );
    expect(parsed).toEqual({
      base: 'b:1',
      user: undefined,
      workdir: undefined,
      entrypoint: ['/x', 'y'],
      env: { A: '1', B: 'two words' },
      copies: [],
      runs: ['make all'],
    });
  });

  it('rejects a shell-form ENTRYPOINT with the line number', () => {
    expect(() => parseDockerfile('FROM a\nENTRYPOINT /x y\n')).toThrow('Dockerfile line 2: ENTRYPOINT must use the exec form');
  });
});
