import { InvalidArgumentError, Option, type Command } from 'commander';
import type { ControllerOption } from '../../runtime/core/options.js';

/** Adds one flag per declared controller option, with its help, default and parser. */
export function addControllerOptions(cmd: Command, options: readonly ControllerOption<unknown>[]): Command {
  for (const o of options) {
    cmd.addOption(
      new Option(o.flag, o.help).argParser((raw: string) => {
        try {
          return o.parse(raw);
        } catch (error) {
          throw new InvalidArgumentError((error as Error).message);
        }
      }),
    );
  }
  return cmd;
}

/** The parsed values of the declared options that were given, by option key (commander's camelCase). */
export function givenControllerOptions(
  parsed: Readonly<Record<string, unknown>>,
  options: readonly ControllerOption<unknown>[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const o of options) {
    const attribute = new Option(o.flag).attributeName();
    if (parsed[attribute] !== undefined) out[o.key] = parsed[attribute];
  }
  return out;
}
