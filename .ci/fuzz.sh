#!/usr/bin/env bash
# Runs every Go fuzz target (func FuzzXxx) of the repository for FUZZTIME each, one target per
# `go test` invocation as Go requires, and fails if any target fails. The seed corpora in each
# package's testdata/fuzz/ also run as ordinary tests under `go test`; this mutates them.
#
#   FUZZTIME          how long each target runs (default 5s; any -fuzztime value)
#   FUZZMINIMIZETIME  cap on minimising one new input (default 2s). Go's default is 60s, and
#                     while a worker minimises it tries nothing else, so a short run would
#                     mostly minimise.
#
# A failing input is written by Go to <package>/testdata/fuzz/<target>/ and printed here; commit
# it with the fix so it stays a regression test.
#
# Go 1.26's fuzz coordinator can end a duration-limited run with a bare "context deadline
# exceeded" and no failing input when the time is up while a worker is busy (golang/go#75804,
# fixed in Go 1.27). Such a run found nothing: it counts as passed, and is reported.
set -uo pipefail
cd "$(dirname "$0")/.."

GO="${GO:-go}"
# Targets fuzzed by one worker, not two: FuzzMeasureMixedStream's inputs run ffmpeg, the
# measure at the lowest priority (media/visitors.go), and beside a second worker's nice-0
# encodes that measure starved past the 10 s Go allows one fuzzing call (the worker is
# killed: "fuzzing process hung or terminated unexpectedly"; golang/go#56238), twice in two
# 3-minute runs, on inputs that take 1 s alone.
FUZZ_ONE_WORKER="${FUZZ_ONE_WORKER:-FuzzMeasureMixedStream}"
FUZZTIME="${FUZZTIME:-5s}"
FUZZMINIMIZETIME="${FUZZMINIMIZETIME:-2s}"

# Packages with a fuzz target: the directories of test files that declare one (or the
# packages named as arguments: `bash .ci/fuzz.sh ./media ./media/links`). `go test -list`
# then names the targets exactly.
if (($#)); then
	pkgs=("$@")
else
	mapfile -t pkgs < <(grep -rlE --include='*_test.go' --exclude-dir=node_modules --exclude-dir=.git \
		'^func Fuzz[A-Z0-9_]' . | xargs -r -n1 dirname | sort -u)
fi

passed=0
failed=0
raced=0
failures=()
log=$(mktemp)
trap 'rm -f "$log"' EXIT

for pkg in "${pkgs[@]}"; do
	if ! names=$("$GO" test -list '^Fuzz' "$pkg" 2>"$log"); then
		echo "fuzz: FAIL listing $pkg"
		cat "$log"
		failed=$((failed + 1))
		failures+=("$pkg (list)")
		continue
	fi
	for name in $(grep '^Fuzz' <<<"$names"); do
		start=$SECONDS
		corpus="$pkg/testdata/fuzz/$name"
		before=$(ls "$corpus" 2>/dev/null | sort)
		# -parallel: the number of fuzzing workers; the CI machine has 2 cores.
		workers=2
		[[ " $FUZZ_ONE_WORKER " == *" $name "* ]] && workers=1
		if "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" \
			-fuzzminimizetime "$FUZZMINIMIZETIME" -parallel "$workers" "$pkg" >"$log" 2>&1; then
			passed=$((passed + 1))
			echo "fuzz: ok   ${pkg#./}.$name ($((SECONDS - start))s)"
		elif [[ "$(ls "$corpus" 2>/dev/null | sort)" == "$before" ]] &&
			grep -qx $'    context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
			passed=$((passed + 1))
			raced=$((raced + 1))
			echo "fuzz: ok   ${pkg#./}.$name ($((SECONDS - start))s; ended by golang/go#75804, no failing input)"
		else
			failed=$((failed + 1))
			failures+=("${pkg#./}.$name")
			echo "fuzz: FAIL ${pkg#./}.$name ($((SECONDS - start))s)"
			tail -n 60 "$log"
			# The input Go wrote, printed whole, and the command that runs it again.
			for input in $(comm -13 <(echo "$before") <(ls "$corpus" 2>/dev/null | sort)); do
				echo "fuzz: failing input $corpus/$input:"
				cat "$corpus/$input"
				echo "fuzz: to reproduce: go test -count=1 -run '^$name/$input\$' $pkg"
				echo "fuzz: commit it with the fix: it is a regression test from then on"
			done
		fi
	done
done

if ((failed > 0)); then
	printf 'fuzz: failed: %s\n' "${failures[@]}"
fi
if ((raced > 0)); then
	echo "fuzz: $raced run(s) ended by Go's fuzztime race (golang/go#75804) with no failing input"
fi
echo "fuzz: $passed passed, $failed failed"
((failed == 0))
