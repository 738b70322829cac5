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
#
#   GPU_BUNDLE=DIR bash .ci/gpu-check.sh   on a GPU machine without Go, espeak-ng or ffmpeg:
#                                  DIR made here by `bash .ci/gpu-bundle.sh DIR` (the test
#                                  binary, the tools, the source and the models); the machine
#                                  builds libwhisper's shared libraries with CUDA and runs the
#                                  same tests and benchmarks against them (needs nvcc, cmake, g++)
set -uo pipefail
cd "$(dirname "$0")/.."
report="${OUT:-/tmp}/gpu-check.txt"
: >"$report"
note() { echo "gpu-check: $*" | tee -a "$report" >&2; }

bundle="${GPU_BUNDLE:-}"
tools=(nvidia-smi nvcc cmake g++)
[[ -n "$bundle" ]] || tools+=(go)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null || { note "missing $tool: cannot build for the GPU here"; exit 1; }
done
note "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader | head -1)"
note "nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), $(nproc) cores, $(if [[ -n "$bundle" ]]; then echo "tests prebuilt in $bundle"; else go version | cut -d' ' -f3; fi)"
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')

# bundle_check runs the prebuilt tests of GPU_BUNDLE against libwhisper's shared libraries
# built here with CUDA (same source and API as the ones the binary was linked against there).
bundle_check() {
  local b archs="${WHISPER_CUDA_ARCHS:-$cap}" src=/tmp/gpu-check-whisper start tests bench
  b=$(cd "$bundle" && pwd) || { note "no bundle at $bundle"; exit 1; }
  export PATH="$b/bin:$PATH" ESPEAK_DATA_PATH="$b"
  # The tests take the test models from ../shared beside the checkout (WHISPER_MODEL would
  # mean a real model, whose transcript they then check for words).
  if [[ ! -f ../shared/testdata/whisper/for-tests-ggml-tiny.en.bin ]]; then
    mkdir -p ../shared/testdata/whisper && cp "$b"/models/for-tests-*.bin ../shared/testdata/whisper/
  fi
  note "source $(ls "$b"/src/*.tar.gz), test models in ../shared/testdata/whisper"
  start=$SECONDS
  rm -rf "$src" && mkdir -p "$src" && tar -xzf "$b"/src/whisper.cpp-*.tar.gz -C "$src" --strip-components=1
  cmake -S "$src" -B "$src/build" -DBUILD_SHARED_LIBS=ON -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
    -DGGML_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=$archs" -DWHISPER_BUILD_TESTS=OFF -DWHISPER_BUILD_EXAMPLES=ON \
    -DWHISPER_BUILD_SERVER=OFF >/tmp/gpu-check-build.log 2>&1 &&
    cmake --build "$src/build" -j"$(nproc)" --target whisper whisper-cli >>/tmp/gpu-check-build.log 2>&1 ||
    { tail -40 /tmp/gpu-check-build.log | tee -a "$report" >&2; note "the CUDA build failed"; exit 1; }
  note "libwhisper (shared) + whisper-cli with CUDA (archs $archs) built in $((SECONDS - start)) s"
  export LD_LIBRARY_PATH="$src/build/src:$src/build/ggml/src:$src/build/ggml/src/ggml-cuda:$b/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  start=$SECONDS
  (cd providers/whisper && WHISPER_EXPECT_BACKEND=CUDA0 "$b/bin/whisper.test" -test.count=1 -test.timeout 10m -test.v) 2>&1 |
    tee /tmp/gpu-check-tests.log | grep -E '^(---|ok|FAIL|PASS)|computes on|^\s+--- FAIL' | tee -a "$report"
  tests=${PIPESTATUS[0]}
  note "providers/whisper's tests (prebuilt, -tags whisper) on the CUDA libraries: exit $tests in $((SECONDS - start)) s"
  start=$SECONDS
  (cd providers/whisper && WHISPER_CLI="$src/build/bin/whisper-cli" "$b/bin/whisper.test" -test.run '^$' \
    -test.bench 'VersusWhisperCLI|FindSpeech' -test.benchtime 5x -test.timeout 20m) 2>&1 |
    tee /tmp/gpu-check-bench.log | grep -E 'Benchmark|ok|FAIL|PASS' | tee -a "$report"
  bench=${PIPESTATUS[0]}
  note "whisper bench (VersusWhisperCLI|FindSpeech, 5x): exit $bench in $((SECONDS - start)) s"
  # The test model is tiny; a model with large-v3-turbo's shapes and no weights runs at that
  # model's real cost (../shared/tools/whisper-empty-model.py, in the bundle): the speed a
  # visitor's order would see. GPU_CHECK_BIG_S bounds it (default 240 s).
  if [[ -f "$b/models/whisper-empty-model.py" ]] && command -v python3 >/dev/null; then
    python3 "$b/models/whisper-empty-model.py" ../shared/testdata/whisper/for-tests-ggml-tiny.en.bin /tmp/large-v3-turbo.bin large-v3-turbo >/dev/null
    start=$SECONDS
    (cd providers/whisper && WHISPER_MODEL=/tmp/large-v3-turbo.bin WHISPER_CLI="$src/build/bin/whisper-cli" \
      timeout "${GPU_CHECK_BIG_S:-240}" "$b/bin/whisper.test" -test.run '^$' -test.bench 'VersusWhisperCLI' \
      -test.benchtime 3x -test.timeout 20m) 2>&1 |
      tee /tmp/gpu-check-bench-turbo.log | grep -E 'Benchmark|ok|FAIL|PASS' | sed 's/^/large-v3-turbo shapes: /' | tee -a "$report"
    note "whisper bench with large-v3-turbo's shapes (3x): exit ${PIPESTATUS[0]} in $((SECONDS - start)) s"
  fi
  note "report in $report"
  exit "$tests"
}
[[ -z "$bundle" ]] || bundle_check

for base in ../shared shared; do
  tarball=$(ls "$base"/vendor/whisper.cpp/whisper.cpp-*.tar.gz 2>/dev/null | head -1)
  [[ -z "${WHISPER_SRC:-}" && -n "$tarball" ]] && export WHISPER_SRC="$tarball"
  # The tests find the test model in ../shared themselves; WHISPER_MODEL means a real model
  # (its transcript is then checked for words), so it is passed through only when set.
  [[ -z "${WHISPER_VAD_MODEL:-}" && -f "$base/testdata/whisper/for-tests-silero-v6.2.0-ggml.bin" ]] &&
    export WHISPER_VAD_MODEL="$PWD/$base/testdata/whisper/for-tests-silero-v6.2.0-ggml.bin"
done
note "source ${WHISPER_SRC:-(fetched from GitHub)}, model ${WHISPER_MODEL:-the test model}, VAD ${WHISPER_VAD_MODEL:-none}"

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
