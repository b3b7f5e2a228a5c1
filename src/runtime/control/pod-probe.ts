/**
 * How a PodProbeMarker's probe is named on a node: the PodProbeMarker controller writes each probe into the node's
 * NodePodProbe as `<marker>#<probe>`, and the NodePodProbe controller reads a result back to its marker and probe
 * by splitting that name. Upstream's format, so NodePodProbes written by either runtime read the same.
 */

/** Separates the marker's name from the probe's name (neither a DNS name nor a probe name may hold it). */
export const NODE_PROBE_NAME_SEPARATOR = '#';

/** The name of a marker's probe in a NodePodProbe. */
export function nodeProbeName(markerName: string, probeName: string): string {
  return `${markerName}${NODE_PROBE_NAME_SEPARATOR}${probeName}`;
}

/** The marker and probe of a NodePodProbe probe name; undefined for a name not of that form. */
export function splitNodeProbeName(name: string): { marker: string; probe: string } | undefined {
  const i = name.indexOf(NODE_PROBE_NAME_SEPARATOR);
  if (i <= 0 || i === name.length - 1) return undefined;
  return { marker: name.slice(0, i), probe: name.slice(i + 1) };
}

/** Whether a NodePodProbe probe name belongs to the marker `markerName`. */
export function isProbeOfMarker(name: string, markerName: string): boolean {
  return splitNodeProbeName(name)?.marker === markerName;
}

/**
 * The Failed result a node daemon reports for a probe whose container is not running (upstream's words, which both
 * daemons write): it says the container is being replaced or restarted, not that a running container failed its probe.
 */
export function nonRunningMessage(containerName: string): string {
  return `Container(${containerName}) is Non-running`;
}
