#!/usr/bin/env bash
# Compile-only check of the CUDA build (no GPU needed, CUDA toolkit needed): libwhisper with
# ggml's CUDA backend for one architecture as PTX only (the quickest nvcc pass that still
# compiles every kernel), then bin/parla linked against it with -tags "whisper cuda", run
# far enough to say which device it found (the CPU, on a machine without a GPU). Not part of
# `make test`: the toolkit is a 1.6 GB download (5.3 GB installed: Debian's
# nvidia-cuda-toolkit, from non-free) and the first build takes long (see README: GPU).
#
#   .ci/whisper-cuda.sh        WHISPER_CUDA_ARCHS=<list> to compile for others
set -euo pipefail
cd "$(dirname "$0")/.."

command -v nvcc >/dev/null || {
  echo "whisper-cuda: no nvcc: install the CUDA toolkit (Debian: add non-free, apt-get install nvidia-cuda-toolkit)" >&2
  exit 1
}
export WHISPER_GPU=cuda WHISPER_CUDA_ARCHS="${WHISPER_CUDA_ARCHS:-75-virtual}"
start=$SECONDS
exports=$(bash .ci/whisper.sh env)
eval "$exports"
go vet -tags "$WHISPER_TAGS" ./providers/whisper/
go build -tags "$WHISPER_TAGS" -o bin/parla-cuda .
# The Go side of the backend report, on whatever this machine has.
go test -tags "$WHISPER_TAGS" -count=1 -run 'Backend' ./providers/whisper/
echo "whisper-cuda: built and linked in $((SECONDS - start)) s (nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), archs $WHISPER_CUDA_ARCHS)"
