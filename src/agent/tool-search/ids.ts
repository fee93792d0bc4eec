/**
 * The meta-tools' names, apart from their code: the plugin and MCP registries reserve these
 * names, and importing them from meta-tools.ts would load the ranking and its word tables
 * (built when the module loads) into every command that only checks a name (`warden tools`).
 */
export const META_TOOL_IDS = ['tool_search', 'tool_describe', 'tool_call'] as const;
export type MetaToolId = (typeof META_TOOL_IDS)[number];
export const isMetaTool = (id: string): id is MetaToolId => (META_TOOL_IDS as readonly string[]).includes(id);
