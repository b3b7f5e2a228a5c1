/**
 * SidecarSet `resourcesPolicy` (Kruise v1.9): a sidecar's requests and limits computed at pod creation from the
 * pod's target containers. Pure; the SidecarSet validating webhook, the pod webhook's injection and the policy
 * rules share it so a set admitted here never fails later on the expression itself.
 *
 * Semantics, as upstream's: the target containers are the pod's plain containers and native sidecars
 * (initContainers with restartPolicy Always) whose name matches the regex, less the containers the matched
 * SidecarSets inject; none matching refuses the pod. `sum`/`max` aggregate each resource; a target without a limit
 * makes that limit unlimited (the sidecar gets none), a missing request counts as 0. An expression uses `+ - * /`,
 * parentheses, unary minus, `max(a, b)`, `min(a, b)`, numbers (`0.5`, `50%`), quantities (`100m`, `64Mi`) and the
 * field's variable (`cpu` or `memory`, the aggregate as a quantity). A quantity times or divided by a number is
 * truncated to a whole milli-unit; a plain-number result is cores for CPU and bytes for memory.
 */
import { QUANTITY_SUFFIXES, quantityValue } from '../contracts/quantity.js';

/** Longest expression accepted: expressions are one-liners; the bound keeps parsing cheap for hostile input. */
export const MAX_RESOURCE_EXPR_LENGTH = 1024;
/** Deepest nesting of parentheses, calls and unary minus accepted (the parser recurses once per level). */
export const MAX_RESOURCE_EXPR_DEPTH = 32;
/** Longest targetContainersNameRegex accepted (container names are at most 63 characters). */
export const MAX_TARGET_REGEX_LENGTH = 256;

export type ResourceVariable = 'cpu' | 'memory';

/** A number, or a quantity in milli-units (1 CPU = 1000, 1 byte = 1000). */
type Value = { readonly q: false; readonly n: number } | { readonly q: true; readonly milli: number };

export class ResourceExprError extends Error {}

type Token =
  | { readonly t: 'num'; readonly v: number; readonly at: number }
  | { readonly t: 'qty'; readonly milli: number; readonly at: number }
  | { readonly t: 'id'; readonly v: string; readonly at: number }
  | { readonly t: 'op'; readonly v: string; readonly at: number }
  | { readonly t: 'end'; readonly at: number };

const NUMBER_TOKEN = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?(%?)([A-Za-z]*)/;

function safeMilli(milli: number, what: string): number {
  if (!Number.isFinite(milli) || Math.abs(milli) > Number.MAX_SAFE_INTEGER) {
    throw new ResourceExprError(`${what} is out of range`);
  }
  return Math.trunc(milli);
}

/** A quantity literal's value in milli-units, or an error naming it. */
export function quantityMilli(text: string): number {
  const value = quantityValue(text);
  if (value === undefined) throw new ResourceExprError(`"${text}" is not a Kubernetes quantity (e.g. 100m, 0.5, 64Mi, 1Gi)`);
  // Milli-units are whole: 0.5m rounds up, as the API server rounds a quantity it cannot hold.
  return safeMilli(Math.ceil(value * 1000 - 1e-9), `quantity "${text}"`);
}

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const ch = src[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    if ('+-*/(),'.includes(ch)) {
      out.push({ t: 'op', v: ch, at: i });
      i++;
      continue;
    }
    if (/[0-9.]/.test(ch)) {
      const m = NUMBER_TOKEN.exec(src.slice(i));
      if (!m) throw new ResourceExprError(`unexpected "${ch}" at column ${i + 1}`);
      const [text, percent, unit] = m;
      if (unit) {
        if (percent || !(unit in QUANTITY_SUFFIXES) || /[eE]/.test(text.slice(0, text.length - unit.length))) {
          throw new ResourceExprError(
            `"${text}" at column ${i + 1} is neither a number nor a quantity (units: ${Object.keys(QUANTITY_SUFFIXES).join(' ')})`,
          );
        }
        out.push({ t: 'qty', milli: quantityMilli(text), at: i });
      } else {
        const n = Number(percent ? text.slice(0, -1) : text);
        if (!Number.isFinite(n)) throw new ResourceExprError(`number at column ${i + 1} is out of range`);
        out.push({ t: 'num', v: percent ? n / 100 : n, at: i });
      }
      i += text.length;
      continue;
    }
    if (/[A-Za-z_]/.test(ch)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i))!;
      out.push({ t: 'id', v: m[0].toLowerCase(), at: i });
      i += m[0].length;
      continue;
    }
    throw new ResourceExprError(`unexpected "${ch}" at column ${i + 1}`);
  }
  out.push({ t: 'end', at: src.length });
  return out;
}

