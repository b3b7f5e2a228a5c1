import { DAEMON_EXIT_PRIORITY_PORT } from '../../../contracts/index.js';
import { positiveIntOption, type ControllerOption } from '../../core/options.js';

/** Where the exit-priority endpoint listens: the node's loopback, where the pods' preStop hooks point. */
export const EXIT_PRIORITY_ADDR: ControllerOption<string> = {
  key: 'exitPriorityAddr',
  flag: '--exit-priority-addr <host:port>',
  help: "listen address of the exit-priority preStop endpoint (pods' hooks point at 127.0.0.1 on the port the install uses)",
  defaultValue: () => `127.0.0.1:${DAEMON_EXIT_PRIORITY_PORT}`,
  parse: (raw) => {
    parseHostPort(raw);
    return raw;
  },
};

/** Hook requests held at once; more are answered 503 at once (the kubelet then stops the container). */
export const MAX_EXIT_PRIORITY_WAITS = positiveIntOption(
  'maxExitPriorityWaits',
  '--max-exit-priority-waits <n>',
  'exit-priority hooks held at once on this node',
  1024,
);

/** `host:port` (port 0 = any free port); throws a message that says what is expected. */
export function parseHostPort(raw: string): { host: string; port: number } {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(raw);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) throw new Error(`--exit-priority-addr: "${raw}" is not host:port (e.g. 127.0.0.1:${DAEMON_EXIT_PRIORITY_PORT})`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}
