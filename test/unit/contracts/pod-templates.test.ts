import { describe, expect, it } from 'vitest';
import { firstChangeNotInPlace } from '../../../src/contracts/pod-templates.js';

const spec = (containers: object[], extra: object = {}) => ({ containers, ...extra });
const c = (image: string, extra: object = {}) => ({ name: 'c', image, ...extra });

describe('firstChangeNotInPlace (what an InPlaceOnly update cannot carry out)', () => {
  it.each([
    ['only images changed', spec([c('a:2')]), spec([c('a:1')]), undefined],
    ['nothing changed', spec([c('a:1')], { nodeSelector: { zone: 'x' } }), spec([c('a:1')], { nodeSelector: { zone: 'x' } }), undefined],
    ['an env var added', spec([c('a:2', { env: [{ name: 'A', value: 'b' }] })]), spec([c('a:1')]), ['containers', 0, 'env']],
    [
      'an env value changed',
      spec([c('a:1', { env: [{ name: 'A', value: 'b' }] })]),
      spec([c('a:1', { env: [{ name: 'A', value: 'c' }] })]),
      ['containers', 0, 'env', 0, 'value'],
    ],
    ['a container added', spec([c('a:1'), { name: 'd', image: 'd:1' }]), spec([c('a:1')]), ['containers', 1]],
    ['a container removed', spec([c('a:1')]), spec([c('a:1'), { name: 'd', image: 'd:1' }]), ['containers', 1]],
    [
      'a pod-level field',
      spec([c('a:2')], { nodeSelector: { zone: 'y' } }),
      spec([c('a:1')], { nodeSelector: { zone: 'x' } }),
      ['nodeSelector', 'zone'],
    ],
    ['no pod spec before', spec([c('a:1')]), undefined, ['containers', 0]],
  ])('%s', (_what, now, was, path) => {
    expect(firstChangeNotInPlace(now, was)).toEqual(path);
  });
});
