/**
 * Browsers to close when Warden stops. Kept apart from the browser code (no Playwright import)
 * so the gateway can call it without loading the browser.
 */
export interface ClosesBrowsers {
  closeAll(): Promise<void>;
}

const live = new Set<ClosesBrowsers>();

/** Registers a browser owner; returns the function that unregisters it. */
export function closeOnShutdown(owner: ClosesBrowsers): () => void {
  live.add(owner);
  return () => live.delete(owner);
}

/** Closes every running browser (each profile's Chromium and its guard proxy). */
export async function closeAllBrowsers(): Promise<void> {
  await Promise.allSettled([...live].map((owner) => owner.closeAll()));
}
