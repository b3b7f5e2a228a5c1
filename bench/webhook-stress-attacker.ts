// The hostile clients of bench/webhook-stress.bench.ts, in their own process so that the valid-review
// stream is timed by a process the attack does not slow down. Each slot keeps one hostile connection to
// the loopback server open and re-opens it (after a pause) when the server cuts it off. Prints counters
// as one JSON line on SIGTERM.
//   argv: port caFile slow partial partialBytes
import { readFileSync } from 'node:fs';
import { connect, type TLSSocket } from 'node:tls';

const [portArg, caFile, slowArg, partialArg, bytesArg, path] = process.argv.slice(2);
const port = Number(portArg);
const ca = readFileSync(caFile!, 'utf8');
const partialBytes = Number(bytesArg);
// The body stalls a little before its end: the server holds what arrived and waits for the rest.
const partialChunk = Buffer.alloc(Math.floor(partialBytes * 0.97), 0x61);
const stats = { slowOpened: 0, partialOpened: 0, partialBodiesSent: 0, refused503: 0, cutOff: 0, errors: 0 };
let attacking = true;
const sockets = new Set<TLSSocket>();

function open(kind: 'slow' | 'partial'): void {
  if (!attacking) return;
  const sock = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' });
  sockets.add(sock);
  let timer: NodeJS.Timeout | undefined;
  let answered = false;
  sock.on('secureConnect', () => {
    if (kind === 'slow') {
      stats.slowOpened++;
      sock.write(`POST ${path} HTTP/1.1\r\nhost: localhost\r\n`);
      // One header byte a second: a classic slow-headers client.
      timer = setInterval(() => sock.write('x'), 1000);
      return;
    }
    stats.partialOpened++;
    sock.write(
      `POST ${path} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${partialBytes}\r\n\r\n{"a":"`,
    );
    // Send the bulk unless already refused (saves this process the encryption of bodies nobody reads).
    setTimeout(() => {
      if (answered || sock.destroyed) return;
      stats.partialBodiesSent++;
      sock.write(partialChunk);
    }, 20);
  });
  sock.on('data', (c: Buffer) => {
    answered = true;
    if (c.toString('latin1', 0, 12).includes(' 503')) stats.refused503++;
  });
  sock.on('error', () => stats.errors++);
  sock.on('close', () => {
    if (timer) clearInterval(timer);
    sockets.delete(sock);
    if (!attacking) return;
    stats.cutOff++;
    setTimeout(() => open(kind), 1000).unref();
  });
}

const slow = Number(slowArg);
const partial = Number(partialArg);
// Ramp up over one second, like a botnet joining.
for (let i = 0; i < slow; i++) setTimeout(() => open('slow'), (i * 1000) / slow);
for (let i = 0; i < partial; i++) setTimeout(() => open('partial'), (i * 1000) / partial);
const keepAlive = setInterval(() => undefined, 1000);

process.on('SIGTERM', () => {
  attacking = false;
  clearInterval(keepAlive);
  for (const s of sockets) s.destroy();
  process.stdout.write(`${JSON.stringify(stats)}\n`, () => process.exit(0));
});
