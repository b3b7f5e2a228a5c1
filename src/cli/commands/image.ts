import type { Command } from 'commander';
import { guarded, usageExitCodes } from '../report.js';
import type { ImageBuildOptions } from './image-run.js';

export function register(program: Command): void {
  const image = program
    .command('image')
    .description('The runtime image (controller-manager and daemon): build it and push it to your registry');
  const cmd = image
    .command('build')
    .description('Build the runtime image of this cdk8s-kruise version (same digest as the project build) and push or write it')
    .option(
      '--push <reference>',
      'push to this registry reference over the OCI distribution API, e.g. registry.example/platform/cdk8s-kruise:0.1.0',
    )
    .option('-o, --output <path>', 'also write the image: an OCI image layout directory, or a docker-archive when the path ends in .tar')
    .option('--insecure', 'plain HTTP to the registry (a loopback registry falls back to plain HTTP by itself when TLS fails)')
    .option('--docker-config <file>', 'credentials file (default: $DOCKER_CONFIG/config.json, else ~/.docker/config.json)')
    .option('--sbom <file>', 'write an SPDX 2.3 JSON SBOM of the image; with --push it is attached to the image as an OCI artifact')
    .option(
      '--expect-digest <digest>',
      'refuse to write or push unless the image has this manifest digest (a release checks the repository build)',
    )
    .option('--json', 'print the result as JSON on stdout')
    .option('-q, --quiet', 'no progress lines')
    .addHelpText(
      'after',
      '\nNeeds a Linux host with ldd, dpkg-query, strip (binutils) and the CA bundle (Debian/Ubuntu: binutils, ca-certificates),\n' +
        'npm (fetches the Node binary the image ships, checked by hash) and no container engine. The base layer is built\n' +
        'from that Node and the host libraries it links; the app layer comes from this package as built.\n' +
        'Then point KruiseRuntime at the pushed image: RuntimeImage.bundled({ registry: "registry.example/platform", digest }).',
    )
    .action(guarded(async (opts: ImageBuildOptions) => (await import('./image-run.js')).imageBuild(opts)));
  usageExitCodes(cmd);
  usageExitCodes(image);
}
