/** Leaves the app for `url` (the hosted checkout). A module of its own so tests can replace it. */
export function redirectTo(url) {
  window.location.assign(url);
}
