#!/usr/bin/env bash
# Everything to run once on a machine with an NVIDIA GPU, in one go (GPU time is short):
# libwhisper built with ggml's CUDA backend for this card, the whisper tests with the backend
# required to be the GPU, then `make whisper-bench`; the numbers are printed at the end (and
# written to $OUT/gpu-check.txt when OUT is set).
#
#   bash .ci/gpu-check.sh          needs nvidia-smi, nvcc, go, cmake, g++; the bench also
#                                  espeak-ng and ffmpeg (it skips without them)
#
# The whisper.cpp source and the test models are looked for in ../shared (a checkout beside
# the shared folder) or shared/ in the tree; WHISPER_SRC, WHISPER_MODEL, WHISPER_VAD_MODEL
# win when set. WHISPER_CUDA_ARCHS defaults to this card's compute capability only.
set -uo pipefail
cd "$(dirname "$0")/.."
report="${OUT:-/tmp}/gpu-check.txt"
: >"$report"
note() { echo "gpu-check: $*" | tee -a "$report" >&2; }

for tool in nvidia-smi nvcc go cmake g++; do
  command -v "$tool" >/dev/null || { note "missing $tool: cannot build for the GPU here"; exit 1; }
done
note "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader | head -1)"
note "nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $(go version | cut -d' ' -f3), $(nproc) cores"

for base in ../shared shared; do
  tarball=$(ls "$base"/vendor/whisper.cpp/whisper.cpp-*.tar.gz 2>/dev/null | head -1)
  [[ -z "${WHISPER_SRC:-}" && -n "$tarball" ]] && export WHISPER_SRC="$tarball"
  [[ -z "${WHISPER_MODEL:-}" && -f "$base/testdata/whisper/for-tests-ggml-tiny.en.bin" ]] &&
    export WHISPER_MODEL="$base/testdata/whisper/for-tests-ggml-tiny.en.bin"
  [[ -z "${WHISPER_VAD_MODEL:-}" && -f "$base/testdata/whisper/for-tests-silero-v6.2.0-ggml.bin" ]] &&
    export WHISPER_VAD_MODEL="$base/testdata/whisper/for-tests-silero-v6.2.0-ggml.bin"
done
note "source ${WHISPER_SRC:-(fetched from GitHub)}, model ${WHISPER_MODEL:-none}, VAD ${WHISPER_VAD_MODEL:-none}"

cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
export WHISPER_GPU=cuda WHISPER_CUDA_ARCHS="${WHISPER_CUDA_ARCHS:-$cap}"
start=$SECONDS
exports=$(bash .ci/whisper.sh env --cli) || { note "the CUDA build failed"; exit 1; }
eval "$exports"
note "libwhisper + whisper-cli with CUDA (archs $WHISPER_CUDA_ARCHS) built in $((SECONDS - start)) s"

start=$SECONDS
# The backend must be the GPU, not the CPU fallback.
WHISPER_EXPECT_BACKEND=CUDA0 go test -tags "$WHISPER_TAGS" -count=1 -timeout 10m -v ./providers/whisper/ 2>&1 |
  tee /tmp/gpu-check-tests.log | grep -E '^(---|ok|FAIL|PASS)|computes on|^\s+--- FAIL' | tee -a "$report"
tests=${PIPESTATUS[0]}
note "go test -tags '$WHISPER_TAGS' ./providers/whisper/: exit $tests in $((SECONDS - start)) s"

if command -v espeak-ng >/dev/null && command -v ffmpeg >/dev/null; then
  start=$SECONDS
  make whisper-bench 2>&1 | tee /tmp/gpu-check-bench.log | grep -E 'Benchmark|ok|FAIL' | tee -a "$report"
  note "make whisper-bench: exit ${PIPESTATUS[0]} in $((SECONDS - start)) s"
else
  note "no espeak-ng or ffmpeg: make whisper-bench skipped"
fi
note "report in $report"
exit "$tests"
