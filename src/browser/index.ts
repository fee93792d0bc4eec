export { BrowserManager, type BrowserManagerOptions, type WithSession } from './manager.js';
export { BrowserSession, CHROMIUM_ARGS, CHROMIUM_PATH, type TabRefs } from './session.js';
export { browserProfiles, profileFor, userDataDirFor, type BrowserProfileSpec } from './profiles.js';
export { buildRoleSnapshot, parseRoleRef, truncateSnapshot, type RoleRef, type RoleSnapshot, type RoleSnapshotOptions } from './snapshot.js';
export { locatorForRef, snapshotPage, SNAPSHOT_TIMEOUT_MS, type SnapshotScope } from './page-snapshot.js';
export { checkAfterAction, checkBrowserUrl, navigateGuarded, NAVIGATION_TIMEOUT_MS, type GuardContext, type NavigationResult } from './navigate.js';
export { startGuardProxy, type BlockedRequest, type GuardProxy, type GuardProxyOptions } from './guard-proxy.js';
export { closeAllBrowsers, closeOnShutdown } from './shutdown.js';
