// Where the prepare steps (test/prepare.d) put what the tests need outside the repository, as they compute it:
// ${XDG_CACHE_HOME:-$HOME/.cache}/cdk8s-kruise/<parts>. Each harness module adds its own override variable.
import { homedir } from 'node:os';
import path from 'node:path';

/** `<cache home>/cdk8s-kruise/<parts…>`. */
export function projectCacheDir(...parts: string[]): string {
  return path.join(process.env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'cdk8s-kruise', ...parts);
}
