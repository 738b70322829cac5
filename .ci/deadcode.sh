#!/usr/bin/env bash
# No dead code: `deadcode .` (golang.org/x/tools) lists no function that no path from main
# reaches, outside providers/testkit (helpers for tests). ARCHITECTURE.md's invariant 7.
set -euo pipefail
cd "$(dirname "$0")/.."
PATH="$(go env GOPATH)/bin:$PATH"
dead=$(deadcode . | grep -v '^providers/testkit/' || true)
if [[ -n "$dead" ]]; then
  echo "deadcode: functions no path from main reaches (move test helpers to _test.go files or providers/testkit):" >&2
  echo "$dead" >&2
  exit 1
fi
echo "deadcode: none outside providers/testkit"
