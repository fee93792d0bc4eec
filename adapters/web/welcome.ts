/**
 * The web chat's empty state: what a newcomer needs before typing anything — which model answers
 * (or the one config line that adds one), where the agent's files are, and three commands to
 * try. Sent with the history frame; the page shows it while the conversation is empty.
 */
export interface WebWelcome {
  /** "Model: anthropic/claude-sonnet-4-5", or why there is none and the line to add. */
  model: string;
  /** "Workspace: /abs/path — …". */
  workspace: string;
  try: Array<{ command: string; what: string }>;
}

export interface WelcomeFacts {
  /** The web chat agent's model ref, if any. */
  model: string | undefined;
  /** The environment variable holding the model's key when it is not set (a keyless local server is fine). */
  missingKey?: string | undefined;
  workspace: string;
  /** The config file, or undefined when Warden runs on its defaults. */
  configFile: string | undefined;
}

export const NO_MODEL_LINE = 'models: { default: anthropic/claude-sonnet-4-5 }';

export function webWelcome(facts: WelcomeFacts): WebWelcome {
  const file = facts.configFile ?? 'warden.config.yaml';
  const model = facts.model
    ? `Model: ${facts.model}${facts.missingKey ? ` — set ${facts.missingKey} in the environment or .env to chat` : ''}`
    : `No model yet: commands work, and to chat add \`${NO_MODEL_LINE}\` to ${file} and set ANTHROPIC_API_KEY (or another provider's model and key).`;
  return {
    model,
    workspace: `Workspace: ${facts.workspace} — the agent's files; /exec runs there.`,
    try: [
      { command: '/help', what: 'every command' },
      { command: '/tools', what: 'the tools the agent may use here, and why not the others' },
      { command: '/exec ls -la', what: 'a shell command in the workspace (asks you first)' },
    ],
  };
}
