// Only registry credentials are copied into the daemon-config namespace: an ImagePullJob naming a
// service-account token or a TLS Secret must not hand it to every node's daemon.
import { describe, expect, it } from 'vitest';
import { pullSecretCopyRefusal } from '../../../../../src/runtime/controllers/imagepulljob/decision.js';

const secret = (type?: string) => ({ metadata: { name: 's', namespace: 'team-a' }, ...(type === undefined ? {} : { type }) });

describe('pullSecretCopyRefusal', () => {
  it.each([
    ['kubernetes.io/dockerconfigjson', undefined],
    ['kubernetes.io/dockercfg', undefined],
    ['kubernetes.io/service-account-token', /team-a\/s has type "kubernetes.io\/service-account-token", not a registry credential/],
    ['kubernetes.io/tls', /not a registry credential/],
    ['Opaque', /not a registry credential/],
    [undefined, /has type "Opaque"/],
    ['KUBERNETES.IO/DOCKERCONFIGJSON', /not a registry credential/],
    ['x'.repeat(10_000), /not a registry credential/],
  ])('type %s', (type, want) => {
    const r = pullSecretCopyRefusal(secret(type));
    if (want === undefined) expect(r).toBeUndefined();
    else {
      expect(r).toMatch(want);
      expect(r).toMatch(/kubectl create secret docker-registry/);
      expect(r!.length).toBeLessThan(400);
    }
  });
});
