import { createContext, useContext } from "react";

// The server's public configuration (GET /api/config), loaded once at start.
export const ConfigContext = createContext(null);

/** The loaded /api/config object. */
export function useConfig() {
  return useContext(ConfigContext);
}
