/** Options common to every {@link LifecycleHook}. */
export interface LifecycleHookOptions {
  /**
   * Whether the workload controller sets pod condition `KruisePodReady=False` while the hook
   * holds the pod, taking it out of Service endpoints. Only meaningful for `preDelete` and
   * `inPlaceUpdate` hooks; setting it on `preNormal` is an error.
   *
   * @default false
   */
  readonly markPodNotReady?: boolean;
}

/**
 * A pod lifecycle hook of a CloneSet (or Advanced StatefulSet): the pod waits in a
 * `Preparing*` state while any of the hook's finalizers/labels is present on it. Your own
 * operator adds/removes them; the workload controller moves the lifecycle state.
 */
export class LifecycleHook {
  /**
   * Hook by finalizers: the pod is held while any of `finalizers` is on it (preDelete,
   * inPlaceUpdate), or until all are on it (preNormal).
   *
   * @param finalizers finalizer names, e.g. `example.io/unready-blocker`.
   */
  public static byFinalizers(finalizers: string[], options: LifecycleHookOptions = {}): LifecycleHook {
    if (finalizers.length === 0) throw new Error('LifecycleHook.byFinalizers: give at least one finalizer.');
    for (const f of finalizers) checkQualifiedName(f, 'finalizer');
    return new LifecycleHook([...finalizers], undefined, options.markPodNotReady);
  }

  /**
   * Hook by labels: the pod is held while any of `labels` is on it (preDelete,
   * inPlaceUpdate), or until all are on it (preNormal).
   *
   * @param labels label key → value, e.g. `{ 'example.io/block-unready': 'true' }`.
   */
  public static byLabels(labels: { [key: string]: string }, options: LifecycleHookOptions = {}): LifecycleHook {
    if (Object.keys(labels).length === 0) throw new Error('LifecycleHook.byLabels: give at least one label.');
    for (const key of Object.keys(labels)) checkQualifiedName(key, 'label key');
    return new LifecycleHook(undefined, { ...labels }, options.markPodNotReady);
  }

  private constructor(
    /** Finalizer names of a finalizer hook. */
    public readonly finalizers: string[] | undefined,
    /** Labels of a label hook. */
    public readonly labels: { [key: string]: string } | undefined,
    /** See {@link LifecycleHookOptions.markPodNotReady}. */
    public readonly markPodNotReady: boolean | undefined,
  ) {}

  /** @internal */
  public _toKube(): { finalizersHandler?: string[]; labelsHandler?: { [key: string]: string }; markPodNotReady?: boolean } {
    return { finalizersHandler: this.finalizers, labelsHandler: this.labels, markPodNotReady: this.markPodNotReady };
  }
}

/** The lifecycle hooks of a CloneSet. */
export interface CloneSetLifecycle {
  /** Holds a new pod in `PreparingNormal` until all of the hook's finalizers/labels are present. */
  readonly preNormal?: LifecycleHook;
  /** Holds a pod being deleted or scaled in, in `PreparingDelete`, while the hook is present. */
  readonly preDelete?: LifecycleHook;
  /** Holds a pod in `PreparingUpdate` before an in-place update while the hook is present. */
  readonly inPlaceUpdate?: LifecycleHook;
}

const QUALIFIED = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

function checkQualifiedName(name: string, what: string): void {
  const [prefix, local] = name.includes('/') ? name.split('/', 2) : [undefined, name];
  if (!QUALIFIED.test(name) || local!.length > 63 || (prefix !== undefined && prefix.length > 253)) {
    throw new Error(
      `LifecycleHook: ${what} ${JSON.stringify(name)} is not a qualified name ([prefix/]name, ` +
        'name at most 63 characters of alphanumerics, "-", "_", ".").',
    );
  }
}

/** Validates the hooks and renders `spec.lifecycle`. */
export function renderLifecycle(lifecycle: CloneSetLifecycle | undefined, where: string) {
  if (!lifecycle) return undefined;
  if (lifecycle.preNormal?.markPodNotReady) {
    throw new Error(
      `[${where}] lifecycle.preNormal: markPodNotReady has no effect on preNormal hooks ` +
        '(the pod is not ready yet); only preDelete and inPlaceUpdate honour it. Fix: remove it.',
    );
  }
  const out = {
    preNormal: lifecycle.preNormal?._toKube(),
    preDelete: lifecycle.preDelete?._toKube(),
    inPlaceUpdate: lifecycle.inPlaceUpdate?._toKube(),
  };
  return out.preNormal || out.preDelete || out.inPlaceUpdate ? out : undefined;
}
