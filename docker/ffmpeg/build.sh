#!/usr/bin/env bash
# Builds the ffmpeg and ffprobe Parla ships: FFmpeg 5.1.9 (the source of Debian bookworm's
# ffmpeg 7:5.1.9-0+deb12u1, checked by SHA-256) configured with --disable-everything plus
# exactly the components media/ and the providers use, and libmp3lame and libopus linked in
# statically, so the two binaries need nothing but glibc (and zlib) at run time.
#
#   docker/ffmpeg/build.sh PREFIX    installs PREFIX/bin/ffmpeg and PREFIX/bin/ffprobe
#
# Needs: build-essential nasm pkg-config libmp3lame-dev libopus-dev zlib1g-dev xz-utils,
# and curl when the source is not at hand. About 6 minutes on 2 cores.
#
# The source, first found wins (checked against FFMPEG_SHA256 in every case):
#   FFMPEG_SRC=<tarball>                         one of your own
#   ../shared/vendor/ffmpeg/ffmpeg_5.1.9.orig.tar.xz next to the checkout (as whisper's)
#   Debian's pool (deb.debian.org), fetched with curl
#
# Why each component is on: see the lists below. Anything not listed (hls, concat, image2,
# tee, data:, subfile:, crypto, every device, video encoder and hardware API) is not built,
# so no argument list can reach it. media.TestFFmpegBuild checks a build against the code.
set -euo pipefail

prefix="${1:?usage: build.sh PREFIX}"
version=5.1.9
tarball_name="ffmpeg_${version}.orig.tar.xz"
FFMPEG_SHA256=d9b593bb2ba93d4b50f74177e0cdcd41747e708596367deed0c30348a71dd176
pool_url="http://deb.debian.org/debian/pool/main/f/ffmpeg/$tarball_name"
work="${FFMPEG_WORK:-${TMPDIR:-/tmp}/parla-ffmpeg-$version}"
here="$(cd "$(dirname "$0")" && pwd)"

say() { echo "ffmpeg: $*" >&2; }

# Demuxers: media.MediaFormats (what a visitor's upload or link may be; "mpeg" is the
# mpegps demuxer, "webm" a name of matroska's), plus the inputs of our own pipes: wav
# (espeak-ng), pcm_s16le (OpenAI's PCM), aac (OpenAI's ADTS answers, remuxed).
demuxers=(mov matroska mp3 aac ogg flac wav avi flv mpegts mpegps asf aiff caf ac3 eac3 amr w64
  pcm_s16le)
# Decoders: the audio codecs those containers carry (video is never decoded: every call
# maps the first audio stream or passes -vn).
decoders=(aac aac_latm mp3 mp3float mp2 mp2float mp1 mp1float opus vorbis flac alac
  ac3 eac3 dca truehd mlp amrnb amrwb wmav1 wmav2 wmapro wmalossless wmavoice
  nellymoser adpcm_swf adpcm_ms adpcm_ima_wav adpcm_ima_qt adpcm_g722 adpcm_g726 gsm gsm_ms qdm2 qdmc
  pcm_alaw pcm_mulaw pcm_s8 pcm_u8 pcm_s16le pcm_s16be pcm_s16le_planar pcm_s16be_planar
  pcm_s24le pcm_s24be pcm_s32le pcm_s32be pcm_f32le pcm_f32be pcm_f64le pcm_f64be
  pcm_dvd pcm_bluray)
