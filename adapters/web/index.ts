export { createWebAdapter, webCard, WEB_CHANNEL_ID, WEB_LOCAL_USER, WEB_MAX_INPUT, type WebAdapter, type WebAdapterDeps, type WebCard, type ServerFrame } from './adapter.js';
export { checkBind, isLoopbackHost } from './access.js';
export { webChatToken, WEB_TOKEN_FILE, type WebToken } from './token.js';
export { openWebFront, type WebFront } from './front.js';
