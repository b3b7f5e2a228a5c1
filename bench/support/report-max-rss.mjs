// Preloaded into a measured child process: on exit, writes its peak resident set size (KiB) to the file named by
// BENCH_MAX_RSS_FILE, so a bench can read the figure of a process it did not write.
import { writeFileSync } from 'node:fs';
import process from 'node:process';

const target = process.env.BENCH_MAX_RSS_FILE;
if (target) process.on('exit', () => writeFileSync(target, String(process.resourceUsage().maxRSS)));
