/** How bad a finding is. `error` fails `validate`/`synth`; `warning` only with --warnings-as-errors; `info` never. */
export type Severity = 'error' | 'warning' | 'info';

/** Where a parsed document came from, kept so a line number can be recovered later, only if needed. */
export interface SourceRef {
  /** File path as given by the user (or `<stdin>`). */
  readonly file: string;
  /** Zero-based index of the document in its file. */
  readonly docIndex: number;
  /** One-based line of the first line of the document's text in the file. */
  readonly startLine: number;
  /** The whole file text and the document's span in it (no copy is made unless a line is needed). */
  readonly fileText: string;
  readonly start: number;
  readonly end: number;
  /** Pointer from the parsed document to this object (non-empty for List items and JSON arrays). */
  readonly pointerPrefix: string;
}

/** One Kubernetes object from the input, with its origin when it came from text. */
export interface Manifest {
  readonly object: Record<string, unknown>;
  readonly source?: SourceRef;
}

/** The object a finding is about. */
export interface ResourceRef {
  readonly apiVersion?: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

/** What a rule reports: the engine adds the rule id, severity, resource, file and line. */
export interface RuleFinding {
  readonly manifest: Manifest;
  /** RFC 6901 pointer to the offending field inside the object (`""` = the whole object). */
  readonly jsonPointer: string;
  readonly message: string;
  /** How to fix it, one sentence. */
  readonly hint: string;
}

/** A finding as printed and returned by the engine. */
export interface Finding {
  readonly ruleId: string;
  readonly severity: Severity;
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
  readonly resource: ResourceRef;
  readonly jsonPointer: string;
  readonly message: string;
  readonly hint: string;
  /** Construct path of the resource, when known (cdk8s synth records it). */
  readonly constructPath?: string;
}

/** Facts shared by all rules in one run, computed once. */
export interface RuleContext {
  /** Every manifest of the run, including non-Kruise ones (selectors, Namespaces, install manifests). */
  readonly manifests: readonly Manifest[];
  /**
   * The same object as the previous output held it, for the rules that judge a change rather than a state (synth
   * with a previous output); undefined without a previous output or for an object new in this one.
   */
  readonly previousOf?: PreviousLookup;
}

/** Finds an object's previous version (same API group, kind, namespace and name). */
export type PreviousLookup = (object: Record<string, unknown>) => Record<string, unknown> | undefined;

export interface Rule {
  /** Stable id, e.g. `KRUISE-SIDECAR-001`. */
  readonly id: string;
  readonly severity: Severity;
  /** One line. */
  readonly title: string;
  /** One paragraph: what is checked, why it matters, what upstream does. */
  readonly doc: string;
  /** Pure: same manifests, same findings. Findings from the input parser have rules whose check returns []. */
  readonly check: (manifests: readonly Manifest[], ctx: RuleContext) => RuleFinding[];
  /**
   * For a rule that compares documents: what it reads of one manifest, judged on that manifest alone — the
   * object (whole, or only the fields `check` reads) or `undefined` when the manifest cannot matter to the rule.
   * `validate` streams large inputs and holds only what these return until the cross-document rules run, so
   * `check` must give the same findings over the retained manifests as over all of them. Without it, a
   * cross-document rule is given every manifest whole. Per-document rules need none.
   */
  readonly retain?: (m: Manifest) => Record<string, unknown> | undefined;
  /**
   * For a cross-document rule that finds nothing unless the input holds a certain kind of manifest (install
   * manifests, a SidecarSet): true for such a manifest, judged on it alone. `check` must return no findings when
   * no manifest passes. `validate` then drops what it retained for the rule without reviving it.
   */
  readonly activatedBy?: (m: Manifest) => boolean;
}
