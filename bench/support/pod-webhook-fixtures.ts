// The SidecarSet both pod-webhook benches inject (the logtail seed's shape: shared volumes, a transferred env
// var, its own volume and pull secret), so that the in-process CPU bench measures the path the peer bench loads.

export const BENCH_SIDECARSET_NAME = 'bench-logtail';

export const BENCH_SIDECARSET_SPEC = {
  selector: { matchLabels: { app: 'bench' } },
  containers: [
    {
      name: 'logtail',
      image: 'registry.example/logtail:1',
      shareVolumePolicy: { type: 'enabled' },
      transferEnv: [{ sourceContainerName: 'app', envName: 'REGION' }],
      volumeMounts: [{ name: 'logs', mountPath: '/var/log/app' }],
    },
  ],
  volumes: [{ name: 'logs', emptyDir: {} }],
  imagePullSecrets: [{ name: 'logtail-cred' }],
};
