import { describe, expect, it } from 'vitest';
import { reservedCommandNames } from '../../src/gateway/command-text.js';
import { skillCommandSpecs } from '../../src/skills/commands.js';
import { testSkill } from '../../src/skills/testing.js';
import { OWNER_COMMANDS } from '../../src/gateway/commands.js';
import { contextsFor, DISCORD_COMMAND_LIMIT, discordCommandDefinitions, memberPermissionsFor, sameCommands } from './commands.js';

const wanted = discordCommandDefinitions() as Array<Record<string, any>>;
/** What Discord returns for the same set: ids, versions, defaults, `required` left out when false. */
const asRegistered: Array<Record<string, any>> = wanted.map((c, i) => ({
  ...c,
  id: String(900 + i),
  application_id: '1',
  version: '7',
  options: c.options.map((o: Record<string, unknown>) => (o.required ? o : { ...o, required: undefined })),
}));

describe('discordCommandDefinitions', () => {
  it('fits Discord limits: lower-case names, descriptions of at most 100 characters', () => {
    for (const c of wanted) {
      expect(c.name).toMatch(/^[a-z]{1,32}$/);
      expect(c.description.length).toBeLessThanOrEqual(100);
      for (const o of c.options) expect(o.description.length).toBeLessThanOrEqual(100);
    }
    expect(wanted.find((c) => c.name === 'approve')?.options[1].choices.map((ch: any) => ch.value)).toEqual(['allow-once', 'allow-conversation', 'allow-timed', 'allow-always', 'deny']);
  });
});

describe('who Discord offers each command to', () => {
  // [command, contexts (0 guild, 1 the bot DM), default_member_permissions ("0": administrators only)].
  // Owner-only commands are offered only in the DM with the bot: in a guild Discord would show a
  // "0" command to every administrator, owner or not.
  it.each([
    ['cron', [1], '0'],
    ['nodes', [1], '0'],
    ['pair', [1], '0'],
    ['secrets', [1], '0'],
    ['tools', [0, 1], null],
    ['exec', [0, 1], null],
    ['approve', [0, 1], null],
    ['approvals', [0, 1], null],
    ['status', [0, 1], null],
    ['usage', [0, 1], null],
    ['skills', [0, 1], null],
    ['stop', [0, 1], null],
    ['help', [0, 1], null],
  ] as const)('/%s → contexts %j, permissions %s', (name, contexts, permissions) => {
    const c = wanted.find((w) => w.name === name)!;
    expect(c.contexts).toEqual(contexts);
    expect(c.default_member_permissions).toBe(permissions);
    expect(c).not.toHaveProperty('dm_permission');
  });

  it('every owner-only command is DM-only and hidden; every other command is offered in guilds and the bot DM', () => {
    expect(wanted.filter((c) => OWNER_COMMANDS.has(c.name)).map((c) => c.name).sort()).toEqual(['cron', 'nodes', 'pair', 'secrets']);
    for (const c of wanted) {
      const owner = OWNER_COMMANDS.has(c.name);
      expect(c.contexts, c.name).toEqual(owner ? [1] : [0, 1]);
      expect(c.contexts, c.name).toEqual(contextsFor(c.name));
      expect(c.default_member_permissions === '0', c.name).toBe(owner);
    }
    expect(memberPermissionsFor('cron')).toBe('0');
    expect(memberPermissionsFor('release_notes')).toBeNull();
  });

  it('skill commands are offered in guilds and the bot DM', () => {
    const defs = discordCommandDefinitions(skillCommandSpecs([testSkill('release-notes')], reservedCommandNames())) as Array<Record<string, any>>;
    expect(defs.at(-1)).toMatchObject({ name: 'release_notes', contexts: [0, 1], default_member_permissions: null });
  });
});

describe('skill commands on Discord', () => {
  const skills = skillCommandSpecs(
    [testSkill('release-notes', { description: 'Write release notes\nfrom the history. '.repeat(10) }), testSkill('run', { commandDispatch: { kind: 'tool', tool: 'exec', argMode: 'raw' } }), testSkill('status')],
    reservedCommandNames(),
  );
  const defs = discordCommandDefinitions(skills) as Array<Record<string, any>>;

  it('adds one command per skill, after the built-ins, with a free-text input option', () => {
    expect(defs.slice(0, wanted.length)).toEqual(wanted);
    const added = defs.slice(wanted.length);
    expect(added.map((c) => c.name)).toEqual(['release_notes', 'run', 'status_2']);
    for (const c of added) {
      expect(c.name).toMatch(/^[a-z0-9_]{1,32}$/);
      expect(c.description.length).toBeGreaterThan(0);
      expect(c.description.length).toBeLessThanOrEqual(100);
      expect(c.description).not.toContain('\n');
      expect(c.options).toEqual([{ type: 3, name: 'input', description: expect.any(String), required: false }]);
    }
    expect(added[1]!.options[0].description).toBe('Arguments for exec');
  });

  it('a changed skill set is a different registration; the same one is not', () => {
    expect(sameCommands(defs as any, discordCommandDefinitions(skills) as any)).toBe(true);
    expect(sameCommands(defs as any, wanted as any)).toBe(false);
    expect(sameCommands(defs as any, discordCommandDefinitions(skills.slice(1)) as any)).toBe(false);
  });

  it(`never asks Discord for more than ${DISCORD_COMMAND_LIMIT} commands`, () => {
    const many = skillCommandSpecs(Array.from({ length: 120 }, (_, i) => testSkill(`skill-${i}`)), reservedCommandNames());
    expect(discordCommandDefinitions(many)).toHaveLength(DISCORD_COMMAND_LIMIT);
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
    // A set registered before the owner-only commands were hidden: replaced on the next start.
    ['/cron registered for everyone', asRegistered.map((c) => (c.name === 'cron' ? { ...c, default_member_permissions: null } : c)), false],
    ['/nodes without its permissions field', asRegistered.map((c) => (c.name === 'nodes' ? { ...c, default_member_permissions: undefined } : c)), false],
    ['/tools hidden from members', asRegistered.map((c) => (c.name === 'tools' ? { ...c, default_member_permissions: '0' } : c)), false],
    ["Discord's default contexts (group DMs too)", asRegistered.map((c) => ({ ...c, contexts: [0, 1, 2] })), false],
    ['contexts left unset', asRegistered.map((c) => (c.name === 'tools' ? { ...c, contexts: undefined } : c)), false],
    ['/tools without its DM context', asRegistered.map((c) => (c.name === 'tools' ? { ...c, contexts: [0] } : c)), false],
    // The earlier registration: owner-only commands offered in guilds (hidden by permission only) — replaced.
    ['/cron offered in guilds and the bot DM', asRegistered.map((c) => (c.name === 'cron' ? { ...c, contexts: [0, 1] } : c)), false],
    ['every owner-only command offered in guilds and the bot DM', asRegistered.map((c) => (OWNER_COMMANDS.has(c.name) ? { ...c, contexts: [1, 0] } : c)), false],
    ['/secrets offered in guilds only', asRegistered.map((c) => (c.name === 'secrets' ? { ...c, contexts: [0] } : c)), false],
    ['/help offered in the bot DM only', asRegistered.map((c) => (c.name === 'help' ? { ...c, contexts: [1] } : c)), false],
    ['contexts in another order', asRegistered.map((c) => (c.contexts.length > 1 ? { ...c, contexts: [1, 0] } : c)), true],
  ])('%s → %s', (_label, registered, same) => {
    expect(sameCommands(registered as any, wanted as any)).toBe(same);
  });
});