# Parsers: what the raw and transport demuxers need to cut frames and find parameters.
parsers=(aac aac_latm ac3 mpegaudio opus vorbis flac dca mlp amr gsm h264 hevc mpegvideo mpeg4video)
# Encoders: the orderable formats (media.formats: libmp3lame, libopus, aac, flac), the
# decoded PCM for whisper (f32le) and the null muxer's default (pcm_s16le, the measure).
encoders=(libmp3lame libopus aac flac pcm_f32le pcm_s16le)
# Muxers: the orderable formats and their parts (mp3, ogg, mp4, adts, flac), the copied audio
# of a link (matroska), whisper's PCM (f32le), the measure (null) and the engines' parts
# decoded for their join (s16le: media.LoudPCMArgs).
muxers=(mp3 ogg mp4 adts flac matroska pcm_f32le null pcm_s16le)
# Filters: tempo (atempo), the measure (asetpts, silencedetect), the resampling -ar/-ac
# insert (aresample), the engines' parts matched in loudness (loudnorm); ffmpeg itself
# selects aformat, anull and atrim.
filters=(atempo asetpts silencedetect aresample aformat anull atrim loudnorm)
# Bitstream filters: ADTS AAC copied into MP4 or Matroska.
bsfs=(aac_adtstoasc)
# Protocols: our pipes and temp files, and the loopback relay for links (http over tcp).
protocols=(file pipe http tcp)

join() { local IFS=,; echo "$*"; }

source_tarball() {
  local candidates=("${FFMPEG_SRC:-}" "$here/../../../shared/vendor/ffmpeg/$tarball_name" "$work/$tarball_name")
  for t in "${candidates[@]}"; do
    [[ -n "$t" && -f "$t" ]] && { echo "$t"; return; }
  done
  mkdir -p "$work"
  say "fetching $pool_url"
  curl -fsSL -o "$work/$tarball_name.part" "$pool_url"
  mv "$work/$tarball_name.part" "$work/$tarball_name"
  echo "$work/$tarball_name"
}

tarball=$(source_tarball)
got=$(sha256sum "$tarball" | awk '{print $1}')
if [[ "$got" != "$FFMPEG_SHA256" ]]; then
  say "$tarball: SHA-256 $got, expected $FFMPEG_SHA256"
  exit 1
fi

src="$work/ffmpeg-$version"
rm -rf "$src" && mkdir -p "$src"
tar -xJf "$tarball" -C "$src" --strip-components=1

# Only the static libmp3lame and libopus in the link path, so -lmp3lame and -lopus take
# them and not the shared ones: the binaries then need no libmp3lame0/libopus0 at run time.
static="$work/static-libs"
mkdir -p "$static"
for lib in mp3lame opus; do
  a=$(gcc -print-file-name="lib$lib.a")
  [[ -f "$a" ]] || { say "lib$lib.a not found (apt-get install libmp3lame-dev libopus-dev)"; exit 1; }
  ln -sf "$a" "$static/lib$lib.a"
done

start=$SECONDS
cd "$src"
./configure \
  --prefix="$prefix" \
  --disable-everything --disable-autodetect \
  --disable-doc --disable-debug --disable-avdevice --disable-swscale --disable-postproc \
  --disable-programs --enable-ffmpeg --enable-ffprobe \
  --enable-static --disable-shared \
  --enable-zlib --enable-libmp3lame --enable-libopus \
  --extra-ldflags="-L$static" --pkg-config-flags=--static \
  --enable-demuxer="$(join "${demuxers[@]}")" \
  --enable-decoder="$(join "${decoders[@]}")" \
  --enable-parser="$(join "${parsers[@]}")" \
  --enable-encoder="$(join "${encoders[@]}")" \
  --enable-muxer="$(join "${muxers[@]}")" \
  --enable-filter="$(join "${filters[@]}")" \
  --enable-bsf="$(join "${bsfs[@]}")" \
  --enable-protocol="$(join "${protocols[@]}")" \
  >"$work/configure.log" 2>&1 || { tail -30 "$work/configure.log" "$src/ffbuild/config.log" >&2; exit 1; }
make -j"${FFMPEG_JOBS:-$(nproc)}" >"$work/make.log" 2>&1 || { tail -40 "$work/make.log" >&2; exit 1; }
mkdir -p "$prefix/bin"
install -s ffmpeg ffprobe "$prefix/bin/"
say "built in $((SECONDS - start)) s: $(du -ch "$prefix/bin/ffmpeg" "$prefix/bin/ffprobe" | tail -1 | cut -f1)"
