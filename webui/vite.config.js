import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";
import { writeFileSync } from "node:fs";

// The Go server (port 8080 by default: defaultPort in ../config.go; PARLA_API names
// another) serves the API; in development Vite forwards API calls to it and keeps
// serving the app for page navigations.
const api = process.env.PARLA_API || "http://127.0.0.1:8080";
const toApi = { target: api, changeOrigin: true };
// /payment/success and /payment/error are app routes; the rest of /payment is API.
const toApiExceptPages = {
  ...toApi,
  bypass: (req) => (req.method === "GET" && req.headers.accept?.includes("text/html") ? "/index.html" : undefined),
};

export default defineConfig({
  plugins: [
    react(),
    {
      // dist/ is emptied on every build; the committed placeholder must stay so
      // that `go build` works from a fresh checkout (//go:embed all:dist).
      name: "keep-gitkeep",
      closeBundle() {
        writeFileSync(new URL("./dist/.gitkeep", import.meta.url), "");
      },
    },
  ],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2020",
    // dist/.vite/manifest.json: each source module's chunk and the chunks it imports, which the
    // server reads to preload a page's own screen and locale with the entry (api/preload.go).
    manifest: true,
    rollupOptions: {
      output: {
        // Locale chunks are named after their language (locale-ru-….js).
        chunkFileNames: (chunk) => {
          const m = chunk.facadeModuleId?.match(/locales\/(\w+)\/translation\.json$/);
          return m ? `assets/locale-${m[1]}-[hash].js` : "assets/[name]-[hash].js";
        },
      },
    },
  },
  server: {
    proxy: {
      "/api": toApi,
      "/payment": toApiExceptPages,
      "/services": toApi,
      "/checkout": toApi,
      "/d/": toApi,
    },
  },
  test: {
    environment: "jsdom",
    include: ["test/**/*.test.{js,jsx}"],
    setupFiles: ["test/setup.js"],
    // A test waits for what it proves (a rendered screen, a settled form), not for an idle
    // machine's speed: CI runs at load ~6 on 2 cores, where 5 s timed out (make test-loaded).
    testTimeout: 30000,
  },
});
