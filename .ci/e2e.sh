#!/usr/bin/env bash
# Browser end-to-end tests: start the built server on embedded defaults (SQLite, local disk,
# outbox, test checkout, espeak-ng for speech) in a fresh data directory, with speech-to-text
# through the OpenAI engine pointed at a local fake (webui/e2e/fake-openai.mjs, which also
# serves the test video), and let Chromium walk the site as a visitor: text to speech, audio
# to text, video to text. A second server, whose engine tells speakers apart (OpenAI's
# diarizing model, as the fake plays it), serves the editor journey's speakers. Screenshots
# go to test-artifacts/screenshots. Fails if any fails.
#
# Every server listens on a port free at run time (E2E_PORT, E2E_FAKE_OPENAI_PORT and
# E2E_DIARIZE_PORT pin them); one that cannot listen fails the run at once, naming the port, and
# the waits check that the answer comes from the process started here.
set -euo pipefail
cd "$(dirname "$0")/.."
source .ci/ports.sh

port="${E2E_PORT:-$(free_port)}"
fake_port="${E2E_FAKE_OPENAI_PORT:-$(free_port)}"
diarize_port="${E2E_DIARIZE_PORT:-$(free_port)}"
# Three distinct ports, even if the kernel handed one out twice.
while [[ "$diarize_port" == "$port" || "$diarize_port" == "$fake_port" ]]; do diarize_port=$(free_port); done
while [[ "$fake_port" == "$port" ]]; do fake_port=$(free_port); done
echo "e2e: server on $port, diarizing server on $diarize_port, fake OpenAI on $fake_port"
data="$(mktemp -d)"
data2="$(mktemp -d)"
shots="$PWD/test-artifacts/screenshots"
mkdir -p "$shots"
log="$PWD/test-artifacts/e2e-server.log"
fake_log="$PWD/test-artifacts/e2e-fake-openai.log"

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$data" "$data2" "${data3:-}"
}
trap cleanup EXIT

# wait_up NAME PID PORT LOG: wait up to 60 s (the fake makes its video first; a loaded CI machine) for PID itself to
# listen on PORT and answer /healthz there; fails at once if it exits (it could not listen).
wait_up() {
  wait_listening "$1" "$2" "$3" "$4" 60 || exit 1
  curl -fsS --max-time 10 "http://127.0.0.1:$3/healthz" >/dev/null || { tail -20 "$4"; echo "FAIL: $1 on port $3: /healthz"; exit 1; }
  pid_listens "$2" "$3" || { echo "FAIL: $1 (pid $2) no longer listens on port $3"; exit 1; }
}

PORT="$fake_port" node webui/e2e/fake-openai.mjs >"$fake_log" 2>&1 &
pids+=($!)
wait_up "fake OpenAI" "$!" "$fake_port" "$fake_log"

# The admin area is open for the admin journey, with a password hashed as an operator would.
export ADMIN_PASSWORD="${E2E_ADMIN_PASSWORD:-e2e operator password}"
admin_hash="$(printf '%s\n' "$ADMIN_PASSWORD" | ./bin/parla hash-password)"

ADMIN_PASSWORD_HASH="$admin_hash" \
ADDR="127.0.0.1:$port" PUBLIC_URL="http://127.0.0.1:$port" DATA_DIR="$data" RATE_LIMIT=0 PREVIEW_SECONDS_PER_HOUR=0 \
  STT_ENGINE=openai OPENAI_API_KEY=test OPENAI_BASE_URL="http://127.0.0.1:$fake_port/v1" \
  ALLOW_PRIVATE_URLS=1 \
  ./bin/parla >"$log" 2>&1 &
pids+=($!)
wait_up "the server" "$!" "$port" "$log"

diarize_log="$PWD/test-artifacts/e2e-server-diarize.log"
ADDR="127.0.0.1:$diarize_port" PUBLIC_URL="http://127.0.0.1:$diarize_port" DATA_DIR="$data2" RATE_LIMIT=0 \
  STT_ENGINE=openai OPENAI_API_KEY=test OPENAI_BASE_URL="http://127.0.0.1:$fake_port/v1" \
  OPENAI_STT_MODEL=gpt-4o-transcribe-diarize ADMIN_PASSWORD= \
  ./bin/parla >"$diarize_log" 2>&1 &
pids+=($!)
wait_up "the diarizing server" "$!" "$diarize_port" "$diarize_log"

# A third server with two speech engines (TTS_ENGINE=openai,espeak): the fake as a Kokoro
# server for Kokoro's languages, espeak-ng for the rest (the engines journey).
engines_port=$(free_port)
while [[ "$engines_port" == "$port" || "$engines_port" == "$fake_port" || "$engines_port" == "$diarize_port" ]]; do engines_port=$(free_port); done
data3="$(mktemp -d)"
engines_log="$PWD/test-artifacts/e2e-server-engines.log"
ADDR="127.0.0.1:$engines_port" PUBLIC_URL="http://127.0.0.1:$engines_port" DATA_DIR="$data3" RATE_LIMIT=0 \
  TTS_ENGINE=openai,espeak OPENAI_TTS_BASE_URL="http://127.0.0.1:$fake_port/v1" OPENAI_TTS_MODEL=kokoro \
  OPENAI_TTS_API_KEY=none ADMIN_PASSWORD= \
  ./bin/parla >"$engines_log" 2>&1 &
pids+=($!)
wait_up "the two-engine server" "$!" "$engines_port" "$engines_log"

export BASE_URL="http://127.0.0.1:$port" OUTBOX_DIR="$data/outbox" SCREENSHOT_DIR="$shots"
export ENGINES_BASE_URL="http://127.0.0.1:$engines_port"
export DIARIZE_BASE_URL="http://127.0.0.1:$diarize_port"
export MEDIA_URL="http://127.0.0.1:$fake_port/media/clip.mp4" FAKE_OPENAI_URL="http://127.0.0.1:$fake_port"
failed=()
# E2E_JOURNEYS picks some of them (default: all).
for journey in ${E2E_JOURNEYS:-tts sst vtt pages onepayment polish admin editor engines truth api preview}; do
  echo "== $journey"
  node "webui/e2e/$journey.e2e.mjs" || failed+=("$journey")
done
if ((${#failed[@]})); then
  echo "e2e: failed: ${failed[*]}"
  exit 1
fi
echo "e2e: ${E2E_JOURNEYS:-tts sst vtt pages onepayment polish admin editor engines truth api preview} passed"
