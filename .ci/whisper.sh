#!/usr/bin/env bash
# Builds libwhisper statically (and, on request, whisper-cli) from the whisper.cpp source at the
# commit the Go bindings in go.mod are cut from, and caches the build under the Go cache
# directory, so `go build -tags whisper` can link it. About 6 minutes on 2 cores the first
# time; a second run finds the cache and returns at once.
#
#   .ci/whisper.sh env [--cli]   build if needed, then print the CGO_CFLAGS/CGO_LDFLAGS exports
#                                and WHISPER_TAGS=whisper (eval it) and, with --cli,
#                                WHISPER_CLI=<path of whisper-cli>
#   .ci/whisper.sh env-if-built  print the exports when the library is already built, else nothing
#   .ci/whisper.sh test          build if needed, then run the tests that need libwhisper (the
#                                engine's, with -tags whisper, and one order through it end to end)
#   .ci/whisper.sh stage DIR     build if needed, then copy the headers and static libraries into
#                                DIR in the image's /whisper layout, with the RECIPE line the
#                                Dockerfile's whisper stage compares with its own: the image
#                                takes the library from there instead of compiling it again
#                                (.ci/deploy.sh's `--build-context prebuilt=`). The default
#                                source and CPU build only (exit status 4 otherwise).
#
# The source, first found wins:
#   WHISPER_SRC=<dir or .tar.gz>  a tree or tarball of your own (cached by its path or checksum)
#   ../shared/vendor/whisper.cpp/whisper.cpp-<commit>.tar.gz, checked against its SHA256SUMS
#   the commit fetched from GitHub with git (needs internet; git checks the commit id)
# Exit status 3 means no source could be found: the caller says what to do (see the Makefile).
#
#   WHISPER_NATIVE=ON  tune for this CPU (faster, not portable); default OFF: x86-64 with
#                      AVX2/FMA/F16C, which ggml turns on when not native
#   WHISPER_GPU=cuda   also build ggml's CUDA backend (needs nvcc: the CUDA toolkit) and link
#                      the binary against it (WHISPER_TAGS="whisper cuda"); whisper.cpp then
#                      computes on the first GPU it finds, on the CPU when none is visible.
#                      Default: the CPU only. Cached in a build directory of its own.
#   WHISPER_CUDA_ARCHS the GPU architectures compiled for (CMAKE_CUDA_ARCHITECTURES), default
#                      "75;80;86;89;90": Turing (T4) to Hopper (H100); "75-virtual" compiles
#                      PTX only (the quickest check that it builds)
set -euo pipefail
cd "$(dirname "$0")/.."

commit=9453b4b9be9b73adfc35051083f37cefa039acee
short=${commit:0:12}
tarball_sha256=$(awk '{print $1}' ../shared/vendor/whisper.cpp/SHA256SUMS 2>/dev/null || true)
repo_url=https://github.com/ggml-org/whisper.cpp
native="${WHISPER_NATIVE:-OFF}"
gpu="${WHISPER_GPU:-cpu}"
cuda_archs="${WHISPER_CUDA_ARCHS:-75;80;86;89;90}"
case "$gpu" in cpu | cuda) ;; *) echo "whisper: WHISPER_GPU=$gpu: want cpu or cuda" >&2; exit 2 ;; esac

mode="${1:-env}"
cli=0
[[ "${2:-}" == "--cli" ]] && cli=1
stage_dir=
if [[ "$mode" == stage ]]; then
  stage_dir="${2:?usage: whisper.sh stage DIR}"
  # What the image's whisper stage builds: the pinned commit, static, not native, CPU only.
  if [[ -n "${WHISPER_SRC:-}" || "$gpu" != cpu || "$native" != OFF ]]; then
    echo "whisper: stage: only the default build (no WHISPER_SRC, WHISPER_GPU=cpu, WHISPER_NATIVE=OFF) is the image's recipe" >&2
    exit 4
  fi
fi

say() { echo "whisper: $*" >&2; }

cache_root="$(go env GOCACHE)/parla-whisper"

# build_suffix names the build directory of the chosen variant: build, build-native,
# build-cuda-75_80_86_89_90, …
build_suffix() {
  local suffix=""
  [[ "$native" == "ON" ]] && suffix+="-native"
  [[ "$gpu" == "cuda" ]] && suffix+="-cuda-${cuda_archs//[^0-9a-z]/_}"
  echo "$suffix"
}

