// A client in its own process (so a busy server cannot slow it down, as it cannot slow the API server):
// POSTs `count` AdmissionReviews at once, each on its own connection, as the API server does when reviews
// are outstanding, and prints the HTTP status of each (or the connection error) as one JSON line.
//   argv: port caFile path count
import { readFileSync } from 'node:fs';
import { Buffer } from 'node:buffer';
import { request } from 'node:https';
import process from 'node:process';

const [port, caFile, path, count] = process.argv.slice(2);
const ca = readFileSync(caFile, 'utf8');

function post(i) {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${i}`,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      operation: 'CREATE',
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${i}` } },
    },
  });
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: Number(port),
        path,
        method: 'POST',
        ca,
        servername: 'localhost',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      },
    );
    req.on('error', (err) => resolve(err.code ?? err.message));
    req.end(body);
  });
}

const statuses = await Promise.all(Array.from({ length: Number(count) }, (_, i) => post(i)));
process.stdout.write(`${JSON.stringify(statuses)}\n`);
