#!/usr/bin/env bash
# Downloads whisper.cpp ggml models into this folder and checks them against their published
# checksums (whisper.cpp's models/README.md for the speech models, SHA-1; the Hugging Face
# file's SHA-256 for the Silero VAD model). Needs internet access.
#
#   ./download.sh base                 a speech model (WHISPER_MODEL); see the list below
#   ./download.sh silero-v6.2.0        the Silero VAD model (WHISPER_VAD_MODEL)
#   ./download.sh --if-online NAME...  as above, but where the network is unreachable say what
#                                      to do and exit 0 (make run and make whisper use this)
#   ./download.sh list                 every model it knows, and whether its file is here
#   ./download.sh check [NAME...]      check the files here (or the named ones) against their sums
#
# `make run MODEL=small` fetches and uses another speech model by its name here.
set -euo pipefail
cd "$(dirname "$0")"

# name  file  algorithm  checksum  (Hugging Face repository)
models=$(cat <<'LIST'
tiny            ggml-tiny.bin             sha1   bd577a113a864445d4c299885e0cb97d4ba92b5f  ggerganov/whisper.cpp
tiny.en         ggml-tiny.en.bin          sha1   c78c86eb1a8faa21b369bcd33207cc90d64ae9df  ggerganov/whisper.cpp
base            ggml-base.bin             sha1   465707469ff3a37a2b9b8d8f89f2f99de7299dac  ggerganov/whisper.cpp
base.en         ggml-base.en.bin          sha1   137c40403d78fd54d454da0f9bd998f78703390c  ggerganov/whisper.cpp
small           ggml-small.bin            sha1   55356645c2b361a969dfd0ef2c5a50d530afd8d5  ggerganov/whisper.cpp
small.en        ggml-small.en.bin         sha1   db8a495a91d927739e50b3fc1cc4c6b8f6c2d022  ggerganov/whisper.cpp
medium          ggml-medium.bin           sha1   fd9727b6e1217c2f614f9b698455c4ffd82463b4  ggerganov/whisper.cpp
medium.en       ggml-medium.en.bin        sha1   8c30f0e44ce9560643ebd10bbe50cd20eafd3723  ggerganov/whisper.cpp
silero-v6.2.0   ggml-silero-v6.2.0.bin    sha256 2aa269b785eeb53a82983a20501ddf7c1d9c48e33ab63a41391ac6c9f7fb6987  ggml-org/whisper-vad
LIST
)

known() { awk '{printf "%s ", $1}' <<<"$models"; }

# verify FILE ALGO SUM: whether FILE (here) has the published checksum.
verify() {
  echo "$3  $1" | "${2}sum" -c --quiet - >/dev/null 2>&1
}

case "${1:-}" in
  list)
    printf '%-14s %-24s %s\n' NAME FILE HERE
    while read -r name file _ _ _; do
      printf '%-14s %-24s %s\n' "$name" "$file" "$([[ -f "$file" ]] && echo yes || echo no)"
    done <<<"$models"
    exit 0
    ;;
  check)
    shift
    bad=0 seen=0
    while read -r name file algo sum _; do
      if (($#)); then
        [[ " $* " == *" $name "* ]] || continue
      elif [[ ! -f "$file" ]]; then
        continue
      fi
      seen=1
      if [[ ! -f "$file" ]]; then
        echo "models/$file: not here (models/download.sh $name)"; bad=1
      elif verify "$file" "$algo" "$sum"; then
        echo "models/$file: $algo checked"
      else
        echo "models/$file: $algo checksum mismatch (delete it and run models/download.sh $name)"; bad=1
      fi
    done <<<"$models"
    ((seen)) || echo "no model here; models/download.sh list names them"
    exit "$bad"
    ;;
esac

optional=0
if [[ "${1:-}" == "--if-online" ]]; then
  optional=1
  shift
fi
(($#)) || { echo "usage: $0 [--if-online] <name>... | list | check [<name>...]; names: $(known)" >&2; exit 2; }

for name in "$@"; do
  read -r _ file algo sum repo < <(awk -v n="$name" '$1 == n' <<<"$models") || true
  if [[ -z "${file:-}" ]]; then
    echo "unknown model $name; known: $(known)" >&2
    exit 2
  fi
  if [[ -f "$file" ]]; then
    if ! verify "$file" "$algo" "$sum"; then
      echo "models/$file: $algo checksum mismatch (delete it and run models/download.sh $name)" >&2
      exit 1
    fi
    echo "models/$file is here ($algo checked)"
  else
    url="https://huggingface.co/$repo/resolve/main/$file"
    if ! curl -fsSL --retry 2 --connect-timeout 10 -o "$file.part" "$url"; then
      rm -f "$file.part"
      msg="cannot download $url (no network here?). On a machine with internet run models/download.sh $name and copy models/$file here"
      if ((optional)); then
        echo "models: $msg" >&2
        continue
      fi
      echo "$msg" >&2
      exit 1
    fi
    if ! verify "$file.part" "$algo" "$sum"; then
      rm -f "$file.part"
      echo "models/$file: $algo checksum mismatch; deleted" >&2
      exit 1
    fi
    mv "$file.part" "$file"
    echo "saved models/$file ($algo checked)"
  fi
  case "$name" in
    silero-*) echo "  used from here by default (WHISPER_VAD=auto), or set WHISPER_VAD_MODEL=$(pwd)/$file" ;;
    *) echo "  set WHISPER_MODEL=$(pwd)/$file to use it" ;;
  esac
done
