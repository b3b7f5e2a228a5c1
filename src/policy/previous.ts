import type { PreviousLookup } from './types.js';

type Obj = Record<string, unknown>;

/** API group, kind, namespace and name: one object across API versions (v1alpha1 and v1beta1 of one kind). */
function identity(o: Obj): string | undefined {
  const md = o.metadata as Obj | undefined;
  if (typeof o.kind !== 'string' || typeof o.apiVersion !== 'string' || typeof md?.name !== 'string') return undefined;
  const group = o.apiVersion.includes('/') ? o.apiVersion.slice(0, o.apiVersion.indexOf('/')) : '';
  return [group, o.kind, typeof md.namespace === 'string' ? md.namespace : '', md.name].join('\u0000');
}

/** The lookup of the previous output's objects that the rules judging a change read. */
export function previousLookup(previous: readonly Obj[]): PreviousLookup {
  const byIdentity = new Map<string, Obj>();
  for (const o of previous) {
    const id = identity(o);
    if (id !== undefined) byIdentity.set(id, o);
  }
  return (object) => {
    const id = identity(object);
    return id === undefined ? undefined : byIdentity.get(id);
  };
}
