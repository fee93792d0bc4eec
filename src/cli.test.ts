import { describe, expect, it } from 'vitest';
import { main } from './cli.js';

async function run(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { cwd: process.cwd(), env: {}, stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

describe('warden', () => {
  it.each([['--help'], ['help']])('answers %s with the command list on stdout', async (arg) => {
    const { code, stdout } = await run([arg]);
    expect(code).toBe(0);
    expect(stdout).toContain('usage: warden <command>');
    expect(stdout).toMatch(/^ {2}exec-approvals {2}import or export/m);
  });

  it('treats no command as a usage error', async () => {
    const { code, stderr } = await run([]);
    expect(code).toBe(2);
    expect(stderr).toContain('usage: warden <command>');
  });

  it('names an unknown command', async () => {
    const { code, stderr } = await run(['tool']);
    expect(code).toBe(2);
    expect(stderr).toContain('warden: unknown command "tool" (did you mean "tools"?)');
  });
});
