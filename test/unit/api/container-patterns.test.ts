import { describe, expect, it } from 'vitest';
import {
  declaredTerminatedSidecars,
  exitPrioritiesFromPatterns,
  formatTerminateSidecars,
  matchesContainer,
  parseExitPriorityPatterns,
  parseTerminateSidecars,
  patternProblem,
} from '../../../src/api/container-patterns.js';

const ANN = 'kruise.cdk8s.io/terminate-sidecars';
const PRIO = 'kruise.cdk8s.io/container-exit-priority-patterns';

describe('container patterns: which patterns are accepted', () => {
  const table: Array<[string, RegExp | undefined]> = [
    ['istio-proxy', undefined],
    ['^vault-agent(-init)?$', undefined],
    ['cloud-sql-proxy|gce-proxy', undefined],
    ['.*proxy.*', undefined],
    ['[a-z]+-(proxy|agent)', undefined],
    ['a{2,3}', undefined],
    ['(ab)?c', undefined],
    ['', /is empty/],
    ['(', /not a valid regular expression/],
    ['(a+)+$', /repeats a group that itself repeats/],
    ['(a|aa)*b', /repeats a group that itself repeats or alternates/],
    ['((a)*)*', /repeats a group/],
    ['(a*){2,}', /repeats a group/],
    ['(a)\\1', /backreference/],
    ['a*b*c*d*', /more than 3 unbounded quantifiers/],
    ['x'.repeat(129), /longer than 128/],
  ];
  for (const [source, problem] of table) {
    it(`/${source.slice(0, 30)}/ → ${problem ? problem.source : 'accepted'}`, () => {
      const got = patternProblem(source);
      if (problem) expect(got).toMatch(problem);
      else expect(got).toBeUndefined();
    });
  }

  it('an escaped paren or a class with a quantifier inside is not a group', () => {
    expect(patternProblem('\\(a+\\)+')).toBeUndefined();
    expect(patternProblem('[(a+)]+')).toBeUndefined();
  });
});

describe('container patterns: matching', () => {
  const c = (name: string, image = `example.io/${name}:1`) => ({ name, image });
  const table: Array<[object, { name: string; image: string }, boolean]> = [
    [{ name: 'istio-proxy' }, c('istio-proxy'), true],
    [{ name: 'istio-proxy' }, c('istio-proxy-2'), false],
    [{ namePattern: '^vault-agent$' }, c('vault-agent'), true],
    [{ namePattern: '^vault-agent$' }, c('vault-agent-init'), false],
    [{ namePattern: 'proxy' }, c('my-proxy-x'), true],
    [{ imagePattern: 'cloud-sql-proxy' }, c('sql', 'gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11'), true],
    [{ imagePattern: 'cloud-sql-proxy' }, c('cloud-sql-proxy', 'busybox'), false],
    [{ imagePattern: 'proxy' }, c('x', `registry.example.com/${'a'.repeat(600)}/proxy:1`), false],
  ];
  for (const [match, container, expected] of table) {
    it(`${JSON.stringify(match)} on ${container.name} → ${expected}`, () => {
      expect(matchesContainer(match as never, container)).toBe(expected);
    });
  }
});

