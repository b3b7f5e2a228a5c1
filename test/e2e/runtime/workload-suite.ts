// The frame of a workload controller's e2e suite (CloneSet, Advanced StatefulSet): API clients, the kinds' CRDs, the
// runtime's and the workloads' namespaces and a node for the pods; at the end, the controllers stopped, their last
// warnings shown, and every API call they made checked against src/contracts/permissions.ts.
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { expect } from 'vitest';
import type { KindDefinition } from '../../../src/api/registry.js';
import { adminKubeConfig, createNamespace, createNode } from '../../harness/index.js';
import type { LogLine } from './process.js';
import { accessCoverage, accessLogs, installCrds, type ControllerProcess, type CoverageReport } from './support.js';

export interface WorkloadSuite {
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly custom: CustomObjectsApi;
  readonly runtimeNs: string;
  /** The workloads' namespace. */
  readonly ns: string;
}

/** Installs the CRDs of `kinds` and creates the namespaces (`ns` from `nsPrefix`) and `node`. */
export async function setUpWorkloadSuite(kinds: readonly KindDefinition[], nsPrefix: string, node: string): Promise<WorkloadSuite> {
  const kc = adminKubeConfig();
  await installCrds(kinds);
  const runtimeNs = await createNamespace('kruise-system');
  const ns = await createNamespace(nsPrefix);
  await createNode(node);
  return {
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    runtimeNs,
    ns,
  };
}

/**
 * Stops `procs`, prints each one's last 20 log lines that `shown` picks (warnings and errors by default: they tell
 * why a case failed) and fails on an API call not declared for the runtime's namespace.
 */
export async function tearDownWorkloadSuite(
  procs: readonly ControllerProcess[],
  runtimeNs: string,
  shown: (l: LogLine) => boolean = (l) => l.level >= 40,
): Promise<CoverageReport> {
  await Promise.all(procs.map((p) => p.stop('SIGKILL')));
  for (const p of procs) for (const l of p.logs.filter(shown).slice(-20)) console.log('[controller]', JSON.stringify(l));
  const report = accessCoverage(accessLogs, new Set([runtimeNs]));
  expect(report.uncovered, 'API calls not declared in src/contracts/permissions.ts').toEqual([]);
  return report;
}
