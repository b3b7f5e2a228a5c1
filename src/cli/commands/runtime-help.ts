import { BUNDLED_RUNTIME_GATES, type FeatureGateName } from '../../contracts/index.js';
import type { RuntimeControllerPart, RuntimePart } from '../../runtime/core/parts.js';
import { DAEMON_CONTROLLER_PARTS } from '../../runtime/daemon/parts.js';
import { MANAGER_CONTROLLER_PARTS, MANAGER_WEBHOOK_PARTS } from '../../runtime/manager/parts.js';

// The descriptions and help of `controller` and `daemon` say what each process runs, from the lists kept beside
// the registries (src/runtime/*/parts.ts; a unit test holds them to the registries).

const topics = (parts: readonly RuntimeControllerPart[]) => parts.map((p) => p.topic).join(', ');

/** `cdk8s-kruise controller`'s one-line description. */
export const CONTROLLER_DESCRIPTION = `Run the controller-manager (leader-elected): ${topics(MANAGER_CONTROLLER_PARTS)}; admission webhooks`;

/** `cdk8s-kruise daemon`'s one-line description. */
export const DAEMON_DESCRIPTION = `Run the node daemon, over the node's CRI runtime: ${topics(DAEMON_CONTROLLER_PARTS)}`;

function gateNote(gate: FeatureGateName | undefined): string {
  if (!gate) return '';
  return ` [gate ${gate}, ${BUNDLED_RUNTIME_GATES[gate] ? 'on' : 'off'} by default]`;
}

/** A help section: what a process runs, by registered name, and what else it serves. */
function partsHelp(sections: readonly { title: string; parts: readonly RuntimePart[] }[], also: string): string {
  const width = Math.max(...sections.flatMap((s) => s.parts.map((p) => p.name.length)));
  const lines = ['', "Runs (a gated part runs only while its gate is on; the install's --feature-gates turns on what the app uses):"];
  for (const { title, parts } of sections) {
    lines.push(`  ${title}:`);
    for (const p of parts) lines.push(`    ${p.name.padEnd(width)}  ${p.does}${gateNote(p.gate)}`);
  }
  lines.push(`  Also: ${also}`);
  return lines.join('\n');
}

/** Shown after `cdk8s-kruise controller --help`'s options. */
export const CONTROLLER_HELP = partsHelp(
  [
    { title: 'Controllers (act only on the replica holding the Lease; --workers <name>=<n>)', parts: MANAGER_CONTROLLER_PARTS },
    { title: 'Admission webhooks (served by every replica on --webhook-port)', parts: MANAGER_WEBHOOK_PARTS },
  ],
  "leader election (--leader-elect), the webhook certificates and the configurations' caBundle (--webhook-cert-mode), " +
    '/healthz and /readyz on --health-probe-addr, /metrics on --metrics-addr.',
);

/** Shown after `cdk8s-kruise daemon --help`'s options. */
export const DAEMON_HELP = partsHelp(
  [{ title: "Controllers (each watches only this node's objects)", parts: DAEMON_CONTROLLER_PARTS }],
  '/healthz, /readyz and /metrics on --health-probe-addr; a check of the CRI connection every --cri-check-interval.',
);
