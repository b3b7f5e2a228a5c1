/**
 * Kubernetes resource quantities (`512Mi`, `100m`, `1.5G`, `129e6`): one suffix table and one reader for every part
 * that takes a quantity (the manager's heap from its memory limit, SidecarSet resource expressions).
 */

/** Each suffix's multiplier: binary (Ki..Ei), decimal (k..E) and milli (m), as the API server reads them. */
export const QUANTITY_SUFFIXES: Readonly<Record<string, number>> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

// A signed decimal, then a decimal exponent or one suffix (not both), nothing else.
const QUANTITY = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(?:[eE]([+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E))?$/;

/** A quantity's value (`100m` is 0.1, `1Ki` is 1024, `129e6` is 129000000), or undefined when `text` is not one. */
export function quantityValue(text: string): number | undefined {
  const m = QUANTITY.exec(text.trim());
  if (!m) return undefined;
  const [, num, exponent, suffix] = m;
  const scale = exponent !== undefined ? 10 ** Number(exponent) : suffix !== undefined ? QUANTITY_SUFFIXES[suffix]! : 1;
  return Number(num) * scale;
}