const toMilli = (v: Value): number => (v.q ? v.milli : safeMilli(v.n * 1000, 'a number'));

function add(a: Value, b: Value, sign: 1 | -1): Value {
  if (a.q || b.q) return { q: true, milli: safeMilli(toMilli(a) + sign * toMilli(b), 'the result') };
  return { q: false, n: a.n + sign * b.n };
}

function mul(a: Value, b: Value): Value {
  if (a.q && b.q) throw new ResourceExprError('a quantity cannot be multiplied by a quantity');
  if (a.q) return { q: true, milli: safeMilli(a.milli * (b as { n: number }).n, 'the result') };
  if (b.q) return { q: true, milli: safeMilli(b.milli * a.n, 'the result') };
  return { q: false, n: a.n * b.n };
}

function div(a: Value, b: Value): Value {
  if (b.q) throw new ResourceExprError('division by a quantity is not supported');
  if (b.n === 0) throw new ResourceExprError('division by zero');
  if (a.q) return { q: true, milli: safeMilli(a.milli / b.n, 'the result') };
  return { q: false, n: a.n / b.n };
}

function extreme(a: Value, b: Value, max: boolean): Value {
  if (!a.q && !b.q) return { q: false, n: max === a.n >= b.n ? a.n : b.n };
  const x = toMilli(a);
  const y = toMilli(b);
  return { q: true, milli: max === x >= y ? x : y };
}

class Parser {
  private pos = 0;
  constructor(
    private readonly tokens: readonly Token[],
    private readonly vars: Readonly<Record<string, Value>>,
  ) {}

  private peek(): Token {
    return this.tokens[this.pos]!;
  }
  private isOp(v: string): boolean {
    const t = this.peek();
    return t.t === 'op' && t.v === v;
  }
  private expect(v: string): void {
    if (!this.isOp(v)) throw new ResourceExprError(`expected "${v}" at column ${this.peek().at + 1}`);
    this.pos++;
  }

  parse(): Value {
    const v = this.expr(0);
    const t = this.peek();
    if (t.t !== 'end') throw new ResourceExprError(`unexpected ${describe(t)} at column ${t.at + 1}`);
    return v;
  }

  private expr(depth: number): Value {
    let v = this.term(depth);
    while (this.isOp('+') || this.isOp('-')) {
      const sign = this.isOp('+') ? 1 : -1;
      this.pos++;
      v = add(v, this.term(depth), sign);
    }
    return v;
  }

  private term(depth: number): Value {
    let v = this.factor(depth);
    while (this.isOp('*') || this.isOp('/')) {
      const op = this.peek() as { v: string };
      this.pos++;
      const r = this.factor(depth);
      v = op.v === '*' ? mul(v, r) : div(v, r);
    }
    return v;
  }

  private factor(depth: number): Value {
    if (depth >= MAX_RESOURCE_EXPR_DEPTH) {
      throw new ResourceExprError(`nested deeper than ${MAX_RESOURCE_EXPR_DEPTH} levels`);
    }
    const t = this.peek();
    this.pos++;
    switch (t.t) {
      case 'num':
        return { q: false, n: t.v };
      case 'qty':
        return { q: true, milli: t.milli };
      case 'op':
        if (t.v === '(') {
          const v = this.expr(depth + 1);
          this.expect(')');
          return v;
        }
        if (t.v === '-') {
          const v = this.factor(depth + 1);
          return v.q ? { q: true, milli: -v.milli } : { q: false, n: -v.n };
        }
        break;
      case 'id': {
        if (this.isOp('(')) {
          this.pos++;
          const args = [this.expr(depth + 1)];
          while (this.isOp(',')) {
            this.pos++;
            args.push(this.expr(depth + 1));
          }
          this.expect(')');
          if (t.v !== 'max' && t.v !== 'min') throw new ResourceExprError(`unknown function "${t.v}" (max and min are supported)`);
          if (args.length !== 2) throw new ResourceExprError(`${t.v}() takes exactly 2 arguments, got ${args.length}`);
          return extreme(args[0]!, args[1]!, t.v === 'max');
        }
        const v = this.vars[t.v];
        if (!v) throw new ResourceExprError(`undefined variable "${t.v}" (this field's variable is ${Object.keys(this.vars).join(', ')})`);
        return v;
      }
      case 'end':
        throw new ResourceExprError('unexpected end of expression');
    }
    throw new ResourceExprError(`unexpected ${describe(t)} at column ${t.at + 1}`);
  }
}

