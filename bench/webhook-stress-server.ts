// The webhook server of bench/webhook-stress.bench.ts, in its own process so that its RSS is the
// manager's: the shipped admission server, default limits, the kind-validation webhooks, a fresh
// certificate. Prints {port, ca} as one JSON line on stdout; on SIGTERM prints its event-loop delay
// (how long the loop was blocked: what a slow request costs every other request) and exits.
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { pino } from 'pino';
import { RuntimeMetrics } from '../src/runtime/core/metrics.js';
import { createCA, issueServingCert } from '../src/runtime/core/webhook/cert-issuer.js';
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
// GC pauses stall the one event loop like any other work: totals and the longest, minor and major apart.
const gc = { minorMs: 0, minorMaxMs: 0, majorMs: 0, majorMaxMs: 0, majorCount: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
      gc.minorMs += e.duration;
      gc.minorMaxMs = Math.max(gc.minorMaxMs, e.duration);
    } else {
      gc.majorMs += e.duration;
      gc.majorMaxMs = Math.max(gc.majorMaxMs, e.duration);
      gc.majorCount++;
    }
  }
}).observe({ entryTypes: ['gc'] });
process.on('SIGTERM', () => {
  loop.disable();
  const ms = (ns: number) => Math.round(ns / 1e5) / 10;
  process.stdout.write(
    `${JSON.stringify({ loopDelayP99Ms: ms(loop.percentile(99)), loopDelayMaxMs: ms(loop.max), gc: Object.fromEntries(Object.entries(gc).map(([k, v]) => [k, Math.round(v)])) })}\n`,
    () => process.exit(0),
  );
});
