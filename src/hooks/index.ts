export { HOOK_BLOCK_DEFAULT_TEXT, HOOK_FAILURE_TEXT, HookBus, type BeforeToolCallOutcome, type PromptBuildOutcome } from './bus.js';
export * from './types.js';
