// @vitest-environment node
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

describe("vite dev proxy", () => {
  it("forwards the API to the Go server's default port when PARLA_API is unset", async () => {
    const port = readFileSync(new URL("../../config.go", import.meta.url), "utf8").match(/defaultPort\s*=\s*"(\d+)"/)?.[1];
    expect(port).toMatch(/^\d+$/);
    const saved = process.env.PARLA_API;
    delete process.env.PARLA_API;
    try {
      const { default: config } = await import("../vite.config.js?unset");
      for (const path of ["/api", "/payment", "/services", "/checkout", "/d/"]) {
        expect(config.server.proxy[path].target).toBe(`http://127.0.0.1:${port}`);
      }
    } finally {
      if (saved !== undefined) process.env.PARLA_API = saved;
    }
  });
});
