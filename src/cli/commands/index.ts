import type { Command } from 'commander';

/**
 * Every sub-command of the `cdk8s-kruise` binary, registered in one place.
 * Each command module exports `register(program)`; add one line here per module.
 */
type Registrar = (program: Command) => void;

const registrars: Registrar[] = [
];

export function registerCommands(program: Command): void {
  for (const register of registrars) register(program);
}
