/**
 * `--feature-gates=A=true,B=false` as upstream kruise-manager takes it. The runtime only knows the gates
 * of the features it implements; defaults and cascades follow upstream (openkruise-api-notes §1, §7).
 */
export const RUNTIME_FEATURE_GATES: Readonly<Record<string, boolean>> = {
  /** Job sidecar terminator (Alpha upstream, default off). */
  SidecarTerminator: false,
  /** The node daemon; off forces SidecarTerminator and ImagePullJobGate off. */
  KruiseDaemon: true,
  /** ImagePullJob controller (issue 7). */
  ImagePullJobGate: false,
};

export function parseFeatureGates(spec: string | undefined, known: Readonly<Record<string, boolean>> = RUNTIME_FEATURE_GATES): Map<string, boolean> {
  const gates = new Map(Object.entries(known));
  for (const part of (spec ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^([A-Za-z0-9]+)=(true|false)$/i.exec(part);
    if (!m) throw new Error(`--feature-gates: "${part}" is not Name=true|false (e.g. --feature-gates=SidecarTerminator=true)`);
    const name = m[1]!;
    if (!(name in known)) {
      throw new Error(`--feature-gates: unknown gate "${name}"; this runtime knows ${Object.keys(known).join(', ')}`);
    }
    gates.set(name, m[2]!.toLowerCase() === 'true');
  }
  if (gates.get('KruiseDaemon') === false) {
    gates.set('SidecarTerminator', false);
    gates.set('ImagePullJobGate', false);
  }
  return gates;
}
