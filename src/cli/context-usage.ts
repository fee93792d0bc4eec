/** The context options every read-only command takes (`warden tools`, `access`, `exec-check`, …). */
export const CONTEXT_USAGE = [
  'context: --agent ID  --provider discord|slack|web|http  --chat dm|channel|thread',
  '         --guild ID [--guild-name NAME]  --channel ID  --channel-name NAME  --thread ID (channel = the parent)',
  '         --sender ID [--sender-name N] [--sender-username U] [--roles ID,ID] [--usergroups ID,ID]  --model PROVIDER/MODEL  --spawn-depth N',
  '         without --agent, the agent is the one `bindings` route this conversation to',
].join('\n');
