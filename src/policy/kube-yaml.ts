/** 2^64 - 1 as a double (the nearest one is 2^64): values above it are beyond uint64. */
const UINT64_MAX = 2 ** 64 - 1;
import { CORE_SCHEMA, defineScalarTag, mergeTag, NOT_RESOLVED } from 'js-yaml';

/*
 * Plain scalars read the way kubectl's decoder reads manifests: sigs.k8s.io/yaml on top of go-yaml v2, a YAML 1.1
 * reader. So `yes`/`on`/`y` are booleans (an env var `value: yes` is a boolean the API server rejects), `0755` is
 * octal, `1_000` is an integer, and timestamps stay strings (go-yaml keeps them as text for untyped targets).
 * Quoted scalars are always strings. The same functions serve js-yaml (parse.ts) and the key matching of the
 * `yaml` package's AST (locate.ts), so both read a document the same way.
 */

const TRUE_WORDS = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']);
const FALSE_WORDS = new Set(['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']);
const NULL_WORDS = new Set(['', '~', 'null', 'Null', 'NULL']);
const SPECIAL_FLOATS = new Map<string, number>([
  ['.nan', NaN],
  ['.NaN', NaN],
  ['.NAN', NaN],
  ['.inf', Infinity],
  ['.Inf', Infinity],
  ['.INF', Infinity],
  ['+.inf', Infinity],
  ['+.Inf', Infinity],
  ['+.INF', Infinity],
  ['-.inf', -Infinity],
  ['-.Inf', -Infinity],
  ['-.INF', -Infinity],
]);

// Go's strconv.ParseInt(s, 0, 64) syntax after go-yaml has removed every underscore.
const GO_INT = /^([+-]?)(?:0[xX]([0-9a-fA-F]+)|0[oO]([0-7]+)|0[bB]([01]+)|(0[0-7]*)|([1-9][0-9]*))$/;
// go-yaml v2's yamlStyleFloat, checked before strconv.ParseFloat for scalars starting with a digit or sign.
const GO_YAML_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const DOT_FLOAT = /^\.[0-9]+([eE][-+]?[0-9]+)?$/;

function startsNumeric(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 43 || c === 45; // 0-9 + -
}

/** The boolean a plain scalar means, or undefined. */
export function plainBool(source: string): boolean | undefined {
  if (TRUE_WORDS.has(source)) return true;
  if (FALSE_WORDS.has(source)) return false;
  return undefined;
}

/** The integer a plain scalar means, or undefined. */
export function plainInt(source: string): number | undefined {
  if (source.length === 0 || !startsNumeric(source.charCodeAt(0))) return undefined;
  const m = GO_INT.exec(source.includes('_') ? source.replace(/_/g, '') : source);
  if (!m) return undefined;
  const sign = m[1] === '-' ? -1 : 1;
  const value =
    m[2] !== undefined
      ? parseInt(m[2], 16)
      : m[3] !== undefined
        ? parseInt(m[3], 8)
        : m[4] !== undefined
          ? parseInt(m[4], 2)
          : m[5] !== undefined
            ? parseInt(m[5], 8)
            : Number(m[6]);
  // Beyond uint64 go-yaml tries a float instead (decimal) or keeps the text (hex, octal, binary).
  if (value > UINT64_MAX) return undefined;
  return sign * value || 0;
}

/** The float a plain scalar means (when it is not an integer), or undefined. */
export function plainFloat(source: string): number | undefined {
  const special = SPECIAL_FLOATS.get(source);
  if (special !== undefined) return special;
  if (source.length === 0) return undefined;
  const c = source.charCodeAt(0);
  let text: string;
  if (c === 46) {
    if (!DOT_FLOAT.test(source)) return undefined;
    text = source;
  } else {
    if (!startsNumeric(c)) return undefined;
    text = source.includes('_') ? source.replace(/_/g, '') : source;
    if (!GO_YAML_FLOAT.test(text)) return undefined;
  }
  const value = Number(text);
  // strconv.ParseFloat fails on overflow; go-yaml then keeps the text.
  return Number.isFinite(value) ? value : undefined;
}

/** What a plain (unquoted, untagged) scalar means to kubectl's decoder. */
export function resolvePlainScalar(source: string): null | boolean | number | string {
  if (NULL_WORDS.has(source)) return null;
  const b = plainBool(source);
  if (b !== undefined) return b;
  const i = plainInt(source);
  if (i !== undefined) return i;
  const f = plainFloat(source);
  return f !== undefined ? f : source;
}

/** A mapping key as a JSON object key: sigs.k8s.io/yaml turns `yes:` into "true" and `1:` into "1", as js-yaml does. */
export function plainKey(source: string): string {
  return String(resolvePlainScalar(source));
}

const DIGITS_AND_SIGNS = ['+', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'];

const nullTag = defineScalarTag<null>('tag:yaml.org,2002:null', {
  implicit: true,
  implicitFirstChars: ['', '~', 'n', 'N'],
  resolve: (s) => (NULL_WORDS.has(s) ? null : NOT_RESOLVED),
  identify: (v) => v === null,
  represent: () => 'null',
});

const boolTag = defineScalarTag<boolean>('tag:yaml.org,2002:bool', {
  implicit: true,
  implicitFirstChars: ['y', 'Y', 'n', 'N', 't', 'T', 'f', 'F', 'o', 'O'],
  resolve: (s) => plainBool(s) ?? NOT_RESOLVED,
  identify: (v) => typeof v === 'boolean',
  represent: (v) => (v ? 'true' : 'false'),
});

const intTag = defineScalarTag<number>('tag:yaml.org,2002:int', {
  implicit: true,
  implicitFirstChars: DIGITS_AND_SIGNS,
  resolve: (s) => plainInt(s) ?? NOT_RESOLVED,
  identify: (v) => typeof v === 'number' && Number.isInteger(v),
  represent: (v) => String(v),
});

const floatTag = defineScalarTag<number>('tag:yaml.org,2002:float', {
  implicit: true,
  implicitFirstChars: [...DIGITS_AND_SIGNS, '.'],
  resolve: (s) => plainFloat(s) ?? NOT_RESOLVED,
  identify: (v) => typeof v === 'number',
  represent: (v) => String(v),
});

/** js-yaml schema for manifests: the scalars above, strings, sequences, mappings and merge keys (`<<`). */
export const KUBE_YAML_SCHEMA = CORE_SCHEMA.withTags(nullTag, boolTag, intTag, floatTag, mergeTag);
