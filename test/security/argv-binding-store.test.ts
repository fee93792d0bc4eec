// An allow-always grant bound to one exact argv must stay exactly that argv after the store has
// kept it, on either engine. The binding separates arguments with NUL; PostgreSQL's text columns
// cannot hold NUL, and a store that replaced it (U+FFFD) would turn the binding into a regex over
// one string, which one crafted argument could satisfy. The attacker is the model writing the
// command after the owner approved `rm -rf build/` once with "allow always".
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execConfig } from '../../src/config/schema/exec.js';
import { exactArgPattern } from '../../src/exec/allowlist.js';
import { ExecAllowlistStore } from '../../src/exec/allowlist-store.js';
import { execPolicyFromConfig } from '../../src/exec/check.js';
import { evaluateExec } from '../../src/exec/decide.js';
import { openWardenStore } from '../../src/app/migrations.js';
import type { Store } from '../../src/store/index.js';
import { ENGINES, freshStoreTarget } from '../store-engines.js';

describe.each(ENGINES)('an exact-argv grant kept on %s', (engine) => {
  let store: Store;
  let dir: string;
  beforeEach(async () => {
    const where = await freshStoreTarget(engine);
    dir = where.dataDir;
    const opened = await openWardenStore({ dataDir: where.dataDir, url: where.url });
    if (!opened.ok) throw new Error(opened.error.message);
    store = opened.store;
    const allowlist = new ExecAllowlistStore(store.db, () => 1_000);
    await allowlist.add('main', { pattern: '/usr/bin/rm', argPattern: exactArgPattern(['-rf', 'build/']), source: 'allow-always' });
  });
  afterEach(async () => {
    await store.close();
  });

  it.each<[string, string, 'allow' | 'ask']>([
    ['the approved command', 'rm -rf build/', 'allow'],
    ['the same argv, quoted', `rm "-rf" 'build/'`, 'allow'],
    ['the same argv, spaced differently', 'rm  -rf   build/', 'allow'],
    ['both words as one argument', `rm '-rf build/'`, 'ask'],
    ['both words joined by a replacement character', `rm '-rf\uFFFDbuild/\uFFFD'`, 'ask'],
    ['a replacement character where the separator was, then a second argument', `rm '-rf\uFFFDbuild/' /`, 'ask'],
    ['one argument more', 'rm -rf build/ /', 'ask'],
    ['an empty argument more', "rm -rf build/ ''", 'ask'],
    ['one argument fewer', 'rm -rf', 'ask'],
    ['the path spelled otherwise', 'rm -rf build', 'ask'],
    ['the arguments swapped', 'rm build/ -rf', 'ask'],
  ])('%s: %s → %s', async (_what, command, expected) => {
    const entries = await new ExecAllowlistStore(store.db, () => 1_000).list('main');
    const policy = execPolicyFromConfig(execConfig.parse({}), entries);
    expect(evaluateExec(command, policy, { cwd: dir, home: dir, pathDirs: ['/usr/bin'] }).decision).toBe(expected);
  });
});
