import { DAEMON_CONFIG_NAMESPACE, RUNTIME_ENV } from '../../contracts/names.js';

/**
 * Typed controller options. A controller declares each option it reads once (key, flag, help, default,
 * parser); the CLI builds its flags from the declarations of the registered controllers, and the
 * controller reads the parsed value with its type. An option used by both the manager and the daemon is
 * one declaration, so the two cannot name it differently.
 */

/** One option a controller reads. */
export interface ControllerOption<T> {
  /** Key of the parsed value, shared by every process that declares it. */
  readonly key: string;
  /** Long flag with its value name, e.g. `--daemon-config-namespace <ns>`. */
  readonly flag: string;
  readonly help: string;
  /** Default when the flag is absent; may read the process environment (downward API). */
  readonly defaultValue: (env: Readonly<Record<string, string | undefined>>) => T;
  /** Parses the flag's text; throws an Error that says what is expected. */
  readonly parse: (raw: string) => T;
}

/** A string option (e.g. a namespace). */
export function stringOption(
  key: string,
  flag: string,
  help: string,
  defaultValue: ControllerOption<string>['defaultValue'],
): ControllerOption<string> {
  return {
    key,
    flag,
    help,
    defaultValue,
    parse: (raw) => {
      if (raw.length === 0) throw new Error(`${flag.split(' ')[0]} must not be empty`);
      return raw;
    },
  };
}

/** An integer option of at least 1 (a worker count, a concurrency bound). */
export function positiveIntOption(key: string, flag: string, help: string, defaultValue: number): ControllerOption<number> {
  return {
    key,
    flag,
    help,
    defaultValue: () => defaultValue,
    parse: (raw) => {
      const n = Number(raw);
      if (!Number.isInteger(n) || n < 1) throw new Error(`${flag.split(' ')[0]}: "${raw}" is not a positive integer`);
      return n;
    },
  };
}

/** Parsed option values of one process, read with the declaring option for its type. */
export class ControllerOptionValues {
  private readonly values = new Map<string, unknown>();

  /**
   * @param declared every option of the process's registered controllers
   * @param given values already parsed (by the CLI), by key; absent keys take their default
   */
  constructor(
    declared: readonly ControllerOption<unknown>[],
    given: Readonly<Record<string, unknown>> = {},
    env: Readonly<Record<string, string | undefined>> = process.env,
  ) {
    for (const o of uniqueOptions(declared))
      this.values.set(o.key, o.key in given && given[o.key] !== undefined ? given[o.key] : o.defaultValue(env));
  }

  get<T>(option: ControllerOption<T>): T {
    if (!this.values.has(option.key)) {
      throw new Error(
        `controller option ${option.key} was not declared by any registered controller; add it to the controller's \`options\``,
      );
    }
    return this.values.get(option.key) as T;
  }
}

/**
 * The options of `defs`, each once. Refuses (throws) two different declarations under one key or one flag,
 * which would make a flag mean two things.
 */
export function uniqueOptions(declared: readonly ControllerOption<unknown>[]): ControllerOption<unknown>[] {
  const byKey = new Map<string, ControllerOption<unknown>>();
  const byFlag = new Map<string, ControllerOption<unknown>>();
  for (const o of declared) {
    const flagName = o.flag.split(' ')[0]!;
    const sameKey = byKey.get(o.key);
    const sameFlag = byFlag.get(flagName);
    if ((sameKey && sameKey !== o) || (sameFlag && sameFlag !== o)) {
      throw new Error(
        `controller option ${o.key} (${flagName}) is declared twice with different definitions; declare it once and share it`,
      );
    }
    byKey.set(o.key, o);
    byFlag.set(flagName, o);
  }
  return [...byKey.values()];
}

/** Options every process of the runtime may declare: shared so the manager and the daemon agree. */
export const SHARED_OPTIONS = {
  /** Where pull secrets are copied for the daemons (upstream's `kruise-daemon-config`). */
  daemonConfigNamespace: stringOption(
    'daemonConfigNamespace',
    '--daemon-config-namespace <ns>',
    'namespace the manager copies image pull secrets into and the daemon reads them from (default: $KRUISE_DAEMON_CONFIG_NS, else kruise-daemon-config)',
    (env) => env[RUNTIME_ENV.daemonConfigNamespace] ?? DAEMON_CONFIG_NAMESPACE,
  ),
} as const;
