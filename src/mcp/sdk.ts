/**
 * The MCP SDK and the transports, loaded on the first connection: a Warden without MCP servers
 * (and every CLI command that resolves a surface) never loads the SDK, its schemas or undici.
 */
type Sdk = {
  Client: typeof import('@modelcontextprotocol/sdk/client/index.js').Client;
  McpError: typeof import('@modelcontextprotocol/sdk/types.js').McpError;
  ToolListChangedNotificationSchema: typeof import('@modelcontextprotocol/sdk/types.js').ToolListChangedNotificationSchema;
  openTransport: typeof import('./transport.js').openTransport;
};

let loaded: Sdk | undefined;

export async function loadMcpSdk(): Promise<Sdk> {
  if (!loaded) {
    const [client, types, transport] = await Promise.all([import('@modelcontextprotocol/sdk/client/index.js'), import('@modelcontextprotocol/sdk/types.js'), import('./transport.js')]);
    loaded = { Client: client.Client, McpError: types.McpError, ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema, openTransport: transport.openTransport };
  }
  return loaded;
}

/** An error the server answered with (a JSON-RPC error); false before the SDK was ever loaded. */
export function asMcpError(err: unknown): { code: number; message: string } | undefined {
  return loaded !== undefined && err instanceof loaded.McpError ? err : undefined;
}
