// Summarises a V8 CPU profile (`node --cpu-prof`): the functions with the most self time and the most
// inclusive time (time with the function on the stack, counted once per sample however deep it recurses).
// Usage: tsx bench/support/cpu-profile.ts FILE.cpuprofile [--top 30] [--since-ms 0]
//   --since-ms skips the samples of the first N ms (start-up and the initial list).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '30' }, 'since-ms': { type: 'string', default: '0' } },
});
const file = positionals[0];
if (!file) throw new Error('usage: tsx bench/support/cpu-profile.ts FILE.cpuprofile [--top 30] [--since-ms 0]');
const top = Number(values.top);
const sinceUs = Number(values['since-ms']) * 1000;
const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const label = (n: ProfileNode) => {
  const f = n.callFrame;
  const where = f.url ? `${f.url.replace(/^.*\//, '')}:${f.lineNumber + 1}:${f.columnNumber + 1}` : '';
  return `${f.functionName || '(anonymous)'} ${where}`.trim();
};

const self = new Map<string, number>();
const incl = new Map<string, number>();
let total = 0;
let t = 0;
for (let i = 0; i < prof.samples.length; i++) {
  const dt = prof.timeDeltas[i] ?? 0;
  t += dt;
  if (t < sinceUs) continue;
  // The delta before the next sample is the time this one stands for.
  const w = prof.timeDeltas[i + 1] ?? dt;
  total += w;
  const leaf = byId.get(prof.samples[i]!)!;
  self.set(label(leaf), (self.get(label(leaf)) ?? 0) + w);
  const seen = new Set<string>();
  for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
    const l = label(byId.get(id)!);
    if (seen.has(l)) continue;
    seen.add(l);
    incl.set(l, (incl.get(l) ?? 0) + w);
  }
}

const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${(v / 1000).toFixed(0).padStart(8)} ms ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
};
console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled (from ${values['since-ms']} ms)`);
show('self time', self);
show('inclusive time', incl);
