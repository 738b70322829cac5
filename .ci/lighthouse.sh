#!/usr/bin/env bash
# make lighthouse: the app on its embedded defaults (./bin/parla, from make build) on a free
# port, and webui/scripts/lighthouse.mjs over it (issue 32's pages in every language). Its
# settings pass through: RUNS, PAGES, LANGS, STRICT=1 (a quiet machine: blocking time and
# score asserted too).
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/ports.sh
port=$(free_port)
data=$(mktemp -d)
log="$data/server.log"
ADDR="127.0.0.1:$port" PUBLIC_URL="http://127.0.0.1:$port" DATA_DIR="$data" RATE_LIMIT=0 ./bin/parla >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$data"' EXIT
wait_listening "the server" "$pid" "$port" "$log" 60
BASE_URL="http://127.0.0.1:$port" node webui/scripts/lighthouse.mjs