function describe(t: Token): string {
  switch (t.t) {
    case 'op':
      return `"${t.v}"`;
    case 'id':
      return `"${t.v}"`;
    case 'end':
      return 'end of expression';
    default:
      return 'value';
  }
}

function run(expr: string, variable: ResourceVariable, aggregateMilli: number): Value {
  if (expr.length > MAX_RESOURCE_EXPR_LENGTH) {
    throw new ResourceExprError(`longer than ${MAX_RESOURCE_EXPR_LENGTH} characters`);
  }
  return new Parser(tokenize(expr), { [variable]: { q: true, milli: aggregateMilli } }).parse();
}

/**
 * Evaluates `expr` with `variable` bound to the aggregate (milli-units); the result in milli-units. A plain-number
 * result is cores (CPU) or bytes (memory). Throws ResourceExprError with a message that does not name the field.
 */
export function evaluateResourceExpr(expr: string, variable: ResourceVariable, aggregateMilli: number): number {
  const v = run(expr, variable, aggregateMilli);
  if (v.q) return v.milli;
  return variable === 'cpu' ? safeMilli(v.n * 1000, 'the result') : safeMilli(Math.trunc(v.n) * 1000, 'the result');
}

/** Why an expression is refused (syntax, unknown names, a quantity times a quantity, ...); undefined if accepted. */
export function resourceExprError(expr: string, variable: ResourceVariable): string | undefined {
  try {
    // The variable is bound as a quantity, as the injection binds it: `cpu * cpu` is refused here, not per pod.
    evaluateResourceExpr(expr, variable, 1000);
    return undefined;
  } catch (err) {
    if (err instanceof ResourceExprError) return err.message;
    throw err;
  }
}

/** A milli-unit value as a Kubernetes quantity string: CPU as cores or millicores, memory in Ki/Mi/Gi when exact. */
export function formatQuantity(milli: number, variable: ResourceVariable): string {
  if (milli % 1000 !== 0) return `${milli}m`;
  const whole = milli / 1000;
  if (variable === 'cpu' || whole === 0) return String(whole);
  for (const [suffix, scale] of [
    ['Pi', 2 ** 50],
    ['Ti', 2 ** 40],
    ['Gi', 2 ** 30],
    ['Mi', 2 ** 20],
    ['Ki', 2 ** 10],
  ] as const) {
    if (whole % scale === 0) return `${whole / scale}${suffix}`;
  }
  return String(whole);
}

/** The policy as the API carries it (both API versions have the same shape). */
export interface ResourcesPolicyLike {
  readonly targetContainersMode?: string;
  readonly targetContainersNameRegex?: string;
  readonly resourcesExpr?: {
    readonly limits?: { readonly cpu?: string; readonly memory?: string };
    readonly requests?: { readonly cpu?: string; readonly memory?: string };
  };
}

export interface SidecarLike {
  readonly name: string;
  readonly restartPolicy?: string;
  readonly resources?: { readonly limits?: Readonly<Record<string, unknown>>; readonly requests?: Readonly<Record<string, unknown>> };
  readonly resourcesPolicy?: ResourcesPolicyLike;
}

export interface PolicyProblem {
  /** Field path under the container, e.g. `resourcesPolicy.resourcesExpr.limits.cpu`. */
  readonly field: string;
  readonly message: string;
}

/** Compiles the target regex: an error message when it is empty, too long or not a valid pattern. */
export function targetRegexError(pattern: string): string | undefined {
  if (pattern === '') return 'invalid empty regex';
  if (pattern.length > MAX_TARGET_REGEX_LENGTH) return `regex longer than ${MAX_TARGET_REGEX_LENGTH} characters`;
  try {
    new RegExp(pattern);
    return undefined;
  } catch (err) {
    return `invalid regex pattern: ${(err as Error).message}`;
  }
}

/**
 * What upstream's SidecarSet validation refuses in a container's resourcesPolicy (`init`: the container is one of
 * spec.initContainers, where only native sidecars may carry a policy). Empty when the policy is absent or valid.
 */
