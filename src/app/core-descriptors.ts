import type { ToolDefinition } from '../agent/types.js';
import type { WardenConfig } from '../config/schema/index.js';
import { coreTool } from '../policy/catalog.js';
import type { JsonSchema, ToolMeta } from '../tools/types.js';
import { agentsListParameters, sessionsHistoryParameters, sessionsListParameters, sessionsSearchParameters, sessionsSendParameters, sessionsSpawnParameters, sessionStatusParameters, sessionsYieldParameters, subagentsParameters } from '../agent/tools/schemas.js';
import { gatewayParameters } from '../control/tools/gateway/gateway-schema.js';
import { nodesParameters } from '../control/tools/nodes/nodes-schema.js';
import { askUserParameters } from '../tools/core/ask-user/ask-user-schema.js';
import { browserParameters } from '../tools/core/browser/browser-schema.js';
import { conversationsListParameters, conversationsSendParameters, conversationsTurnParameters } from '../tools/core/conversations/conversations-schema.js';
import { cronParameters } from '../tools/core/cron/cron-schema.js';
import { execParameters } from '../tools/core/exec/exec-schema.js';
import { applyPatchParameters, editParameters, readParameters, writeParameters } from '../tools/core/fs/schemas.js';
import { imageGenerateParameters, imageParameters, pdfParameters, ttsParameters } from '../tools/core/media/media-schemas.js';
import { memoryGetParameters, memorySearchParameters } from '../tools/core/memory/memory-schemas.js';
import { messageParameters } from '../tools/core/message/message-schema.js';
import { processParameters } from '../tools/core/process/process-schema.js';
import { progressCardParameters } from '../tools/core/progress-card/progress-card-schema.js';
import { secretsParameters } from '../tools/core/secrets/secrets-schema.js';
import { webFetchParameters } from '../tools/core/web/web-fetch-schema.js';
import { webSearchParameters } from '../tools/core/web/web-search-schema.js';

/**
 * The core tools' descriptors: what the model is shown about each tool (its catalog entry's name
 * and description, and its argument schema), apart from the implementations, so computing a
 * surface, rendering `/exec`'s card or a turn's tool list loads no tool. An implementation loads
 * at its first call (`app/core-tools.ts`), and validates the call against the very schema object
 * listed here: each tool module imports its schema from the same file (`*-schema.ts` beside it).
 *
 * What gates a tool — owner-only, groups, profiles — is its catalog entry (`policy/catalog.ts`),
 * read by the surface and by the call chain's owner check alike; a descriptor carries that entry,
 * never a copy of it. `test/security/tool-descriptors.test.ts` loads every implementation and
 * checks it against its descriptor.
 *
 * A schema that depends on the config (web_fetch's bounds) is a function of it.
 */
const PARAMETERS: Readonly<Record<string, JsonSchema | ((config: WardenConfig) => JsonSchema)>> = {
  read: readParameters,
  write: writeParameters,
  edit: editParameters,
  apply_patch: applyPatchParameters,
  exec: execParameters,
  process: processParameters,
  web_search: webSearchParameters,
  web_fetch: webFetchParameters,
  memory_search: memorySearchParameters,
  memory_get: memoryGetParameters,
  sessions_list: sessionsListParameters,
  sessions_history: sessionsHistoryParameters,
  sessions_search: sessionsSearchParameters,
  conversations_list: conversationsListParameters,
  conversations_send: conversationsSendParameters,
  conversations_turn: conversationsTurnParameters,
  sessions_send: sessionsSendParameters,
  sessions_spawn: sessionsSpawnParameters,
  sessions_yield: sessionsYieldParameters,
  subagents: subagentsParameters,
  session_status: sessionStatusParameters,
  browser: browserParameters,
  message: messageParameters,
  cron: cronParameters,
  gateway: gatewayParameters,
  nodes: nodesParameters,
  agents_list: agentsListParameters,
  progress_card: progressCardParameters,
  ask_user: askUserParameters,
  image: imageParameters,
  pdf: pdfParameters,
  image_generate: imageGenerateParameters,
  tts: ttsParameters,
  secrets: secretsParameters,
};

/** A core tool as the policy and the model know it, without its implementation. */
export interface CoreToolDescriptor {
  /** The catalog entry: identity, description, and what gates the tool (owner-only, groups, profiles). */
  meta: ToolMeta;
  /** The argument schema under `config`: the object the implementation validates calls against. */
  parameters: JsonSchema;
}

/** The descriptor of a core tool under `config`, or undefined when the id is no core tool with a schema. */
export function coreToolDescriptor(id: string, config: WardenConfig): CoreToolDescriptor | undefined {
  const meta = coreTool(id);
  if (!meta || !Object.hasOwn(PARAMETERS, id)) return undefined;
  const entry = PARAMETERS[id]!;
  return { meta, parameters: typeof entry === 'function' ? entry(config) : entry };
}

/** What a turn shows the model for a core tool: the same shape the implementation path gave. */
export function coreToolDefinition(id: string, config: WardenConfig): ToolDefinition | undefined {
  const d = coreToolDescriptor(id, config);
  return d ? { id, description: d.meta.description, parameters: d.parameters } : undefined;
}

/** Every core id with a descriptor (the drift test walks them all). */
export const DESCRIBED_CORE_TOOLS: readonly string[] = Object.keys(PARAMETERS);
