import { gunzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { buildLayer, completeAndSort, normalizeImagePath, writeTar, type LayerEntry } from '../../../src/image/layer.js';
import { canonicalJson } from '../../../src/image/oci.js';
import { parseLdd } from '../../../src/image/rootfs.js';
import { resolveSourceDateEpoch } from '../../../src/image/build.js';

const mtime = new Date(1_700_000_000_000);
const entries: LayerEntry[] = [
  { kind: 'file', path: '/usr/local/bin/tool', mode: 0o755, content: Buffer.from('#!/bin/true\n') },
  { kind: 'dir', path: '/home/nonroot', mode: 0o700, owner: { uid: 65532, gid: 65532 } },
  { kind: 'symlink', path: '/bin/tool', target: '/usr/local/bin/tool' },
  { kind: 'dir', path: '/tmp', mode: 0o1777 },
  { kind: 'file', path: '/etc/passwd', mode: 0o644, content: Buffer.from('root:x:0:0::/:/sbin/nologin\n') },
];

async function headers(tarBytes: Buffer): Promise<tar.Header[]> {
  const out: tar.Header[] = [];
  const extract = tar.extract();
  const done = (async () => {
    for await (const entry of extract) {
      out.push(entry.header);
      entry.resume();
    }
  })();
  extract.end(tarBytes);
  await done;
  return out;
}

describe('deterministic layer tar', () => {
  it('adds parent directories and orders entries by path bytes, whatever the input order', () => {
    const a = completeAndSort(entries).map((e) => e.path);
    const b = completeAndSort([...entries].reverse()).map((e) => e.path);
    expect(a).toEqual(b);
    expect(a).toEqual([
      '/bin',
      '/bin/tool',
      '/etc',
      '/etc/passwd',
      '/home',
      '/home/nonroot',
      '/tmp',
      '/usr',
      '/usr/local',
      '/usr/local/bin',
      '/usr/local/bin/tool',
    ]);
  });

  it('gives byte-identical tars and gzip blobs for the same entries in any order', async () => {
    const one = await buildLayer(entries, mtime);
    const two = await buildLayer([...entries].reverse(), mtime);
    expect(two.digest).toBe(one.digest);
    expect(two.diffId).toBe(one.diffId);
    expect(gunzipSync(one.blob).length).toBe(one.tarSize);
    const other = await buildLayer(entries, new Date(mtime.getTime() + 1000));
    expect(other.diffId).not.toBe(one.diffId);
  });

  it('pins mtime, owners and modes; only what must belong to nonroot does', async () => {
    const { bytes } = await writeTar(entries, mtime);
    const byName = new Map((await headers(bytes)).map((h) => [h.name, h]));
    for (const h of byName.values()) {
      expect(h.mtime.getTime()).toBe(mtime.getTime());
      expect([h.uname, h.gname]).toEqual(['', '']);
      if (h.name === 'home/nonroot/') expect([h.uid, h.gid]).toEqual([65532, 65532]);
      else expect([h.uid, h.gid]).toEqual([0, 0]);
    }
    expect(byName.get('tmp/')?.mode).toBe(0o1777);
    expect(byName.get('home/nonroot/')?.mode).toBe(0o700);
    expect(byName.get('usr/local/bin/tool')?.mode).toBe(0o755);
    expect(byName.get('bin/tool')).toMatchObject({ type: 'symlink', linkname: '/usr/local/bin/tool' });
    expect(byName.get('usr/')).toMatchObject({ type: 'directory', mode: 0o755 });
  });

  it('rejects duplicates, relative or escaping paths, and files where a directory is needed', () => {
    expect(() => completeAndSort([entries[0]!, entries[0]!])).toThrow('image path "/usr/local/bin/tool" is added twice');
    expect(() => normalizeImagePath('etc/passwd')).toThrow('must be absolute');
    expect(() => normalizeImagePath('/etc/../root')).toThrow('must not contain "." or ".." segments');
    expect(() =>
      completeAndSort([
        { kind: 'file', path: '/a', mode: 0o644, content: Buffer.alloc(0) },
        { kind: 'file', path: '/a/b', mode: 0o644, content: Buffer.alloc(0) },
      ]),
    ).toThrow('image path "/a" is a file but "/a/b" needs it to be a directory');
  });
});

describe('canonicalJson', () => {
  it('sorts object keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 2 } })).toBe('{"a":{"c":2,"d":[3,{"y":2,"z":1}]},"b":1}');
  });
});

describe('parseLdd', () => {
  it('keeps resolved libraries and the interpreter, skips the vDSO', () => {
    const libs = parseLdd(
      [
        '\tlinux-vdso.so.1 (0x00007ffd)',
        '\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f00)',
        '\t/lib64/ld-linux-x86-64.so.2 (0x00007f01)',
        '',
      ].join('\n'),
      'node',
    );
    expect(libs.map((l) => l.path)).toEqual(['/lib/x86_64-linux-gnu/libc.so.6', '/lib64/ld-linux-x86-64.so.2']);
  });

  it('fails naming the missing library', () => {
    expect(() => parseLdd('\tlibfoo.so.1 => not found\n', '/x/node')).toThrow(
      '/x/node needs libfoo.so.1, which is not installed on this host',
    );
  });
});

describe('resolveSourceDateEpoch', () => {
  it('prefers SOURCE_DATE_EPOCH and rejects a malformed one', () => {
    expect(resolveSourceDateEpoch('.', { SOURCE_DATE_EPOCH: '1234' })).toBe(1234);
    expect(() => resolveSourceDateEpoch('.', { SOURCE_DATE_EPOCH: '2024-01-01' })).toThrow(
      'SOURCE_DATE_EPOCH="2024-01-01" must be a whole number',
    );
  });
});
