import { ApiObject, type App } from 'cdk8s';

// cdk8s validates the whole app at the start of App.synth()/synthYaml() and again inside every chart's
// toJson(), then renders each chart. KruiseRuntime analyses the rendered app during validation, so
// without care one synth rendered the app once per chart plus once more. Inside a synth scope (an
// App.synth()/synthYaml() call, entered through scopeSynth) the runtime analyses once, and the manifests
// it rendered are handed to the charts' own rendering. Nothing user-driven runs inside the scope, and the
// kept manifests are dropped when it ends, so no stale rendering can leak out.

let depth = 0;
let scopes = 0;
const memo = new Map<ApiObject, unknown>();
const wrappedObjects = new WeakSet<ApiObject>();
const wrappedApps = new WeakSet<App>();

function inScope<T>(run: () => T): T {
  if (depth++ === 0) scopes++;
  try {
    return run();
  } finally {
    if (--depth === 0) memo.clear();
  }
}

/** Makes `app.synth()` and `app.synthYaml()` synth scopes (once per app). */
export function scopeSynth(app: App): void {
  if (wrappedApps.has(app)) return;
  wrappedApps.add(app);
  const synth = app.synth.bind(app);
  const synthYaml = app.synthYaml.bind(app);
  app.synth = () => inScope(synth);
  app.synthYaml = () => inScope(synthYaml);
}

/** An id of the synth scope running now (a new one per outermost synth); undefined outside one. */
export function currentSynthScope(): number | undefined {
  return depth > 0 ? scopes : undefined;
}

/**
 * Renders `obj` now (always fresh). Inside a synth scope its next `toJson()` in that scope returns this
 * very manifest instead of rendering again. The caller must not modify the result.
 */
export function renderShared(obj: ApiObject): unknown {
  if (depth === 0) return obj.toJson();
  memo.delete(obj);
  const manifest: unknown = obj.toJson();
  if (!wrappedObjects.has(obj)) {
    wrappedObjects.add(obj);
    const render = obj.toJson.bind(obj);
    obj.toJson = (): unknown => {
      const kept = memo.get(obj);
      if (kept === undefined) return render();
      memo.delete(obj);
      return kept;
    };
  }
  memo.set(obj, manifest);
  return manifest;
}
