import { describe, expect, it } from 'vitest';
import { goJson } from '../../../../src/runtime/core/client.js';
import { revisionData } from '../../../../src/runtime/control/controller-revision.js';

// Request bodies are written as Go's encoding/json writes them. The API server stores a
// ControllerRevision's `data` as sent and re-encodes it the Go way when it applies a patch; a body with a
// literal `&` (the shell command of a real pod) then made a CloneSet rollback's renumbering patch fail
// with "data: Invalid value … field is immutable" for ever, and the rollback stalled.
describe('request bodies encoded the Go way', () => {
  it.each([
    ['plain text', { a: 'x' }, '{"a":"x"}'],
    ['ampersand', { a: 'sleep 1 & wait $!' }, '{"a":"sleep 1 \\u0026 wait $!"}'],
    ['angle brackets', { a: '<b>' }, '{"a":"\\u003cb\\u003e"}'],
    ['line and paragraph separators', { a: '\u2028\u2029' }, '{"a":"\\u2028\\u2029"}'],
    ['quotes and control characters as JSON.stringify', { a: '"\n\t' }, '{"a":"\\"\\n\\t"}'],
    ['keys too', { 'a&b': 1 }, '{"a\\u0026b":1}'],
  ] as const)('%s', (_n, value, want) => {
    expect(goJson(value)).toBe(want);
    expect(JSON.parse(goJson(value))).toEqual(value);
  });

  it('revision data with a shell command keeps its key order and only changes the escaped characters', () => {
    const template = {
      metadata: { labels: { app: 'rc' } },
      spec: { containers: [{ name: 'main', command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1 & wait $!; done'] }] },
    };
    const data = revisionData(template);
    const go = goJson(data);
    expect(go).not.toContain('&');
    expect(go.replaceAll('\\u0026', '&')).toBe(JSON.stringify(data));
  });
});
