#!/usr/bin/env bash
# Browser end-to-end test: starts the built server on embedded defaults (SQLite, local
# disk, outbox, test checkout, espeak-ng) in a fresh data directory and lets Chromium walk
# the site as a visitor. Screenshots go to test-artifacts/screenshots.
set -euo pipefail
cd "$(dirname "$0")/.."

port="${E2E_PORT:-18080}"
data="$(mktemp -d)"
shots="$PWD/test-artifacts/screenshots"
mkdir -p "$shots"
log="$PWD/test-artifacts/e2e-server.log"

ADDR="127.0.0.1:$port" PUBLIC_URL="http://127.0.0.1:$port" DATA_DIR="$data" RATE_LIMIT=0 \
  ./bin/parla >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$data"' EXIT

for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null || { cat "$log"; exit 1; }

BASE_URL="http://127.0.0.1:$port" OUTBOX_DIR="$data/outbox" SCREENSHOT_DIR="$shots" \
  node webui/e2e/tts.e2e.mjs
