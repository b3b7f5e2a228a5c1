import { INPUT_EMPTY, INPUT_ERROR } from '../parse.js';
import type { Rule } from '../types.js';

// Findings of these two rules come from the input parser (they exist before there is an object to check); the
// rules are registered so they can be explained, selected and skipped like the others.
export const inputUnreadable: Rule = {
  id: INPUT_ERROR,
  severity: 'error',
  title: 'Input is not a readable Kubernetes manifest',
  doc:
    'Every input document must be a YAML or JSON mapping with apiVersion and kind. Malformed YAML or JSON (reported ' +
    'with the line and column where parsing failed), binary or non-UTF-8 files, scalars or arrays where an object is ' +
    'expected, and objects without apiVersion or kind are reported here; the other documents of the same file are ' +
    'still checked.',
  check: () => [],
};

export const inputEmpty: Rule = {
  id: INPUT_EMPTY,
  severity: 'warning',
  title: 'Input holds no documents',
  doc:
    'An input file (or directory, or standard input) that contains nothing but whitespace and comments usually means ' +
    'a wrong path or a failed generation step, so it is reported instead of passing silently.',
  check: () => [],
};

export const INPUT_RULES = [inputUnreadable, inputEmpty];