if [[ "$mode" == "test" ]]; then
  # Tests that need the source skip with a reason outside CI when it is absent, and fail in CI.
  status=0
  exports=$(bash .ci/whisper.sh env) || status=$?
  if ((status == 3)); then
    if [[ -n "${CI:-}" ]]; then
      say "required by CI: no whisper.cpp source (WHISPER_SRC, ../shared/vendor/whisper.cpp or network)"
      exit 1
    fi
    say "SKIP the whisper tests: no whisper.cpp source (set WHISPER_SRC=<dir or tarball>, or run where GitHub is reachable)"
    exit 0
  fi
  ((status == 0)) || exit "$status"
  eval "$exports"
  go vet -tags "$WHISPER_TAGS" ./providers/whisper/
  go test -tags "$WHISPER_TAGS" -count=1 -timeout 10m ./providers/whisper/
  go test -tags "$WHISPER_TAGS" -count=1 -timeout 10m -run '^TestWhisperEngineOrder' .
  exit 0
fi
if [[ "$mode" == "env-if-built" ]]; then
  [[ -f "$cache_root/$commit/whisper.cpp-$short/build$(build_suffix)/src/libwhisper.a" || -n "${WHISPER_SRC:-}" ]] || exit 0
  exec bash .ci/whisper.sh env
fi

# source_dir prints the directory holding the whisper.cpp tree (extracting or fetching it into
# the cache when needed), or returns 3.
source_dir() {
  local src="${WHISPER_SRC:-}" cache
  if [[ -n "$src" ]]; then
    if [[ -d "$src" ]]; then
      cd "$src" && pwd
      return
    fi
    [[ -f "$src" ]] || { say "WHISPER_SRC=$src does not exist"; return 3; }
    cache="$cache_root/custom-$(sha256sum "$src" | cut -c1-16)"
    extract "$src" "$cache"
    return
  fi
  cache="$cache_root/$commit"
  local vendored="../shared/vendor/whisper.cpp/whisper.cpp-$short.tar.gz"
  if [[ -d "$cache/whisper.cpp-$short" ]]; then
    echo "$cache/whisper.cpp-$short"
    return
  fi
  if [[ -f "$vendored" ]]; then
    local got
    got=$(sha256sum "$vendored" | awk '{print $1}')
    if [[ "$got" != "$tarball_sha256" ]]; then
      say "$vendored: SHA-256 $got does not match SHA256SUMS ($tarball_sha256)"
      return 1
    fi
    extract "$vendored" "$cache"
    return
  fi
  say "no source here: fetching $commit from $repo_url"
  local tmp="$cache/whisper.cpp-$short.part"
  rm -rf "$tmp" && mkdir -p "$tmp"
  if ! (cd "$tmp" && git init -q && git fetch -q --depth 1 "$repo_url" "$commit" && git checkout -q FETCH_HEAD) 2>/dev/null; then
    rm -rf "$tmp"
    say "cannot fetch $repo_url (no network?): get whisper.cpp at commit $commit elsewhere and set WHISPER_SRC=<its directory or tarball>"
    return 3
  fi
  # git names every commit by the hash of its whole tree: the same id is the same source.
  if [[ "$(git -C "$tmp" rev-parse HEAD)" != "$commit" ]]; then
    rm -rf "$tmp"
    say "fetched source is not commit $commit"
    return 1
  fi
  mv "$tmp" "$cache/whisper.cpp-$short"
  echo "$cache/whisper.cpp-$short"
}

# extract TARBALL CACHE unpacks into CACHE once and prints the tree's directory.
extract() {
  local top
  top=$(tar -tzf "$1" | head -1 | cut -d/ -f1)
  if [[ ! -d "$2/$top" ]]; then
    mkdir -p "$2"
    rm -rf "$2/$top.part" && mkdir "$2/$top.part"
    tar -xzf "$1" -C "$2/$top.part" --strip-components=1
    mv "$2/$top.part" "$2/$top"
  fi
  echo "$2/$top"
}

src=$(source_dir) || exit $?
# A source tree of the operator's own builds out of tree, in the cache, keyed by its path.
if [[ -n "${WHISPER_SRC:-}" && -d "${WHISPER_SRC}" ]]; then
  build="$cache_root/custom-$(echo -n "$src" | sha256sum | cut -c1-16)/build"