describe('kruise.cdk8s.io/terminate-sidecars', () => {
  it('parses entries with shutdowns and keeps the annotation form stable', () => {
    const raw =
      '[{"name":"istio-proxy","ignoreExitCode":true,"shutdown":{"exec":{"command":["pilot-agent","request","POST","quitquitquit"]}}},' +
      '{"imagePattern":"cloud-sql-proxy"},{"namePattern":"^mesh-","shutdown":{"httpPost":{"port":15020,"path":"/quitquitquit"}}}]';
    const { entries, issues } = parseTerminateSidecars(raw);
    expect(issues).toEqual([]);
    expect(entries).toEqual([
      {
        match: { name: 'istio-proxy' },
        ignoreExitCode: true,
        shutdown: { exec: { command: ['pilot-agent', 'request', 'POST', 'quitquitquit'] } },
      },
      { match: { imagePattern: 'cloud-sql-proxy' }, ignoreExitCode: false },
      { match: { namePattern: '^mesh-' }, ignoreExitCode: false, shutdown: { httpPost: { port: 15020, path: '/quitquitquit' } } },
    ]);
    expect(formatTerminateSidecars(entries)).toBe(raw);
  });

  const hostile: Array<[string, RegExp, 'unusable' | 'never-matches' | 'shutdown']> = [
    ['{', /not valid JSON/, 'unusable'],
    ['{"name":"x"}', /must be a JSON list/, 'unusable'],
    [JSON.stringify(Array.from({ length: 33 }, () => ({ name: 'x' }))), /more than 32/, 'unusable'],
    ['[1]', /must be an object/, 'never-matches'],
    ['[{}]', /exactly one of name, namePattern, imagePattern \(has 0\)/, 'never-matches'],
    ['[{"name":"a","imagePattern":"b"}]', /\(has 2\)/, 'never-matches'],
    ['[{"name":"Istio_Proxy"}]', /not a valid container name/, 'never-matches'],
    ['[{"namePattern":""}]', /is empty/, 'never-matches'],
    ['[{"imagePattern":"(a+)+"}]', /exponential/, 'never-matches'],
    ['[{"namePattern":7}]', /must be a string/, 'never-matches'],
    ['[{"name":"x","shutdown":{"httpPost":{"port":0,"path":"/q"}}}]', /TCP port/, 'shutdown'],
    ['[{"name":"x","shutdown":{"httpPost":{"port":80,"path":"q q"}}}]', /must start with "\/"/, 'shutdown'],
    ['[{"name":"x","shutdown":{"exec":{"command":[]}}}]', /non-empty strings/, 'shutdown'],
    ['[{"name":"x","shutdown":{"exec":{"command":["a"]},"httpPost":{"port":1,"path":"/"}}}]', /exactly one of exec, httpPost/, 'shutdown'],
    ['[{"name":"x","ignoreExitCode":"yes"}]', /ignoreExitCode must be true or false/, 'shutdown'],
  ];
  for (const [raw, message, kind] of hostile) {
    it(`hostile ${raw.slice(0, 60)} → ${kind}`, () => {
      const { issues } = parseTerminateSidecars(raw);
      expect(issues[0]?.kind).toBe(kind);
      expect(issues[0]?.message).toMatch(message);
    });
  }

  it('a bad shutdown keeps the entry with SIGTERM', () => {
    const { entries } = parseTerminateSidecars('[{"name":"x","shutdown":{"httpPost":{"port":0,"path":"/q"}}}]');
    expect(entries).toEqual([{ match: { name: 'x' }, ignoreExitCode: false }]);
  });

  const containers = [
    { name: 'main', image: 'example.io/app:1' },
    { name: 'istio-proxy', image: 'docker.io/istio/proxyv2:1.24' },
    { name: 'sql', image: 'gcr.io/cloud-sql-connectors/cloud-sql-proxy:2' },
    { name: 'marked', image: 'x', env: [{ name: 'KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT', value: 'true' }] },
  ];

  it('declares the matching containers, first entry wins, env-marked containers keep their marker', () => {
    const got = declaredTerminatedSidecars(
      { [ANN]: '[{"name":"istio-proxy","ignoreExitCode":true},{"imagePattern":"proxy"},{"namePattern":"marked"}]' },
      containers,
    );
    expect([...got]).toEqual([
      ['istio-proxy', { ignoreExitCode: true }],
      ['sql', { ignoreExitCode: false }],
    ]);
  });

  it('a declaration that would leave no main container declares nothing', () => {
    expect(declaredTerminatedSidecars({ [ANN]: '[{"namePattern":"."}]' }, containers).size).toBe(0);
    expect(declaredTerminatedSidecars({ [ANN]: '[{"namePattern":"^(main|istio-proxy|sql)$"}]' }, containers).size).toBe(0);
  });

  it('no annotation, or an unusable one, declares nothing', () => {
    expect(declaredTerminatedSidecars(undefined, containers).size).toBe(0);
    expect(declaredTerminatedSidecars({ [ANN]: 'nope' }, containers).size).toBe(0);
  });
});

describe('kruise.cdk8s.io/container-exit-priority-patterns', () => {
  it('resolves patterns for containers the explicit map does not name', () => {
    const annotations = { [PRIO]: '[{"name":"istio-proxy","priority":2},{"namePattern":"agent","priority":1}]' };
    const containers = [{ name: 'app' }, { name: 'istio-proxy' }, { name: 'log-agent' }];
    expect(exitPrioritiesFromPatterns(annotations, containers, {})).toEqual({ 'istio-proxy': 2, 'log-agent': 1 });
    expect(exitPrioritiesFromPatterns(annotations, containers, { 'log-agent': 3 })).toEqual({ 'istio-proxy': 2 });
  });

  it('reports bad priorities and never-matching entries', () => {
    const { entries, issues } = parseExitPriorityPatterns(
      '[{"name":"x","priority":-1},{"namePattern":"(","priority":1},{"name":"y","priority":1}]',
    );
    expect(entries).toEqual([{ match: { name: 'y' }, priority: 1 }]);
    expect(issues.map((i) => i.kind)).toEqual(['priority', 'never-matches']);
  });
});
