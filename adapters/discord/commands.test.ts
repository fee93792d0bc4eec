import { describe, expect, it } from 'vitest';
import { discordCommandDefinitions, sameCommands } from './commands.js';

const wanted = discordCommandDefinitions() as Array<Record<string, any>>;
/** What Discord returns for the same set: ids, versions, defaults, `required` left out when false. */
const asRegistered: Array<Record<string, any>> = wanted.map((c, i) => ({
  ...c,
  id: String(900 + i),
  application_id: '1',
  version: '7',
  default_member_permissions: null,
  options: c.options.map((o: Record<string, unknown>) => (o.required ? o : { ...o, required: undefined })),
}));

describe('discordCommandDefinitions', () => {
  it('fits Discord limits: lower-case names, descriptions of at most 100 characters', () => {
    for (const c of wanted) {
      expect(c.name).toMatch(/^[a-z]{1,32}$/);
      expect(c.description.length).toBeLessThanOrEqual(100);
      for (const o of c.options) expect(o.description.length).toBeLessThanOrEqual(100);
    }
    expect(wanted.find((c) => c.name === 'approve')?.options[1].choices.map((ch: any) => ch.value)).toEqual(['allow-once', 'allow-always', 'deny']);
  });
});

describe('sameCommands', () => {
  it.each([
    ['the same set as Discord returns it', asRegistered, true],
    ['the same set in another order', [...asRegistered].reverse(), true],
    ['nothing registered', [], false],
    ['one command missing', asRegistered.slice(1), false],
    ['a changed description', asRegistered.map((c) => (c.name === 'tools' ? { ...c, description: 'old' } : c)), false],
    ['a command Warden no longer has', [...asRegistered, { name: 'ping', description: 'x', type: 1 }], false],
    ['an option no longer required', asRegistered.map((c) => (c.name === 'exec' ? { ...c, options: [{ ...c.options[0], required: false }] } : c)), false],
  ])('%s → %s', (_label, registered, same) => {
    expect(sameCommands(registered as any, wanted as any)).toBe(same);
  });
});
