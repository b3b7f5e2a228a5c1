// The noisy neighbour of bench/leader-apf.bench.ts, in its own process so that the manager's electors are timed
// by an event loop the neighbour does not fill: `tenants` ServiceAccounts (impersonated by the admin of
// `kubeconfig`), each with `concurrency` loops listing the ConfigMaps of `namespace`. Bodies are drained unread.
// Prints its counters as one JSON line on SIGTERM.
//   argv: kubeconfig namespace tenants concurrency
import https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';

const [kubeconfig, namespace, tenantsArg, concurrencyArg] = process.argv.slice(2);
const tenants = Number(tenantsArg);
const concurrency = Number(concurrencyArg);
if (!kubeconfig || !namespace || !(tenants >= 1) || !(concurrency >= 1)) {
  throw new Error('usage: leader-apf-neighbour.ts <kubeconfig> <namespace> <tenants ≥ 1> <concurrency ≥ 1>');
}
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const url = new URL(`/api/v1/namespaces/${namespace}/configmaps`, kc.getCurrentCluster()!.server);
const agent = new https.Agent({ keepAlive: true, maxSockets: tenants * concurrency });
const stats = { requests: 0, throttled429: 0, otherErrors: 0 };
let running = true;

async function list(user: string): Promise<number> {
  const req: https.RequestOptions = {
    method: 'GET',
    hostname: url.hostname,
    port: url.port,
    path: url.pathname,
    agent,
    headers: { accept: 'application/json', 'Impersonate-User': user },
  };
  await kc.applyToHTTPSOptions(req);
  return new Promise((resolve) => {
    const r = https.request(req, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    r.on('error', () => resolve(0));
    r.end();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const loops: Promise<void>[] = [];
for (let t = 0; t < tenants; t++) {
  const user = `system:serviceaccount:${namespace}:noisy-${t}`;
  for (let c = 0; c < concurrency; c++) {
    loops.push(
      (async () => {
        while (running) {
          const status = await list(user);
          if (status === 200) stats.requests++;
          else {
            if (status === 429) stats.throttled429++;
            else stats.otherErrors++;
            // A refused client backs off a little, as client-go does.
            await sleep(100);
          }
        }
      })(),
    );
  }
}

// Requests still queued in the API server are not waited for: the counters say what was answered.
process.once('SIGTERM', () => {
  running = false;
  process.stdout.write(`${JSON.stringify(stats)}\n`);
  process.exit(0);
});
