// Child process of runtime/core/hostile-process-guard.test.ts: installs the runtime's process guards, then misbehaves
// the ways a bug would, and reports whether it is still running.
import { pino } from 'pino';
import { installProcessGuards } from '../../../src/runtime/core/process-guard.js';

const logger = pino({ level: 'info' }, process.stderr);
installProcessGuards(logger, { maxUncaught: Number(process.argv[2] ?? 5), windowMs: 60_000 });

void Promise.reject(new Error('forgotten catch'));
setTimeout(() => {
  throw new Error('thrown from a timer');
}, 10);
setTimeout(() => {
  throw new Error('thrown again from a timer');
}, 20);
setTimeout(() => {
  process.stdout.write('alive\n');
  process.exit(0);
}, 200);
