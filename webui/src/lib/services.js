// The three services in the site's order, and which of them the server says are open.

/** The services, as the menu and the home page list them. */
export const SERVICES = ["tts", "sst", "vtt"];

/**
 * Whether the server's configuration says `service` is open. Without a configuration yet
 * (loading, or unreachable) every service counts as open: the page itself says more.
 * @param {any} config the /api/config object, or null
 * @param {string} service
 */
export function isOpen(config, service) {
  return config?.services?.[service]?.open !== false;
}

/** The open services, in the site's order. */
export function openServices(config) {
  return SERVICES.filter((s) => isOpen(config, s));
}