else
  build="$src/build"
fi
build+="$(build_suffix)"

libs=("$build/src/libwhisper.a" "$build/ggml/src/libggml.a" "$build/ggml/src/libggml-base.a" "$build/ggml/src/libggml-cpu.a")
cuda_flags=()
if [[ "$gpu" == "cuda" ]]; then
  libs+=("$build/ggml/src/ggml-cuda/libggml-cuda.a")
  cuda_flags=(-DGGML_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=$cuda_archs")
fi
need=0
for l in "${libs[@]}"; do [[ -f "$l" ]] || need=1; done
((cli)) && [[ ! -x "$build/bin/whisper-cli" ]] && need=1

if ((need)); then
  command -v cmake >/dev/null || { say "cmake is missing (apt-get install cmake g++)"; exit 1; }
  [[ "$gpu" != "cuda" ]] || command -v nvcc >/dev/null ||
    { say "WHISPER_GPU=cuda needs nvcc (the CUDA toolkit; Debian: nvidia-cuda-toolkit from non-free)"; exit 1; }
  targets=(whisper)
  ((cli)) && targets+=(whisper-cli)
  say "building ${targets[*]} from $src (about 6 minutes on 2 cores; cached in $build)"
  start=$SECONDS
  # Static libraries, so the Go binary needs no libwhisper.so at run time. Examples are
  # configured (whisper-cli is one) but only the asked targets are compiled.
  cmake -S "$src" -B "$build" -DBUILD_SHARED_LIBS=OFF -DCMAKE_BUILD_TYPE=Release \
    -DGGML_NATIVE="$native" -DWHISPER_BUILD_TESTS=OFF -DWHISPER_BUILD_EXAMPLES=ON \
    -DWHISPER_BUILD_SERVER=OFF "${cuda_flags[@]}" >"$build.log" 2>&1 || { tail -30 "$build.log" >&2; exit 1; }
  cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >>"$build.log" 2>&1 ||
    { tail -30 "$build.log" >&2; exit 1; }
  say "built in $((SECONDS - start)) s"
fi

case "$mode" in
  env)
    echo "export CGO_CFLAGS='-I$src/include -I$src/ggml/include'"
    if [[ "$gpu" == "cuda" ]]; then
      # The CUDA runtime and cuBLAS where the toolkit keeps them, and libcuda's stub for
      # hosts without the driver (the driver's own libcuda.so.1 is loaded at run time).
      cuda=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
      dirs="-L$build/ggml/src/ggml-cuda"
      for d in "$cuda/lib64" "$cuda/lib64/stubs" "$cuda/targets/x86_64-linux/lib" "$cuda/targets/x86_64-linux/lib/stubs"; do
        [[ -d "$d" ]] && dirs+=" -L$d"
      done
      echo "export CGO_LDFLAGS='-L$build/src -L$build/ggml/src $dirs'"
      echo "export WHISPER_TAGS='whisper cuda'"
    else
      echo "export CGO_LDFLAGS='-L$build/src -L$build/ggml/src'"
      echo "export WHISPER_TAGS=whisper"
    fi
    ((cli)) && echo "export WHISPER_CLI='$build/bin/whisper-cli'"
    ;;
  stage)
    # The line the Dockerfile's whisper stage computes for the build it would make (same
    # commit, options and compiler): it takes this library only when the lines are equal.
    recipe="whisper.cpp $commit static Release GGML_NATIVE=OFF cpu gcc-$(gcc -dumpfullversion) $(uname -m)"
    if [[ "$(cat "$stage_dir/RECIPE" 2>/dev/null)" != "$recipe" ]]; then
      rm -rf "$stage_dir" && mkdir -p "$stage_dir/build/src" "$stage_dir/build/ggml/src" "$stage_dir/ggml"
      cp -r "$src/include" "$stage_dir/include"
      cp -r "$src/ggml/include" "$stage_dir/ggml/include"
      cp "$build/src/libwhisper.a" "$stage_dir/build/src/"
      cp "$build"/ggml/src/libggml*.a "$stage_dir/build/ggml/src/"
      echo "$recipe" >"$stage_dir/RECIPE"
    fi
    say "staged for the image in $stage_dir ($recipe)"
    ;;
  *) say "unknown mode $mode"; exit 2 ;;
esac
exit 0
