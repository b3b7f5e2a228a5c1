/** A mistake in how a command or the engine was called (unknown rule id, bad format, missing input): exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
