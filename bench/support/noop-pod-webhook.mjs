// The floor of a pod webhook on this machine: a TLS HTTP/1.1 server that reads each AdmissionReview, parses it
// and allows it unchanged. Whatever latency the API server adds for calling it is the cost of calling any
// webhook here (the API server's side, TLS, scheduling), not of a webhook's own work.
// Run as: node noop-pod-webhook.mjs <port> <cert.pem> <key.pem>; prints "listening" once it serves.
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import process from 'node:process';

const [port, certFile, keyFile] = process.argv.slice(2);
const server = https.createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let uid;
    try {
      uid = JSON.parse(Buffer.concat(chunks).toString('utf8')).request.uid;
    } catch {
      res.writeHead(400).end();
      return;
    }
    const body = JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, allowed: true } });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  });
});
server.listen(Number(port), '127.0.0.1', () => process.stdout.write('listening\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
