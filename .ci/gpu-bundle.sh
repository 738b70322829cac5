#!/usr/bin/env bash
# Packs, on this machine, what .ci/gpu-check.sh needs on a GPU machine that has the CUDA
# toolkit, cmake and g++ but no Go, espeak-ng or ffmpeg (the GPU machines lent to this
# project have nothing else and reach no network):
#
#   bash .ci/gpu-bundle.sh DIR      then run `GPU_BUNDLE=DIR bash .ci/gpu-check.sh` there
#
# DIR/bin/whisper.test  providers/whisper's tests and benchmarks (-tags whisper), linked
#                       against libwhisper's *shared* libraries; the GPU machine builds the
#                       same source's shared libraries with CUDA, and the binary runs against
#                       those (same commit, same API: only libggml's backends differ)
# DIR/bin/ffmpeg, ffprobe  a small static build with what the tests' own commands use
#                       (lavfi sources, adelay, apad, an MPEG-4 video for "not audio"),
#                       built from the image's FFmpeg source; not the image's ffmpeg
# DIR/bin/espeak-ng, DIR/lib, DIR/espeak-ng-data  this machine's espeak-ng and its libraries
# DIR/src               the whisper.cpp tarball; DIR/models the test model, Silero VAD and the
#                       tool that writes a weightless model with a real model's shapes
#
# About 15 minutes on 2 busy cores the first time (ffmpeg, then libwhisper shared); cached.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: gpu-bundle.sh DIR}"
mkdir -p "$out"/{bin,lib,src,models}
out=$(cd "$out" && pwd)
say() { echo "gpu-bundle: $*" >&2; }
cache="$(go env GOCACHE)/parla-gpu-bundle"
mkdir -p "$cache"

# The whisper.cpp source and the test models, as .ci/whisper.sh and the tests find them.
tarball=$(ls ../shared/vendor/whisper.cpp/whisper.cpp-*.tar.gz | head -1)
cp "$tarball" "$out/src/"
cp ../shared/testdata/whisper/for-tests-ggml-tiny.en.bin ../shared/testdata/whisper/for-tests-silero-v6.2.0-ggml.bin \
  ../shared/tools/whisper-empty-model.py "$out/models/"

# libwhisper's shared libraries (CPU), only to link the test binary against.
exports=$(bash .ci/whisper.sh env) # extracts the source into the cache (and builds the static one)
eval "$exports"
src=$(echo "$CGO_CFLAGS" | sed -n "s/^-I\([^ ]*\)\/include .*/\1/p")
shared="$src/build-shared"
if [[ ! -f "$shared/src/libwhisper.so" ]]; then
  say "building libwhisper's shared libraries in $shared"
  cmake -S "$src" -B "$shared" -DBUILD_SHARED_LIBS=ON -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
    -DWHISPER_BUILD_TESTS=OFF -DWHISPER_BUILD_EXAMPLES=OFF -DWHISPER_BUILD_SERVER=OFF >"$cache/shared.log" 2>&1
  nice cmake --build "$shared" -j"$(nproc)" --target whisper >>"$cache/shared.log" 2>&1 || { tail -30 "$cache/shared.log" >&2; exit 1; }
fi
# No rpath: the GPU machine points LD_LIBRARY_PATH at its own CUDA build.
CGO_LDFLAGS="-L$shared/src -L$shared/ggml/src" nice go test -c -tags whisper -o "$out/bin/whisper.test" ./providers/whisper/
say "whisper.test needs: $(ldd "$out/bin/whisper.test" | awk '/=>/{print $1}' | tr '\n' ' ')"

# A small ffmpeg for the tests' commands (not the image's: that one has no lavfi or video).
ff_args=(--disable-everything --disable-autodetect --disable-x86asm --disable-doc --disable-debug
  --disable-postproc --disable-shared --enable-static --enable-indev=lavfi --enable-protocol=file,pipe
  --enable-demuxer=wav,pcm_s16le,pcm_f32le,mov --enable-muxer=wav,pcm_s16le,pcm_f32le,mp4,null
  --enable-decoder=pcm_s16le,pcm_f32le,pcm_u8,pcm_s32le,pcm_f64le,rawvideo,wrapped_avframe,mpeg4
  --enable-encoder=pcm_s16le,pcm_f32le,mpeg4
  --enable-filter=adelay,apad,anullsrc,aresample,aformat,anull,atrim,asetpts,silencedetect,color,scale,format,null,trim,setpts)
