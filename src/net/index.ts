export { checkUrlWithPolicy, systemResolver, type Resolver, type ResolvedAddress, type UrlPolicy, type UrlSurface, type UrlVerdict } from './check.js';
export { checkUrl, urlPolicyFor } from './policy.js';
export { classifyIpLiteral, embeddedIpv4, isMetadataAddress, normalizeHost, type AddressPolicy, type AddressVerdict } from './address.js';
export { isBlockedHostname, isMetadataHostname, matchesHostPattern } from './hostname.js';
export { guardedFetch, type GuardedFetchOptions, type GuardedFetchResult } from './fetch.js';
export {
  configuredListeners,
  interfaceAddresses,
  isThisHost,
  isThisHostName,
  listenerAddress,
  ownListenerAt,
  registerOwnListener,
  registerOwnListenerSource,
  registerServer,
  runningListeners,
  type OwnListener,
} from './own-listeners.js';
export { serviceRequest, type ServiceRequest, type ServiceResponse } from './service.js';
export { describePortInUse, isPortInUse, listenerOf, nextFreePort, portInUseText, OPS_PORT, WEB_CHAT_PORT, type PortSetting } from './port-clash.js';