export function resourcesPolicyProblems(c: SidecarLike, init: boolean): PolicyProblem[] {
  const p = c.resourcesPolicy;
  if (!p) return [];
  const out: PolicyProblem[] = [];
  if (init && c.restartPolicy !== 'Always') {
    out.push({ field: 'resourcesPolicy', message: 'resourcesPolicy is only supported for containers with RestartPolicy Always' });
  }
  const has = (r: Readonly<Record<string, unknown>> | undefined) => !!r && Object.keys(r).length > 0;
  if (has(c.resources?.limits) || has(c.resources?.requests)) {
    out.push({ field: 'resourcesPolicy', message: 'resourcesPolicy and resources cannot be configured together' });
    return out;
  }
  if (p.targetContainersMode !== 'sum' && p.targetContainersMode !== 'max') {
    out.push({ field: 'resourcesPolicy.targetContainersMode', message: 'must be "sum" or "max"' });
  }
  const regexError = targetRegexError(p.targetContainersNameRegex ?? '.*');
  if (regexError) out.push({ field: 'resourcesPolicy.targetContainersNameRegex', message: regexError });
  const e = p.resourcesExpr;
  if (!e?.limits && !e?.requests) {
    out.push({ field: 'resourcesPolicy.resourcesExpr', message: 'at least one of limits or requests must be configured' });
    return out;
  }
  for (const kind of ['limits', 'requests'] as const) {
    for (const variable of ['cpu', 'memory'] as const) {
      const expr = e[kind]?.[variable];
      if (!expr) continue;
      const err = resourceExprError(expr, variable);
      if (err) out.push({ field: `resourcesPolicy.resourcesExpr.${kind}.${variable}`, message: `invalid expression: ${err}` });
    }
  }
  return out;
}

export interface TargetContainer {
  readonly name: string;
  readonly restartPolicy?: string;
  readonly resources?: { readonly limits?: Readonly<Record<string, unknown>>; readonly requests?: Readonly<Record<string, unknown>> };
}

export interface ComputedResources {
  readonly limits?: Record<string, string>;
  readonly requests?: Record<string, string>;
}

function quantityOf(v: unknown): number {
  if (typeof v === 'number') return safeMilli(v * 1000, 'a quantity');
  if (typeof v === 'string') return quantityMilli(v);
  throw new ResourceExprError(`${JSON.stringify(v)} is not a quantity`);
}

/**
 * The sidecar's resources under `policy`, from the pod's containers and native sidecars (`excluded`: the names the
 * matched SidecarSets inject). Throws ResourceExprError when no container matches or an expression cannot be
 * evaluated; the caller names the sidecar.
 */
export function computeSidecarResources(
  policy: ResourcesPolicyLike,
  containers: readonly TargetContainer[],
  initContainers: readonly TargetContainer[],
  excluded: ReadonlySet<string>,
): ComputedResources {
  const pattern = policy.targetContainersNameRegex ?? '.*';
  const regexError = targetRegexError(pattern);
  if (regexError) throw new ResourceExprError(`targetContainersNameRegex: ${regexError}`);
  const re = new RegExp(pattern);
  const targets = [...initContainers.filter((c) => c.restartPolicy === 'Always'), ...containers].filter(
    (c) => !excluded.has(c.name) && re.test(c.name),
  );
  if (targets.length === 0) throw new ResourceExprError(`no containers match the regex pattern "${pattern}"`);
  const max = policy.targetContainersMode === 'max';
  const aggregate = (kind: 'limits' | 'requests', resource: ResourceVariable): number | undefined => {
    let acc = 0;
    for (const c of targets) {
      const raw = c.resources?.[kind]?.[resource];
      // A missing limit is unlimited and so is the aggregate; a missing request is 0.
      if (raw === undefined) {
        if (kind === 'limits') return undefined;
        continue;
      }
      const v = quantityOf(raw);
      acc = max ? Math.max(acc, v) : safeMilli(acc + v, 'the aggregate');
    }
    return acc;
  };
  const out: { limits?: Record<string, string>; requests?: Record<string, string> } = {};
  for (const kind of ['limits', 'requests'] as const) {
    const exprs = policy.resourcesExpr?.[kind];
    if (!exprs) continue;
    const list: Record<string, string> = {};
    for (const resource of ['cpu', 'memory'] as const) {
      const expr = exprs[resource];
      if (!expr) continue;
      const agg = aggregate(kind, resource);
      if (agg === undefined) continue;
      let milli: number;
      try {
        milli = evaluateResourceExpr(expr, resource, agg);
      } catch (err) {
        if (err instanceof ResourceExprError) throw new ResourceExprError(`${kind}.${resource} "${expr}": ${err.message}`);
        throw err;
      }
      if (milli < 0)
        throw new ResourceExprError(`${kind}.${resource} "${expr}" gives a negative quantity (${formatQuantity(milli, resource)})`);
      list[resource] = formatQuantity(milli, resource);
    }
    if (Object.keys(list).length) out[kind] = list;
  }
  return out;
}