ff_dir="$cache/ffmpeg-$(echo "${ff_args[*]}" | sha256sum | cut -c1-12)"
if [[ ! -x "$ff_dir/ffmpeg" ]]; then
  ff_tar=$(ls "${TMPDIR:-/tmp}"/parla-ffmpeg-5.1.9/ffmpeg_5.1.9.orig.tar.xz 2>/dev/null | head -1 || true)
  if [[ -z "$ff_tar" ]]; then
    ff_tar="$cache/ffmpeg_5.1.9.orig.tar.xz"
    [[ -f "$ff_tar" ]] || curl -fsSL --max-time 300 -o "$ff_tar" http://deb.debian.org/debian/pool/main/f/ffmpeg/ffmpeg_5.1.9.orig.tar.xz
  fi
  echo "d9b593bb2ba93d4b50f74177e0cdcd41747e708596367deed0c30348a71dd176  $ff_tar" | sha256sum -c - >/dev/null
  rm -rf "$cache/ffmpeg-src" && mkdir -p "$cache/ffmpeg-src"
  tar -xJf "$ff_tar" -C "$cache/ffmpeg-src" --strip-components=1
  say "building a test ffmpeg (wav, pcm, lavfi, mp4 with MPEG-4 video)"
  (cd "$cache/ffmpeg-src" && ./configure "${ff_args[@]}" >"$cache/ffmpeg.log" 2>&1 &&
    nice make -j"$(nproc)" >>"$cache/ffmpeg.log" 2>&1) || { tail -30 "$cache/ffmpeg.log" >&2; exit 1; }
  mkdir -p "$ff_dir" && install -s "$cache/ffmpeg-src/ffmpeg" "$cache/ffmpeg-src/ffprobe" "$ff_dir/"
fi
cp "$ff_dir/ffmpeg" "$ff_dir/ffprobe" "$out/bin/"

# espeak-ng as this machine has it, with every library it loads but the C library's own.
cp "$(command -v espeak-ng)" "$out/bin/"
ldd "$(command -v espeak-ng)" | awk '/=> \//{print $3}' | grep -Ev '/(libc|libm|libpthread|libdl|librt)\.so' |
  xargs -I{} cp -L {} "$out/lib/"
rm -rf "$out/espeak-ng-data"
cp -r "$(dirname "$(readlink -f "$(ldd "$(command -v espeak-ng)" | awk '/libespeak-ng/{print $3}')")")/espeak-ng-data" "$out/" 2>/dev/null ||
  cp -r /usr/lib/x86_64-linux-gnu/espeak-ng-data "$out/"
# The bundle's tools must run on their own, with the tests' own commands, before they travel.
ff="$out/bin/ffmpeg -nostdin -loglevel error -y"
LD_LIBRARY_PATH="$out/lib" ESPEAK_DATA_PATH="$out" "$out/bin/espeak-ng" -w "$cache/hello.wav" "hello" &&
  "$out/bin/ffprobe" -v error -show_entries format=duration -of csv=p=0 "$cache/hello.wav" >/dev/null &&
  $ff -i "$cache/hello.wav" -af adelay=500:all=1,apad=pad_dur=1 -ar 16000 -ac 1 -c:a pcm_s16le "$cache/padded.wav" &&
  $ff -f lavfi -i anullsrc=r=16000:cl=mono:d=1 "$cache/silence.wav" &&
  $ff -f lavfi -i color=s=64x64:d=1 "$cache/video.mp4" ||
  { say "the bundle's espeak-ng or ffmpeg cannot run the tests' commands"; exit 1; }
say "bundle in $out: $(du -sh "$out" | cut -f1)"
