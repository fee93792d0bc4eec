import { DefaultRestOptions, type RESTOptions } from 'discord.js';

/**
 * How the Discord REST client sends a request. Most requests (every reply, edit, typing
 * indicator) go through discord.js's own strategy, the undici package's `request`: Node's
 * global `fetch` wraps each response in web streams, an AbortSignal and transferable objects,
 * which profiled at about half the adapter's CPU per message at chat rates. A file upload is
 * the exception: @discordjs/rest builds it with the global FormData, which only Node's own
 * fetch accepts (the undici package's request refuses a FormData of another copy), so a
 * multipart body goes through `fetch`.
 */
export const discordRestRequest: RESTOptions['makeRequest'] = (url, init) =>
  init.body instanceof FormData ? (fetch(url, init as RequestInit) as never) : DefaultRestOptions.makeRequest(url, init);
