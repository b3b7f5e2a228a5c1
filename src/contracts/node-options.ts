/**
 * V8 limits for the controller-manager container, passed as NODE_OPTIONS by the install manifests.
 * Node's defaults size the heap for the machine, not the container: with them the controller held
 * 283 MiB RSS for 10,000 cached pods (87 MiB of heap mostly uncollected garbage); with these, 137 MiB
 * (bench/sidecarterminator.bench.ts). Cached pods are slimmed to ~0.7 KiB each, so 128 MiB of old space
 * leaves room for several times that.
 */
export const MANAGER_NODE_OPTIONS = '--max-semi-space-size=2 --max-old-space-size=128';

/**
 * glibc malloc arenas for the controller-manager container (MALLOC_ARENA_MAX), passed by the install
 * manifests next to NODE_OPTIONS. glibc gives threads that allocate their own arenas (up to 8 per core);
 * Node's V8 and libuv worker threads each touch one and keep its pages. Two arenas hold the idle
 * manager 3.3 MiB lower (bench/memory-peer.bench.ts); the JavaScript runs on one thread, so there is no
 * lock contention to lose.
 */
export const MANAGER_MALLOC_ARENA_MAX = '2';
