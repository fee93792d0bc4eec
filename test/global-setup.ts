// The tests that launch `bin/warden.js` run the build in dist/: bring it up to date with the
// sources first (a no-op when it is), so no test runs yesterday's JavaScript.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/build.mjs', import.meta.url)), '--quiet'], { stdio: 'inherit' });
}
