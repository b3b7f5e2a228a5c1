// The decision is shared with the node daemon's node-local terminator, so it lives in the runtime's core.
export * from '../../core/sidecar-termination.js';
