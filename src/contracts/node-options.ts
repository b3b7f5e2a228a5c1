import { quantityValue } from './quantity.js';

/**
 * V8 limits for the controller-manager container, passed as NODE_OPTIONS by the install manifests.
 * Node's defaults size the heap for the machine, not the container: with them the controller held
 * 283 MiB RSS for 10,000 cached pods (87 MiB of heap mostly uncollected garbage); with a 128 MiB old space,
 * 137 MiB (bench/sidecarterminator.bench.ts). A cached Running pod with two containers costs about 3.3 KiB of
 * heap with every controller's declared fields (bench/cache-memory.bench.ts), so the old space follows the
 * container's memory limit (managerNodeOptions): the limit less MANAGER_NATIVE_HEADROOM_MIB for what is not V8's
 * old space (code, new space, sockets, malloc arenas), never less than MANAGER_MIN_HEAP_MIB.
 */
export const MANAGER_NATIVE_HEADROOM_MIB = 384;
/** The smallest old space the manager is given, whatever its memory limit. */
export const MANAGER_MIN_HEAP_MIB = 128;

/**
 * V8's largest semi-space for the manager, MiB. A (re)start lists every pod in pages of 500 and keeps a few fields
 * of each: nearly all it parses is garbage a page later. With 2 MiB semi-spaces that garbage outlived the scavenges
 * and was promoted, and the old-space collections it caused took half the start-up's CPU; with 32 MiB a restart
 * with 30,000 Running pods took 5.5 CPU s instead of 7.9–10.9, at the same RSS (277–302 MiB), and the idle RSS did
 * not move (96–108 MiB, same run). The new space is part of MANAGER_NATIVE_HEADROOM_MIB.
 */
export const MANAGER_SEMI_SPACE_MIB = 32;

/** The manager's NODE_OPTIONS for a container memory limit (a Kubernetes quantity); none: V8 sizes the old space for the node. */
export function managerNodeOptions(memoryLimit: string | undefined): string {
  const semiSpace = `--max-semi-space-size=${MANAGER_SEMI_SPACE_MIB}`;
  if (memoryLimit === undefined) return semiSpace;
  const mib = Math.floor(quantityBytes(memoryLimit) / 2 ** 20);
  return `${semiSpace} --max-old-space-size=${Math.max(MANAGER_MIN_HEAP_MIB, mib - MANAGER_NATIVE_HEADROOM_MIB)}`;
}

/** A Kubernetes quantity (`512Mi`, `1G`, `129e6`, `1.5Gi`) of bytes as a number; throws on anything else. */
export function quantityBytes(q: string): number {
  const bytes = quantityValue(q);
  if (bytes === undefined || bytes < 0) throw new Error(`"${q}" is not a Kubernetes quantity (e.g. 512Mi, 1Gi, 1G, 129e6)`);
  return bytes;
}

/**
 * The controller-manager's default memory limit. Upstream's 512Mi gives a 128 MiB old space, which a manager that
 * caches every pod outgrows near 30,000 Running pods: it then crash-loops at start-up (heap out of memory,
 * bench/memory-peer.bench.ts at 50,000). 1Gi gives 640 MiB: 100,000 Running pods on 1,000 nodes ran at 605 MiB RSS
 * (upstream kruise-manager 2,827 MiB). The request stays 256Mi: what a small cluster's manager uses is what the
 * scheduler reserves.
 */
export const MANAGER_DEFAULT_MEMORY_LIMIT = '1Gi';

/** The manager's NODE_OPTIONS with the default memory limit, as the benchmarks run it. */
export const MANAGER_NODE_OPTIONS = managerNodeOptions(MANAGER_DEFAULT_MEMORY_LIMIT);

/**
 * glibc malloc arenas for the controller-manager container (MALLOC_ARENA_MAX), passed by the install
 * manifests next to NODE_OPTIONS. glibc gives threads that allocate their own arenas (up to 8 per core);
 * Node's V8 and libuv worker threads each touch one and keep its pages. Two arenas hold the idle
 * manager 3.3 MiB lower (bench/memory-peer.bench.ts); the JavaScript runs on one thread, so there is no
 * lock contention to lose.
 */
export const MANAGER_MALLOC_ARENA_MAX = '2';
