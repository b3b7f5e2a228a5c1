// README.md's "A short tour" as the program a user pastes into `main.ts` of a `cdk8s init typescript-app` app:
// its ```ts blocks, in order. A block that cannot be part of that program (an alternative, a fragment) is
// preceded by the line `<!-- tour: skip (why) -->` and left out; keep such blocks rare.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const README = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../README.md');
const SECTION = '## A short tour';
const SKIP = /^<!-- tour: skip \(.+\) -->$/;

export interface ReadmeTour {
  /** The blocks joined in order: one `main.ts`. */
  readonly program: string;
  /** How many blocks it joins. */
  readonly blocks: number;
  /** The reasons given for the blocks left out. */
  readonly skipped: readonly string[];
}

export function readmeTour(readme: string = readFileSync(README, 'utf8')): ReadmeTour {
  const lines = readme.split('\n');
  const start = lines.indexOf(SECTION);
  if (start < 0) throw new Error(`README.md has no "${SECTION}" section`);
  const end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  const section = lines.slice(start + 1, end < 0 ? undefined : end);
  const blocks: string[] = [];
  const skipped: string[] = [];
  for (let i = 0; i < section.length; i++) {
    if (section[i] !== '```ts') continue;
    const close = section.indexOf('```', i + 1);
    if (close < 0) throw new Error(`README.md: unclosed code block in "${SECTION}"`);
    const body = section.slice(i + 1, close).join('\n');
    const before =
      section
        .slice(0, i)
        .filter((l) => l.trim() !== '')
        .at(-1) ?? '';
    if (SKIP.test(before)) skipped.push(before.slice('<!-- tour: skip ('.length, -') -->'.length));
    else blocks.push(body);
    i = close;
  }
  return { program: `${blocks.join('\n\n')}\n`, blocks: blocks.length, skipped };
}
