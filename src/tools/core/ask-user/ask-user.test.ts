import { describe, expect, it } from 'vitest';
import { validateAskUser } from './ask-user.js';

const opt = (label: string) => ({ label });
const q = (over: Record<string, unknown> = {}) => ({ id: 'deploy_target', header: 'Target', question: 'Where should it deploy?', options: [opt('Staging (Recommended)'), opt('Production')], ...over });

describe('validateAskUser', () => {
  const rejected: Array<[string, unknown, string, string]> = [
    ['not an object', 'deploy?', 'discord', 'arguments must be an object'],
    ['unknown top-level key', { questions: [q()], urgent: true }, 'discord', 'urgent: unknown key'],
    ['no questions', { questions: [] }, 'discord', 'questions: 0 given; ask 1-3 questions'],
    ['four questions', { questions: [q({ id: 'a' }), q({ id: 'b' }), q({ id: 'c' }), q({ id: 'd' })] }, 'discord', 'questions: 4 given'],
    ['questions not an array', { questions: q() }, 'discord', 'questions: must be an array'],
    ['one option', { questions: [q({ options: [opt('Yes')] })] }, 'discord', 'questions[0].options: 1 given; offer 2-5 options'],
    ['six options', { questions: [q({ options: ['a', 'b', 'c', 'd', 'e', 'f'].map(opt) })] }, 'discord', 'questions[0].options: 6 given'],
    ['id not snake_case', { questions: [q({ id: 'Deploy-Target' })] }, 'discord', 'questions[0].id: must be snake_case'],
    ['duplicate ids', { questions: [q(), q()] }, 'discord', 'questions[1].id: "deploy_target" is used twice'],
    ['header too long', { questions: [q({ header: 'Deployment target' })] }, 'discord', 'questions[0].header: 17 characters; at most 12'],
    ['empty question', { questions: [q({ question: '  ' })] }, 'discord', 'questions[0].question: must be a non-empty string'],
    ['question too long', { questions: [q({ question: 'x'.repeat(301) })] }, 'discord', 'questions[0].question: 301 characters; at most 300'],
    ['label over Discord 80', { questions: [q({ options: [opt('x'.repeat(81)), opt('b')] })] }, 'discord', 'questions[0].options[0].label: 81 characters; at most 80 (discord button limit)'],
    ['label over Slack 75', { questions: [q({ options: [opt('a'), opt('x'.repeat(76))] })] }, 'slack', 'questions[0].options[1].label: 76 characters; at most 75 (slack button limit)'],
    ['label over the unknown-platform 75', { questions: [q({ options: [opt('a'), opt('x'.repeat(76))] })] }, 'cron', 'questions[0].options[1].label: 76 characters; at most 75'],
    ['empty label', { questions: [q({ options: [opt(''), opt('b')] })] }, 'discord', 'questions[0].options[0].label: must be a non-empty string'],
    ['duplicate label', { questions: [q({ options: [opt('Yes'), opt('Yes')] })] }, 'discord', 'questions[0].options[1].label: "Yes" is offered twice'],
    ['authored Other', { questions: [q({ options: [opt('Yes'), opt('Other…')] })] }, 'discord', 'do not add an "Other" option'],
    ['description too long', { questions: [q({ options: [{ label: 'a', description: 'd'.repeat(101) }, opt('b')] })] }, 'discord', 'questions[0].options[0].description: 101 characters; at most 100'],
    ['unknown option key', { questions: [q({ options: [{ label: 'a', value: 1 }, opt('b')] })] }, 'discord', 'questions[0].options[0].value: unknown key'],
    ['multiSelect', { questions: [q({ multiSelect: true })] }, 'discord', 'questions[0].multiSelect: not supported here'],
    ['fractional timeout', { questions: [q()], timeoutSeconds: 1.5 }, 'discord', 'timeoutSeconds: must be an integer'],
  ];
  it.each(rejected)('rejects %s with an error naming the key', (_name, args, provider, error) => {
    const checked = validateAskUser(args, provider);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.error).toContain(error);
  });

  const accepted: Array<[string, unknown, string, number]> = [
    ['one question, two options, default timeout', { questions: [q()] }, 'discord', 900],
    ['three questions, five options each', { questions: ['a', 'b', 'c'].map((id) => q({ id, options: ['1', '2', '3', '4', '5'].map(opt) })) }, 'slack', 900],
    ['80-character label on Discord', { questions: [q({ options: [opt('x'.repeat(80)), opt('b')] })] }, 'discord', 900],
    ['75-character label on Slack', { questions: [q({ options: [opt('x'.repeat(75)), opt('b')] })] }, 'slack', 900],
    ['multiSelect false', { questions: [q({ multiSelect: false })] }, 'web', 900],
    ['timeout under the floor is clamped to 30', { questions: [q()], timeoutSeconds: 5 }, 'discord', 30],
    ['timeout over the ceiling is clamped to 3600', { questions: [q()], timeoutSeconds: 99_999 }, 'discord', 3600],
  ];
  it.each(accepted)('accepts %s', (_name, args, provider, timeoutSec) => {
    const checked = validateAskUser(args, provider);
    expect(checked).toMatchObject({ ok: true, value: { timeoutSec } });
  });

  it('keeps labels and descriptions as given', () => {
    const checked = validateAskUser({ questions: [q({ options: [{ label: 'Staging', description: 'safe' }, opt('Prod')] })] }, 'discord');
    expect(checked.ok && checked.value.questions[0]!.options).toEqual([{ label: 'Staging', description: 'safe' }, { label: 'Prod' }]);
  });

});
