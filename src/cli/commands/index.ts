import type { Command } from 'commander';
import { register as validate } from './validate.js';
import { register as explain } from './explain.js';
import { register as synth } from './synth.js';
import { register as schema } from './schema.js';
import { register as controller } from './controller.js';
import { register as daemon } from './daemon.js';
import { register as apply } from './apply.js';
import { register as image } from './image.js';
import { register as uninstall } from './uninstall.js';
import { register as status } from './status.js';

/**
 * Every sub-command of the `cdk8s-kruise` binary, registered in one place.
 * Each command module exports `register(program)`; add one line here per module.
 */
type Registrar = (program: Command) => void;

const registrars: Registrar[] = [controller, daemon, validate, explain, synth, schema, apply, uninstall, status, image];

export function registerCommands(program: Command): void {
  for (const register of registrars) register(program);
}
