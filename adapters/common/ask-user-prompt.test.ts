import { describe, expect, it } from 'vitest';
import { ASK_USER_LIMITS } from '../../src/tools/core/ask-user/ask-user.js';
import { ASK_BUTTON_PREFIX, ASK_MODAL_PREFIX, ASK_OTHER_PREFIX, askButtonId, askModalId, askOtherId, decodeAskId } from './ask-user-prompt.js';

const UUID = '123e4567-e89b-12d3-a456-426614174000';

describe('ask_user prompt ids', () => {
  it('stay within Discord custom_id (100) and Slack action_id (255) limits at the largest indexes', () => {
    const q = ASK_USER_LIMITS.questions.max - 1;
    const o = ASK_USER_LIMITS.options.max - 1;
    for (const id of [askButtonId(UUID, q, o), askOtherId(UUID, q), askModalId(UUID, q)]) expect(id.length).toBeLessThanOrEqual(100);
  });

  const cases: Array<[string, string, string, ReturnType<typeof decodeAskId>]> = [
    ['an option button', askButtonId(UUID, 2, 4), ASK_BUTTON_PREFIX, { id: UUID, question: 2, option: 4 }],
    ['the Other button', askOtherId(UUID, 1), ASK_OTHER_PREFIX, { id: UUID, question: 1, option: -1 }],
    ['the form', askModalId(UUID, 0), ASK_MODAL_PREFIX, { id: UUID, question: 0, option: -1 }],
    ['another prefix', askOtherId(UUID, 1), ASK_BUTTON_PREFIX, undefined],
    ['a button id without an option', `${ASK_BUTTON_PREFIX}${UUID}:1`, ASK_BUTTON_PREFIX, undefined],
    ['an extra part', `${ASK_BUTTON_PREFIX}${UUID}:1:2:3`, ASK_BUTTON_PREFIX, undefined],
    ['a two-digit index', `${ASK_BUTTON_PREFIX}${UUID}:10:2`, ASK_BUTTON_PREFIX, undefined],
    ['a short id', `${ASK_BUTTON_PREFIX}abc:1:2`, ASK_BUTTON_PREFIX, undefined],
    ['an id with odd characters', `${ASK_BUTTON_PREFIX}${UUID.replace('-', '/')}:1:2`, ASK_BUTTON_PREFIX, undefined],
  ];
  it.each(cases)('decodes %s', (_name, customId, prefix, expected) => {
    expect(decodeAskId(customId, prefix)).toEqual(expected);
  });
});
