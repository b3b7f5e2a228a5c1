// The manifests' command lines must be accepted by the real `cdk8s-kruise controller` / `daemon`
// commands: parse them with the registered commander definitions (the action is swapped for a
// recorder, so nothing starts).
import { ApiObject, Chart, Testing } from 'cdk8s';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  DaemonPlacement,
  IssuerKind,
  KruiseRuntime,
  WebhookCertificates,
  type KruiseRuntimeProps,
} from '../../../constructs/kruise-runtime.js';
import { register as registerController } from '../../../src/cli/commands/controller.js';
import { register as registerDaemon } from '../../../src/cli/commands/daemon.js';
import { ControllerOptionValues, SHARED_OPTIONS } from '../../../src/runtime/core/options.js';
import { MANAGER_CONTROLLER_OPTIONS } from '../../../src/runtime/manager/options.js';
import { parseFeatureGates } from '../../../src/contracts/features.js';
import { DAEMON_CONTROLLERS } from '../../../src/runtime/daemon/registry.js';

type Obj = Record<string, any>;

function parse(register: (p: Command) => void, name: string, argv: string[]): Record<string, unknown> {
  const program = new Command().exitOverride();
  register(program);
  const cmd = program.commands.find((c) => c.name() === name)!;
  let seen: Record<string, unknown> | undefined;
  cmd.exitOverride().action((o: Record<string, unknown>) => {
    seen = o;
  });
  program.parse(['node', 'cdk8s-kruise', ...argv]);
  return seen!;
}

function containers(props: KruiseRuntimeProps): { manager: Obj; daemon: Obj } {
  const app = Testing.app();
  const rt = new KruiseRuntime(app, 'kruise', { daemon: { placement: DaemonPlacement.ALWAYS }, ...props });
  const c = new Chart(app, 'app');
  new ApiObject(c, 'ipj', {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ImagePullJob',
    metadata: { name: 'x' },
    spec: { image: 'nginx' },
  });
  new ApiObject(c, 'ss', { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'y' }, spec: { selector: {} } });
  const docs = Testing.synth(rt) as Obj[];
  return {
    manager: docs.find((d) => d.kind === 'Deployment')!.spec.template.spec.containers[0],
    daemon: docs.find((d) => d.kind === 'DaemonSet')!.spec.template.spec.containers[0],
  };
}

describe('manifest command lines vs the runtime CLI', () => {
  for (const [label, props] of [
    ['self-managed certificates', {}],
    ['cert-manager', { certificates: WebhookCertificates.fromCertManager('issuer', IssuerKind.ISSUER), namespace: 'ops' }],
  ] as [string, KruiseRuntimeProps][]) {
    it(`controller accepts every flag (${label})`, () => {
      const { manager } = containers(props);
      expect(manager.command).toEqual(['cdk8s-kruise']);
      expect(manager.args[0]).toBe('controller');
      const o = parse(registerController, 'controller', manager.args);
      expect(o.leaderElect).toBe(true);
      expect(o.leaderElectionId).toBe('kruise-manager');
      expect(o.webhookPort).toBe(9876);
      expect(o.webhookCertMode).toBe(props.certificates ? 'cert-manager' : 'self');
      expect(o.leaderElectionNamespace).toBe(props.namespace ?? 'kruise-system');
      // The runtime refuses unknown gates: every gate we pass must be one it knows.
      expect(() => parseFeatureGates(o.featureGates as string)).not.toThrow();
      expect(parseFeatureGates(o.featureGates as string).get('ImagePullJobGate')).toBe(true);
    });
  }

  it('daemon accepts every flag', () => {
    const { daemon } = containers({});
    expect(daemon.args[0]).toBe('daemon');
    const o = parse(registerDaemon, 'daemon', daemon.args);
    expect(o.criSocket).toBe('/hostvarrun/containerd/containerd.sock');
    expect(o.healthProbeAddr).toBe(':10221');
    expect(o.daemonConfigNamespace).toBe('kruise-daemon-config');
    expect(() => parseFeatureGates(o.featureGates as string)).not.toThrow();
  });

  it('daemon gets the same gates as the manager, so its image puller runs for an ImagePullJob', () => {
    const { manager, daemon } = containers({});
    const d = parse(registerDaemon, 'daemon', daemon.args);
    expect(d.featureGates).toBe(parse(registerController, 'controller', manager.args).featureGates);
    const gates = parseFeatureGates(d.featureGates as string);
    expect(gates.get('ImagePullJobGate')).toBe(true);
    const puller = DAEMON_CONTROLLERS.find((c) => c.name === 'daemon-imagepuller')!;
    expect(puller.featureGate).toBe('ImagePullJobGate');
    expect(gates.get(puller.featureGate!)).toBe(true);
  });

  it('manager copies pull secrets into the namespace the daemon reads them from', () => {
    const { manager, daemon } = containers({ daemonConfigNamespace: 'pull-secrets' });
    expect(parse(registerDaemon, 'daemon', daemon.args).daemonConfigNamespace).toBe('pull-secrets');
    const env = Object.fromEntries((manager.env as Obj[]).map((e) => [e.name, e.value]));
    expect(new ControllerOptionValues(MANAGER_CONTROLLER_OPTIONS, {}, env).get(SHARED_OPTIONS.daemonConfigNamespace)).toBe('pull-secrets');
  });
});
