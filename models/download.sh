#!/usr/bin/env bash
# Downloads a whisper.cpp ggml model into this folder. Needs internet access.
set -euo pipefail
name="${1:?usage: $0 <model name, e.g. base or small.en>}"
case "$name" in *[!a-z0-9.-]*) echo "bad model name: $name" >&2; exit 2;; esac
cd "$(dirname "$0")"
url="https://huggingface.co/ggerganov/whisper.cpp/resolve/main/ggml-${name}.bin"
curl -fL --retry 3 -o "ggml-${name}.bin.part" "$url"
mv "ggml-${name}.bin.part" "ggml-${name}.bin"
echo "saved models/ggml-${name}.bin — set WHISPER_MODEL=$(pwd)/ggml-${name}.bin"
