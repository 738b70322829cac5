#!/usr/bin/env bash
# `make test`'s deploy checks (.ci/deploy.sh all: the image and compose.yaml built and run as
# an operator would), within what is left of CI's 90 minutes.
#
# Outside CI they run only with DEPLOY_CHECKS=1 (they need root and podman, and take about
# 5 minutes with podman's caches warm, about an hour on a fresh machine): `bash .ci/deploy.sh`.
# In CI, .ci/run notes its start (PARLA_CI_START); the checks get what is left of 88 minutes
# less a margin. A real failure fails CI. Time running out is said loudly, with the phase it
# stopped in, and does not: on a fresh machine the Go module builds of Caddy, Mailpit, mc and
# Compose (about 21 minutes) may not fit after the rest of the suite, and the next run on the
# same machine finds them built.
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ -z "${CI:-}" && "${DEPLOY_CHECKS:-}" != 1 ]]; then
  echo "deploy checks: skipped outside CI (DEPLOY_CHECKS=1 make test, or bash .ci/deploy.sh)"
  exit 0
fi
budget=$((88 * 60))
start=${PARLA_CI_START:-$(date +%s)}
left=$((start + budget - $(date +%s) - 120))
if ((left < 300)); then
  echo "deploy checks: NOT RUN: $((left / 60)) minutes of CI's time left"
  exit 0
fi
echo "deploy checks: $((left / 60)) minutes left for them"
log=$(mktemp)
# Its own process group, so that running out of time stops everything it started, and its
# output in a file, so that nothing left behind can hold make's output open.
setsid bash .ci/deploy.sh all >"$log" 2>&1 &
pid=$!
deadline=$(($(date +%s) + left))
while kill -0 "$pid" 2>/dev/null && (($(date +%s) < deadline)); do sleep 5; done
timed_out=0
if kill -0 "$pid" 2>/dev/null; then
  timed_out=1
  kill -TERM -- "-$pid" 2>/dev/null
  sleep 15
  kill -KILL -- "-$pid" 2>/dev/null
fi
wait "$pid"
rc=$?
kill -KILL -- "-$pid" 2>/dev/null || true
cat "$log"
if ((timed_out)); then
  echo "deploy checks: NOT FINISHED in the $((left / 60)) minutes left; stopped in: $(grep -o '== [a-z]*$' "$log" | tail -1)"
  echo "deploy checks: the phases before it passed; bash .ci/deploy.sh on this machine finishes them (what is built is kept)"
  podman rm -af >/dev/null 2>&1 || true
  exit 0
fi
exit "$rc"
