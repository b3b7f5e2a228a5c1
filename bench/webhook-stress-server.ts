// The webhook server of bench/webhook-stress.bench.ts, in its own process so that its RSS is the
// manager's: the shipped admission server, default limits, the kind-validation webhooks, a fresh
// certificate. Prints {port, ca} as one JSON line on stdout; on SIGTERM prints its event-loop delay
// (how long the loop was blocked: what a slow request costs every other request) and exits.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pino } from 'pino';
import { RuntimeMetrics } from '../src/runtime/core/metrics.js';
import { createCA, issueServingCert } from '../src/runtime/core/webhook/certs.js';
import { AdmissionServer } from '../src/runtime/core/webhook/server.js';
import { installProcessGuards } from '../src/runtime/core/process-guard.js';
import { kruiseValidationWebhook } from '../src/runtime/webhooks/kruisevalidation/index.js';

// tsx turns source maps on; the shipped manager (the CLI bundle) runs without them. With them on, each error
// a hostile socket raises (EPIPE, ECONNRESET) pays for a source-mapped stack trace.
process.setSourceMapsEnabled(false);
const logger = pino({ level: 'fatal' });
installProcessGuards(logger);
const ca = await createCA(3600_000);
const serving = await issueServingCert(ca, ['127.0.0.1', 'localhost'], 3600_000);
const server = new AdmissionServer(logger, new RuntimeMetrics());
for (const h of kruiseValidationWebhook.setup({} as never)) server.register(h);
server.setCertificate(serving.cert, serving.key);
const port = await server.listen(0, '127.0.0.1');
process.stdout.write(`${JSON.stringify({ port, ca: ca.caCert })}\n`);

const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
process.on('SIGTERM', () => {
  loop.disable();
  const ms = (ns: number) => Math.round(ns / 1e5) / 10;
  process.stdout.write(`${JSON.stringify({ loopDelayP99Ms: ms(loop.percentile(99)), loopDelayMaxMs: ms(loop.max) })}\n`, () =>
    process.exit(0),
  );
});
