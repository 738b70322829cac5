#!/usr/bin/env bash
# The deploy checks: the image and compose.yaml built and run as an operator would, offline but
# for the package registries (Debian, the Go module proxy, npm), with podman as root standing in
# for a Docker engine and Docker Compose v2 talking to podman's Docker-compatible API.
#
#   .ci/deploy.sh [all]    every phase below, in order, each timed
#   .ci/deploy.sh PHASE…   only those, in the order given (each needs the ones before it):
#                          host bases image notags alone tools sides compose voices scaled
#
#   host     podman, mmdebstrap…, from Debian, and podman's settings for this sandbox
#   bases    the base images the Dockerfile names, made here: debian from mmdebstrap; golang
#            and node with this machine's Go and Node (Debian's are older)
#   image    docker/Dockerfile built with the vendored whisper.cpp (--build-context vendor=…)
#            and what is built already (--build-context prebuilt=…: libwhisper from
#            .ci/whisper.sh's cache, ffmpeg from the last image), each taken only when its recipe
#            line is the stage's own; then media.TestFFmpegBuild in it with CI=true
#   notags   the same with --build-arg TAGS=: no whisper.cpp, no vendor context
#   alone    the image by itself on a free port: healthy, not root, a paid order of each
#            service (whisper with the test model), all three results byte-identical across a
#            restart, /readyz failing for a named reason
#   tools    Caddy, Mailpit, mc and Docker Compose v2 built from their Go modules at exact
#            versions (cached under the Go cache directory; .ci/run starts this phase in the
#            background at its start, and a lock makes this one wait for it)
#   sides    stand-ins for the side services compose.yaml names, from real software: Postgres
#            and Prometheus from Debian; MinIO, mc, Caddy and Mailpit from the Go builds.
#            Grafana is not in Debian: the `monitoring` profile is not run here.
#   compose  compose.yaml's default profile on free ports: one paid order delivered from MinIO
#            (a redirect to MinIO's public endpoint, served by MinIO)
#   voices   the voices profile with a stand-in for Kokoro-FastAPI's image (its protocol, espeak-ng
#            and ffmpeg from Debian, docker/kokoro-standin): an order in English and one in Spanish
#            read through it by those languages' Kokoro voices, one in Turkish by espeak-ng, and
#            the three in one order, one file (the speech router's join in the image)
#   scaled   the scaled profile with 3 replicas behind Caddy: an order delivered through Caddy,
#            and one delivered once although the replica running it was killed mid-job (one
#            job, two River attempts, one "result stored" in all the replicas' logs, one letter)
#
# Every curl, podman and compose call has a time limit; every host port is chosen free at run
# time (.ci/ports.sh).
#
# Safe to run again: what is built is kept (images carry the hash of what made them) and reused.
# Needs root (podman's rootful mode and its network). `make test` runs it through
# .ci/deploy-check.sh. Measured times: README, "Deployment".
# The build log of each image is in $cache (image-build.log, notags-build.log, stand-in.log).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
source .ci/ports.sh

say() { echo "deploy: $*" >&2; }

# Every podman and compose call has a time limit, so that a hang fails naming the call instead
# of reading as CI's time running out. Builds get an hour (deploy-check.sh's deadline stops
# them sooner); the API service runs for the whole script.
podman() {
  local limit=120 rc=0
  case "$1" in
    system) command podman "$@"; return ;;
    build) limit=3600 ;;
    exec) limit=60 ;;
    run) limit=300 ;;
  esac
  timeout -k 10 "$limit" podman "$@" || rc=$?
  ((rc != 124 && rc != 137)) || echo "deploy: podman $1 gave up after $limit s: podman $*" >&2
  return "$rc"
}

# What this script starts in the background (the health-check ticker, podman's API service)
# ends with it: nothing is left holding the caller's output open.
ticker_pid=
service_pid=
cleanup() {
  [[ -z "$ticker_pid" ]] || kill "$ticker_pid" 2>/dev/null || true
  [[ -z "$service_pid" ]] || kill "$service_pid" 2>/dev/null || true
}
trap cleanup EXIT
die() { say "FAIL: $*"; exit 1; }

cache="$(go env GOCACHE)/parla-deploy"
bin="$cache/bin"
mkdir -p "$bin"
export PATH="$bin:$PATH"

# Exact versions of what is built from Go modules (the module proxy serves them by these names).
caddy_version=v2.10.2
mailpit_version=v1.27.11
mc_version=v0.0.0-20250313080218-cf909e1063a9
compose_version=v2.40.3

# The image names the Dockerfile and compose.yaml use; the stand-ins are tagged with them.
img_debian=docker.io/library/debian:bookworm-slim
img_golang=docker.io/library/golang:1.26-bookworm
img_node=docker.io/library/node:20-bookworm
img_postgres=docker.io/library/postgres:15
img_caddy=docker.io/library/caddy:2.10
img_minio=docker.io/minio/minio:RELEASE.2025-09-07T16-13-09Z
img_mailpit=docker.io/axllent/mailpit:v1.27
img_prometheus=docker.io/prom/prometheus:v2.55.1
img_app=localhost/parla:local
# Not Kokoro-FastAPI's name: compose.yaml's KOKORO_IMAGE points the voices profile at it.
img_kokoro=localhost/parla-kokoro-standin:ci

# ---------------------------------------------------------------------------------------------
# tools

phase_host() {
  # cmake and g++: libwhisper for the image, built on the host once (.ci/whisper.sh stage).
  # ffmpeg: ffprobe measures a result (phase voices).
  local want=(podman runc mmdebstrap netavark aardvark-dns iptables catatonit uidmap curl jq ffmpeg cmake g++) missing=() p
  for p in "${want[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if ((${#missing[@]})); then
    say "apt-get ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  fi
  # runc, and no default ulimits: this sandbox refuses to raise them (`error setting rlimits`).
  if ! grep -q 'parla-deploy' /etc/containers/containers.conf 2>/dev/null; then
    mkdir -p /etc/containers
    cat >/etc/containers/containers.conf <<'EOF'
# parla-deploy: written by .ci/deploy.sh
[containers]
default_ulimits = []
[engine]
runtime = "runc"
EOF
  fi
}

# The side tools need only Go: .ci/run starts this phase in the background at its start
# (`.ci/deploy.sh tools`, niced), beside the install and the Go tests. A lock keeps two runs
# from building the same tool: the later one waits, then finds it built.
phase_tools() {
  exec 9>"$cache/tools.lock"
  flock 9
  go_tool caddy github.com/caddyserver/caddy/v2/cmd/caddy "$caddy_version"
  go_tool mailpit github.com/axllent/mailpit "$mailpit_version"
  go_tool mc github.com/minio/mc "$mc_version"
  compose_tool
  flock -u 9
}

# go_tool NAME MODULE VERSION builds one binary into the cache once.
go_tool() {
  [[ -x "$bin/$1-$3" ]] && return
  say "go install $2@$3"
  GOBIN="$cache/gobin-$1" CGO_ENABLED=0 nice -n 15 go install "$2@$3" 2>&1 | { grep -v '^go: downloading' >&2 || true; }
  [[ -x "$cache/gobin-$1/$(basename "$2")" ]] || die "go install $2@$3"
  mv "$cache/gobin-$1/$(basename "$2")" "$bin/$1-$3"
  ln -sf "$1-$3" "$bin/$1"
}

# compose_tool builds Docker Compose v2. `go install` refuses it (its go.mod has exclude
# directives), so it is built inside a writable copy of the downloaded module.
compose_tool() {
  [[ -x "$bin/docker-compose-$compose_version" ]] && { ln -sf "docker-compose-$compose_version" "$bin/docker-compose"; return; }
  say "building Docker Compose $compose_version (about 4 minutes)"
  local dir src
  # (no jq: this phase may run before `host` installs it)
  dir=$(go mod download -json "github.com/docker/compose/v2@$compose_version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -d "$dir" ]] || die "go mod download github.com/docker/compose/v2@$compose_version"
  src="$cache/compose-src"
  rm -rf "$src" && cp -r "$dir" "$src" && chmod -R u+w "$src"
  (cd "$src" && CGO_ENABLED=0 nice -n 15 go build -trimpath -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$compose_version" -o "$bin/docker-compose-$compose_version" ./cmd)
  rm -rf "$src"
  ln -sf "docker-compose-$compose_version" "$bin/docker-compose"
}

# ---------------------------------------------------------------------------------------------
# bases

# built IMAGE KEY says whether IMAGE exists and was made from KEY (a hash of its recipe).
built() { [[ "$(podman image inspect --format '{{index .Labels "parla.recipe"}}' "$1" 2>/dev/null)" == "$2" ]]; }

# stand_in IMAGE CONTEXT CONTAINERFILE builds IMAGE from CONTAINERFILE (a string) unless the same
# recipe already made it. Files the recipe copies must be in CONTEXT.
stand_in() {
  local image=$1 ctx=$2 recipe=$3 key
  key=$(printf '%s' "$recipe" | sha256sum | cut -c1-16)
  built "$image" "$key" && return
  say "making $image"
  printf '%s\nLABEL parla.recipe=%s\n' "$recipe" "$key" >"$ctx/Containerfile"
  nice podman build --format docker -t "$image" -f "$ctx/Containerfile" "$ctx" >"$cache/stand-in.log" 2>&1 ||
    { tail -20 "$cache/stand-in.log" >&2; die "making $image"; }
}

phase_bases() {
  local key="mmdebstrap-minbase-bookworm-1"
  if ! built "$img_debian" "$key"; then
    say "making $img_debian with mmdebstrap (about 2 minutes)"
    mmdebstrap --quiet --variant=minbase bookworm "$cache/debian.tar"
    podman import -q --change "LABEL parla.recipe=$key" --change 'CMD ["bash"]' "$cache/debian.tar" "$img_debian" >/dev/null
    rm -f "$cache/debian.tar"
  fi
  local ctx="$cache/ctx"
  rm -rf "$ctx" && mkdir -p "$ctx"

  # golang: this machine's Go, with what the real image has for cgo and modules.
  # The certificate authorities this machine trusts beyond Debian's (a proxy in front of the
  # registries, say), so that builds reach the registries as this machine does.
  mkdir -p "$ctx/ca"
  cp /usr/local/share/ca-certificates/*.crt "$ctx/ca/" 2>/dev/null || true
  local trust="COPY ca/ /usr/local/share/ca-certificates/
RUN update-ca-certificates >/dev/null
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
# CAs $(cat "$ctx"/ca/*.crt 2>/dev/null | sha256sum | cut -c1-16)"
  cp -a "$(go env GOROOT)" "$ctx/go"
  stand_in "$img_golang" "$ctx" "FROM $img_debian
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates gcc g++ libc6-dev make git pkg-config && rm -rf /var/lib/apt/lists/*
$trust
COPY go /usr/local/go
ENV GOPATH=/go PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# $(go version)"
  rm -rf "$ctx/go"

  # node: this machine's Node and npm.
  mkdir -p "$ctx/node/bin" "$ctx/node/lib"
  cp "$(command -v node)" "$ctx/node/bin/"
  cp -a "$(dirname "$(readlink -f "$(command -v npm)")")/.." "$ctx/node/lib/npm"
  stand_in "$img_node" "$ctx" "FROM $img_debian
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
$trust
COPY node/bin/node /usr/local/bin/node
COPY node/lib/npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
# node $(node --version)"
  rm -rf "$ctx"
}

phase_sides() {
  local ctx="$cache/ctx-sides"
  # MinIO's server: .ci/install builds it (the same binary the Go tests use).
  [[ -x "$(go env GOPATH)/bin/minio" ]] || bash .ci/install --no-ui
  rm -rf "$ctx" && mkdir -p "$ctx"

  # postgres: Debian's, with an entrypoint that honours POSTGRES_USER/PASSWORD/DB as the
  # official image does (the data directory initialised on first start).
  cat >"$ctx/pg-entrypoint" <<'EOF'
#!/bin/sh
set -eu
PGDATA=${PGDATA:-/var/lib/postgresql/data}
mkdir -p "$PGDATA" /run/postgresql
chown postgres "$PGDATA" /run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pw=$(mktemp) && echo "$POSTGRES_PASSWORD" >"$pw" && chown postgres "$pw"
  su postgres -c "initdb -D '$PGDATA' -U '${POSTGRES_USER:-postgres}' --pwfile='$pw' --auth-local=trust --auth-host=scram-sha-256" >/dev/null
  rm -f "$pw"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ "${POSTGRES_DB:-}" ] && [ "$POSTGRES_DB" != postgres ]; then
    su postgres -c "pg_ctl -D '$PGDATA' -w -o '-c listen_addresses=' start" >/dev/null
    su postgres -c "psql -U '${POSTGRES_USER:-postgres}' -d postgres -c 'CREATE DATABASE \"$POSTGRES_DB\"'" >/dev/null
    su postgres -c "pg_ctl -D '$PGDATA' -w stop" >/dev/null
  fi
fi
exec su postgres -c "exec postgres -D '$PGDATA'"
EOF
  chmod +x "$ctx/pg-entrypoint"
  stand_in "$img_postgres" "$ctx" "FROM $img_debian
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-15 && rm -rf /var/lib/apt/lists/*
ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
COPY pg-entrypoint /usr/local/bin/docker-entrypoint.sh
EXPOSE 5432
ENTRYPOINT [\"/usr/local/bin/docker-entrypoint.sh\"]
# $(sha256sum <"$ctx/pg-entrypoint")"

  stand_in "$img_prometheus" "$ctx" "FROM $img_debian
RUN apt-get update && apt-get install -y --no-install-recommends prometheus && rm -rf /var/lib/apt/lists/*
WORKDIR /prometheus
ENTRYPOINT [\"/usr/bin/prometheus\"]
CMD [\"--config.file=/etc/prometheus/prometheus.yml\"]"

  # The Go-built side services: one binary each on the slim base.
  cp "$(readlink -f "$bin/caddy")" "$ctx/caddy"
  stand_in "$img_caddy" "$ctx" "FROM $img_debian
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
COPY caddy /usr/bin/caddy
EXPOSE 80 443
CMD [\"caddy\", \"run\", \"--config\", \"/etc/caddy/Caddyfile\", \"--adapter\", \"caddyfile\"]
# caddy $caddy_version"
  cp "$(readlink -f "$bin/mailpit")" "$ctx/mailpit"
  stand_in "$img_mailpit" "$ctx" "FROM $img_debian
COPY mailpit /mailpit
EXPOSE 1025 8025
ENTRYPOINT [\"/mailpit\"]
# mailpit $mailpit_version"
  cp "$(go env GOPATH)/bin/minio" "$ctx/minio"
  cp "$(readlink -f "$bin/mc")" "$ctx/mc"
  stand_in "$img_minio" "$ctx" "FROM $img_debian
COPY minio mc /usr/bin/
EXPOSE 9000 9001
ENTRYPOINT [\"/usr/bin/minio\"]
# minio $(sha256sum <"$ctx/minio" | cut -c1-16) mc $mc_version"
  rm -rf "$ctx"
}

# ---------------------------------------------------------------------------------------------
# image

vendor_dir=${WHISPER_VENDOR_DIR:-$root/../shared/vendor/whisper.cpp}

# What was built already, for the image's prebuilt context (docker/Dockerfile, stage prebuilt):
# libwhisper from .ci/whisper.sh's cache (`make test` built it for the whisper tests; built
# here otherwise, once, for both), and ffmpeg/ffprobe from the last image built here. Each
# carries its recipe line; the image takes it only when that is the line it would build from.
prebuilt="$cache/prebuilt"

stage_prebuilt() {
  mkdir -p "$prebuilt/prebuilt/ffmpeg"
  local status=0
  WHISPER_SRC= WHISPER_GPU=cpu WHISPER_NATIVE=OFF bash .ci/whisper.sh stage "$prebuilt/prebuilt/whisper" >"$cache/whisper-stage.log" 2>&1 || status=$?
  if ((status)); then
    tail -20 "$cache/whisper-stage.log" >&2
    die "libwhisper for the image (.ci/whisper.sh stage, status $status)"
  fi
  say "image: $(tail -1 "$cache/whisper-stage.log")"
  say "image: ffmpeg prebuilt: $(cat "$prebuilt/prebuilt/ffmpeg/RECIPE" 2>/dev/null || echo none yet)"
}

# stage_origin NAME STEP says where the image's NAME came from, from the build log: the
# stage's own line (not the log's copy of the RUN command, which holds "($recipe)"), or
# the layer cache's answer on the line after the step.
stage_origin() {
  local log="$cache/image-build.log"
  if grep -q "^$1: prebuilt, not compiled again ($1 " "$log"; then
    echo "prebuilt, not compiled again"
  elif grep -F -A1 "$2" "$log" | grep -q -- '--> Using cache'; then
    echo "from an earlier build's layer (cache)"
  else
    echo "compiled in the image (its recipe differs from the prebuilt one, or no prebuilt)"
  fi
}

# keep_ffmpeg copies the image's ffmpeg, ffprobe and their recipe line into the prebuilt context.
keep_ffmpeg() {
  local c recipe
  c=$(podman create "$img_app") || return 0
  recipe=$(podman cp "$c:/usr/local/share/parla/ffmpeg.recipe" - 2>/dev/null | tar -xO 2>/dev/null || true)
  if [[ -n "$recipe" && "$recipe" != "$(cat "$prebuilt/prebuilt/ffmpeg/RECIPE" 2>/dev/null)" ]]; then
    rm -rf "$prebuilt/prebuilt/ffmpeg" && mkdir -p "$prebuilt/prebuilt/ffmpeg"
    podman cp "$c:/usr/local/bin/ffmpeg" "$prebuilt/prebuilt/ffmpeg/ffmpeg" &&
      podman cp "$c:/usr/local/bin/ffprobe" "$prebuilt/prebuilt/ffmpeg/ffprobe" &&
      echo "$recipe" >"$prebuilt/prebuilt/ffmpeg/RECIPE" || rm -rf "$prebuilt/prebuilt/ffmpeg"
  fi
  podman rm -f "$c" >/dev/null 2>&1 || true
}

phase_image() {
  [[ -f "$vendor_dir/SHA256SUMS" ]] || die "no vendored whisper.cpp in $vendor_dir (WHISPER_VENDOR_DIR)"
  stage_prebuilt
  say "building $img_app (on 2 busy cores: about 10 minutes with libwhisper prebuilt, 15 more for ffmpeg when its recipe is new)"
  nice podman build --format docker --build-context vendor="$vendor_dir" --build-context prebuilt="$prebuilt" \
    -t "$img_app" -f docker/Dockerfile . >"$cache/image-build.log" 2>&1 ||
    { tail -40 "$cache/image-build.log" >&2; die "image build"; }
  say "image: whisper.cpp $(stage_origin 'whisper.cpp' 'RUN --mount=type=bind,from=vendor')"
  say "image: ffmpeg $(stage_origin 'ffmpeg' 'RUN recipe="ffmpeg')"
  keep_ffmpeg
  local size
  size=$(podman image inspect --format '{{.Size}}' "$img_app")
  say "image: $((size / 1000000)) MB ($img_app); its layers:"
  podman history --format '{{.Size}}	{{.CreatedBy}}' "$img_app" | cut -c1-110 | head -12 >&2
  ((size <= 450 * 1000 * 1000)) || die "the image is $((size / 1000000)) MB, over 450 MB"
  # The visitor-file rules and every argument list media builds, against the image's own
  # ffmpeg (a test binary of media, no network, the app's user).
  # CI=true: a program the test needs and does not find fails it instead of skipping.
  CGO_ENABLED=0 go test -c -o "$cache/media.test" ./media/ || die "building media's tests"
  timeout 300 podman run --rm --network none --user 10001 -e CI=true -v "$cache/media.test:/t/media.test:ro" \
    -v "$root/media/testdata:/t/testdata:ro" -w /t --entrypoint /t/media.test "$img_app" \
    -test.run '^TestFFmpegBuild$' -test.count=1 -test.v >"$cache/ffmpeg-test.log" 2>&1 ||
    { tail -30 "$cache/ffmpeg-test.log" >&2; die "media.TestFFmpegBuild in the image"; }
  ! grep -q -- '--- SKIP' "$cache/ffmpeg-test.log" || { grep -- '--- SKIP' -A3 "$cache/ffmpeg-test.log" >&2; die "media.TestFFmpegBuild skipped in the image"; }
  say "image: media.TestFFmpegBuild passes with the image's ffmpeg, CI=true ($(tail -1 "$cache/ffmpeg-test.log"))"
}

# notags: --build-arg TAGS= builds with no whisper.cpp at all, and so without the vendor context.
phase_notags() {
  nice podman build --format docker --build-arg TAGS= -t localhost/parla:notags -f docker/Dockerfile . \
    >"$cache/notags-build.log" 2>&1 || { tail -40 "$cache/notags-build.log" >&2; die "the build with TAGS="; }
  grep -q 'whisper.cpp not built' "$cache/notags-build.log" || die "TAGS= still built whisper.cpp"
  grep -q -- '-- Build files have been written' "$cache/notags-build.log" && die "TAGS= ran cmake"
  say "notags: built without whisper.cpp ($(podman image inspect --format '{{.Size}}' localhost/parla:notags | numfmt --to=iec))"
  podman rmi localhost/parla:notags >/dev/null
}

# ---------------------------------------------------------------------------------------------
# orders, as a visitor's browser places them (the test checkout: no Stripe key is set)

email=deploy-check@example.com

# post BASE PATH JSON prints the answer's body.
post() { curl -sS --max-time 120 -X POST "$1$2" -H 'Content-Type: application/json' -d "$3"; }

# pay_and_wait BASE SERVICE CHECKOUT_JSON [TIMEOUT] pays the order through the test checkout and
# prints its result link once delivered.
pay_and_wait() {
  local base=$1 service=$2 body=$3 timeout=${4:-300} co sid answer link status
  co=$(post "$base" "/payment/$service/create-checkout-session" "$body")
  sid=$(jq -r '.sessionId // empty' <<<"$co")
  [[ -n "$sid" ]] || die "$service checkout at $base: $co"
  curl -sS -o /dev/null --max-time 30 -X POST "$base/checkout/test/$sid/pay" || die "$service: test payment"
  for ((i = 0; i < timeout; i += 2)); do
    answer=$(post "$base" "/services/$service" "{\"sessionId\":\"$sid\"}")
    link=$(jq -r '.data.data // empty' <<<"$answer")
    [[ -n "$link" ]] && { echo "$link"; return; }
    status=$(jq -r '.order.status // .error.code // empty' <<<"$answer")
    [[ "$status" == failed || "$status" == refunded ]] && die "$service order $sid: $answer"
    sleep 2
  done
  die "$service order $sid not delivered in $timeout s: $answer"
}

tts_order() { # TEXT → checkout JSON
  jq -nc --arg t "$1" --arg e "$email" '{order: {voice: "alloy", input: $t, format: "mp3", speed: 1,
    email: $e, emailVerify: $e, locale: "en", language: "en"}}'
}

speech="Hello. This is the deploy check of the speech service, speaking a short test sentence."

# fetch LINK FILE downloads a result the app serves itself (local disk: no redirect).
fetch() {
  local got
  got=$(curl -sS --max-time 60 -o "$2" -w '%{http_code} %{redirect_url}' "$1") || die "download $1"
  [[ "$got" == "200 " ]] || die "download $1: answered $got"
  [[ -s "$2" ]] || die "empty result at $1"
}

# fetch_minio LINK FILE HOST:PORT BUCKET: the app answers the result link with a redirect to a
# presigned URL at MinIO's public endpoint, and MinIO itself serves the file (the app never
# streams objects from MinIO).
fetch_minio() {
  local got code to
  got=$(curl -sS --max-time 30 -o /dev/null -w '%{http_code} %{redirect_url}' "$1") || die "result link $1"
  code=${got%% *} to=${got#* }
  [[ "$code" == 30[1278] ]] || die "result link $1 answered $got, not a redirect to MinIO"
  [[ "$to" == "http://$3/$4/"* ]] || die "result link $1 redirects to $to, not to MinIO at $3 (bucket $4)"
  curl -sSf --max-time 60 -D "$2.headers" -o "$2" "$to" || die "download from MinIO: $to"
  grep -qi '^server: *minio' "$2.headers" || die "$to was not served by MinIO: $(tr -d '\r' <"$2.headers" | head -5)"
  [[ -s "$2" ]] || die "empty result at $to"
}

# ours BASE PUBLIC_URL: the site at BASE is the app started here, not another program on that
# port: its pages name PUBLIC_URL (a port chosen at run time) as their canonical address.
# The page is read whole first: `curl | grep -q` fails under pipefail when grep, having found
# it, stops reading before curl has written the rest (curl: (23) Failed writing body).
ours() {
  local page
  page=$(curl -sSf --max-time 30 "$1/tts") || die "$1/tts did not answer"
  grep -qF "href=\"$2/tts\"" <<<"$page" ||
    die "$1 does not answer as the app started here (no canonical $2/tts): another program on the port?"
}

# ---------------------------------------------------------------------------------------------
# alone: the image by itself

# Podman runs HEALTHCHECKs from systemd timers, and there is no systemd here: this loop is the
# engine's scheduler, running every container's check every 3 s.
health_ticker() {
  while sleep 3; do
    for c in $(podman ps -q); do timeout -k 5 30 podman healthcheck run "$c" >/dev/null 2>&1 || true; done
  done
}
start_ticker() { [[ -n "$ticker_pid" ]] || { health_ticker & ticker_pid=$!; }; }

# wait_healthy CONTAINER waits for the image's own health check to pass.
wait_healthy() {
  local state
  for ((i = 0; i < 90; i++)); do
    state=$(podman inspect --format '{{.State.Health.Status}}' "$1" 2>/dev/null || true)
    [[ "$state" == healthy ]] && return
    sleep 2
  done
  podman logs --tail 30 "$1" >&2 || true
  die "$1 is not healthy ($state)"
}

phase_alone() {
  local alone_port alone_base
  alone_port=$(free_port)
  alone_base=http://127.0.0.1:$alone_port
  local models=${WHISPER_TEST_MODELS:-$root/../shared/testdata/whisper} work="$cache/alone"
  [[ -f "$models/for-tests-ggml-tiny.en.bin" ]] || die "no whisper test model in $models"
  rm -rf "$work" && mkdir -p "$work"
  podman rm -f -i parla-alone parla-unready >/dev/null 2>>"$cache/podman-run.log"
  podman volume rm -f parla-alone-data >/dev/null 2>&1 || true
  start_ticker
  local run=(podman run -d --name parla-alone -p "127.0.0.1:$alone_port:8080" -v parla-alone-data:/data
    -v "$models:/models:ro" -e PUBLIC_URL="http://localhost:$alone_port" -e STT_ENGINE=whisper
    -e WHISPER_MODEL=/models/for-tests-ggml-tiny.en.bin -e WHISPER_VAD_MODEL=/models/for-tests-silero-v6.2.0-ggml.bin
    -e ALLOW_PRIVATE_URLS=1 "$img_app")
  # (podman says it cannot reach systemd for the health checks: health_ticker runs them.)
  "${run[@]}" >/dev/null 2>>"$cache/podman-run.log" ||
    { tail -3 "$cache/podman-run.log" >&2; die "parla-alone did not start on host port $alone_port (taken?)"; }
  wait_healthy parla-alone
  ours "$alone_base" "http://localhost:$alone_port"
  [[ "$(podman exec parla-alone id -u)" == 10001 ]] || die "the app runs as uid $(podman exec parla-alone id -u), want 10001"

  local tts sst vtt
  tts=$(pay_and_wait "$alone_base" tts "$(tts_order "$speech")")
  fetch "$tts" "$work/speech.mp3"
  say "alone: text-to-speech delivered ($(stat -c %s "$work/speech.mp3") bytes)"
  local upload path
  upload=$(curl -sS --max-time 120 -F "file=@$work/speech.mp3;type=audio/mpeg" "$alone_base/services/sst/uploadaudio")
  path=$(jq -r '.file.path // empty' <<<"$upload")
  [[ -n "$path" ]] || die "upload: $upload"
  sst=$(pay_and_wait "$alone_base" sst "$(jq -nc --arg p "$path" --arg e "$email" '{order: {filePath: $p,
    fileName: "speech.mp3", response_format: "json", email: $e, emailVerify: $e, locale: "en"}}')")
  # The test model has placeholder weights: it runs the whole inference path but says little or
  # nothing, so the transcript is checked for its form, not its words.
  fetch "$sst" "$work/sst.json"
  jq -e 'has("text")' "$work/sst.json" >/dev/null || die "audio-to-text: $(head -c 300 "$work/sst.json")"
  say "alone: audio-to-text delivered by whisper"
  # The video link: the app's own download of the speech, as the container sees it.
  local link="http://127.0.0.1:8080/${tts#*://*/}"
  vtt=$(pay_and_wait "$alone_base" vtt "$(jq -nc --arg l "$link" --arg e "$email" '{order: {selectedFile: $l,
    outputFormat: "json", email: $e, emailVerify: $e, locale: "en", language: ""}}')")
  fetch "$vtt" "$work/vtt.json"
  jq -e 'has("text")' "$work/vtt.json" >/dev/null || die "video-to-text: $(head -c 300 "$work/vtt.json")"
  say "alone: video-to-text delivered by whisper"

  podman restart parla-alone >/dev/null 2>>"$cache/podman-run.log"
  wait_healthy parla-alone
  # Each of the three results byte for byte as delivered before the restart.
  fetch "$tts" "$work/again-speech.mp3"
  cmp -s "$work/speech.mp3" "$work/again-speech.mp3" || die "the text-to-speech result changed across a restart"
  fetch "$sst" "$work/again-sst.json"
  cmp -s "$work/sst.json" "$work/again-sst.json" || die "the audio-to-text result changed across a restart"
  fetch "$vtt" "$work/again-vtt.json"
  cmp -s "$work/vtt.json" "$work/again-vtt.json" || die "the video-to-text result changed across a restart"
  say "alone: all three results byte-identical across a restart"

  # Unready for a named reason: a data directory with less free space than asked for.
  podman run -d --name parla-unready -e READY_MIN_FREE_BYTES=1000000000000000 "$img_app" >/dev/null 2>>"$cache/podman-run.log"
  local why=
  for ((i = 0; i < 30; i++)); do
    why=$(podman exec parla-unready /usr/local/bin/parla healthcheck 2>&1) && die "parla-unready is ready"
    grep -q disk <<<"$why" && break
    sleep 1
  done
  grep -q disk <<<"$why" || die "/readyz did not name the disk: $why"
  say "alone: /readyz fails naming it: $(tr -s ' \n' ' ' <<<"$why")"
  podman rm -f parla-unready >/dev/null 2>>"$cache/podman-run.log"

  # A host folder owned by root at /data: the container says which uid to chown it to.
  mkdir -p "$work/rootdata" && chmod 755 "$work/rootdata"
  local out
  out=$(podman run --rm -v "$work/rootdata:/data" "$img_app" 2>&1) && die "a root-owned /data was accepted"
  out=$(grep '^parla:' <<<"$out" || true)
  grep -q 'chown -R 10001' <<<"$out" || die "root-owned /data: $out"
  say "alone: a root-owned /data says: $(sed -n 2p <<<"$out")"
  podman rm -f parla-alone >/dev/null 2>>"$cache/podman-run.log"
  podman volume rm -f parla-alone-data >/dev/null
}

# ---------------------------------------------------------------------------------------------
# compose and scaled: compose.yaml with Docker Compose v2 on podman's Docker-compatible API

sock=/run/parla-deploy/podman.sock
export DOCKER_HOST=unix://$sock

start_service() {
  [[ -n "$service_pid" ]] && return
  mkdir -p "$(dirname "$sock")" && rm -f "$sock"
  podman system service --time=0 "unix://$sock" >"$cache/podman-service.log" 2>&1 &
  service_pid=$!
  for ((i = 0; i < 50; i++)); do [[ -S "$sock" ]] && return; sleep 0.2; done
  die "podman system service did not start"
}

# The secrets an operator puts in .env, and the published ports (configuration for an
# operator; here ports free at run time, six distinct ones).
app_port= caddy_port= caddy_tls_port= minio_port= minio_console_port= mailpit_port=
compose_env() {
  local taken=" " p v
  for v in app_port caddy_port caddy_tls_port minio_port minio_console_port mailpit_port; do
    p=$(free_port) || die "no free port"
    while [[ "$taken" == *" $p "* ]]; do p=$(free_port) || die "no free port"; done
    taken+="$p "
    printf -v "$v" '%s' "$p"
  done
  cat >"$cache/ci.env" <<EOF
MINIO_ROOT_PASSWORD=ci-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
POSTGRES_PASSWORD=ci-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
GRAFANA_ADMIN_PASSWORD=ci-unused
APP_PORT=$app_port
PUBLIC_URL=http://localhost:$app_port
CADDY_HTTP_PORT=$caddy_port
CADDY_HTTPS_PORT=$caddy_tls_port
SCALED_PUBLIC_URL=http://localhost:$caddy_port
MINIO_PORT=$minio_port
MINIO_CONSOLE_PORT=$minio_console_port
MINIO_PUBLIC_ENDPOINT=localhost:$minio_port
MAILPIT_PORT=$mailpit_port
${compose_extra_env:-}
EOF
  say "ports: app $app_port, caddy $caddy_port/$caddy_tls_port, minio $minio_port/$minio_console_port, mailpit $mailpit_port"
}

# dc runs Docker Compose on the CI project, within a time limit (exec 60 s, up 10 minutes).
dc() {
  local limit=120 rc=0
  case " $* " in
    *" up "*) limit=600 ;;
    *" exec "*) limit=60 ;;
  esac
  timeout -k 10 "$limit" docker-compose -p parla-ci --env-file "$cache/ci.env" "$@" || rc=$?
  ((rc != 124 && rc != 137)) || echo "deploy: docker-compose gave up after $limit s: $*" >&2
  return "$rc"
}

# wait_ready URL waits for /readyz to answer 200 there.
wait_ready() {
  for ((i = 0; i < 120; i++)); do
    curl -sf --max-time 3 -o /dev/null "$1/readyz" && return
    sleep 2
  done
  dc ps >&2 || true
  dc logs --tail 20 >&2 || true
  die "$1/readyz never answered 200"
}

compose_up() {
  start_ticker
  start_service
  compose_env
  dc --profile scaled --profile monitoring --profile voices down -v --remove-orphans >/dev/null 2>&1 || true
  dc config -q || die "docker-compose config"
  dc "$@" up -d --no-build >"$cache/compose-up.log" 2>&1 ||
    { tail -30 "$cache/compose-up.log" >&2; die "compose up $* (a published port taken? app $app_port, caddy $caddy_port/$caddy_tls_port, minio $minio_port/$minio_console_port, mailpit $mailpit_port)"; }
}

# no_public_side_ports: with the defaults, every side service is on 127.0.0.1 only.
no_public_side_ports() {
  local line
  while read -r line; do
    case "$line" in
      *-app-*|*-caddy-*) ;;
      *0.0.0.0:*|*'[::]:'*) die "published on every interface: $line" ;;
    esac
  done < <(podman ps --filter label=com.docker.compose.project=parla-ci --format '{{.Names}} {{.Ports}}')
}

phase_compose() {
  compose_up
  local base=http://127.0.0.1:$app_port
  wait_ready "$base"
  ours "$base" "http://localhost:$app_port"
  no_public_side_ports
  local link
  link=$(pay_and_wait "$base" tts "$(tts_order "$speech")")
  fetch_minio "$link" "$cache/compose.mp3" "localhost:$minio_port" parla
  say "compose: text-to-speech delivered from MinIO ($(stat -c %s "$cache/compose.mp3") bytes, a redirect to localhost:$minio_port)"
  dc down -v >/dev/null 2>&1
}

# kokoro_stand_in builds the image the voices profile runs here in place of Kokoro-FastAPI's
# (not pullable here): docker/kokoro-standin, a Go program of the standard library only that
# answers its protocol, with espeak-ng and ffmpeg from Debian.
kokoro_stand_in() {
  local ctx="$cache/ctx-kokoro"
  rm -rf "$ctx" && mkdir -p "$ctx"
  (cd docker/kokoro-standin && CGO_ENABLED=0 go build -trimpath -o "$ctx/kokoro-standin" .) || die "building docker/kokoro-standin"
  stand_in "$img_kokoro" "$ctx" "FROM $img_debian
RUN apt-get update && apt-get install -y --no-install-recommends espeak-ng ffmpeg curl && rm -rf /var/lib/apt/lists/*
COPY kokoro-standin /usr/local/bin/kokoro-standin
EXPOSE 8880
ENTRYPOINT [\"/usr/local/bin/kokoro-standin\"]
# kokoro-standin $(cat docker/kokoro-standin/go.mod docker/kokoro-standin/*.go | sha256sum | cut -c1-16)"
  rm -rf "$ctx"
}

# kokoro_calls prints the stand-in's log lines of the speech it made ("voice=… language=…").
kokoro_calls() { dc logs --no-color --no-log-prefix kokoro 2>/dev/null | grep -F 'kokoro-standin: speech ' || true; }

# voices_order LANGUAGE VOICE TEXT FILE: a paid order of TEXT in LANGUAGE (empty: detected,
# paragraph by paragraph), delivered from MinIO into FILE; prints the stand-in's speech log
# lines it caused. (Run in $(…), where set -e does not hold: each failure exits by itself.)
voices_order() {
  local before link
  before=$(kokoro_calls | wc -l)
  link=$(pay_and_wait "http://127.0.0.1:$app_port" tts "$(tts_order "$3" | jq -c --arg l "$1" --arg v "$2" \
    'if $l == "" then del(.order.language) else .order.language = $l end | .order.voice = $v')") || exit 1
  fetch_minio "$link" "$4" "localhost:$minio_port" parla || exit 1
  kokoro_calls | tail -n +"$((before + 1))"
}

phase_voices() {
  kokoro_stand_in
  local compose_extra_env="KOKORO_IMAGE=$img_kokoro
TTS_ENGINE=openai,espeak
OPENAI_TTS_BASE_URL=http://kokoro:8880/v1
OPENAI_TTS_MODEL=kokoro
OPENAI_TTS_API_KEY=none"
  compose_up --profile voices
  local base=http://127.0.0.1:$app_port
  wait_ready "$base"
  ours "$base" "http://localhost:$app_port"
  local calls
  calls=$(voices_order en alloy "$speech" "$cache/voices-en.mp3")
  grep -q 'voice=af_alloy language=en-us ' <<<"$calls" || die "the English order was not read by Kokoro's af_alloy: ${calls:-no call to the speech server}"
  say "voices: English delivered, read through the speech server by af_alloy ($(stat -c %s "$cache/voices-en.mp3") bytes)"
  calls=$(voices_order es echo "Hola. Esta es la prueba de despliegue del servicio de voz, con una frase corta en español." "$cache/voices-es.mp3")
  grep -q 'voice=em_alex language=es ' <<<"$calls" || die "the Spanish order was not read by Kokoro's Spanish em_alex: ${calls:-no call to the speech server}"
  say "voices: Spanish delivered, read through the speech server by em_alex ($(stat -c %s "$cache/voices-es.mp3") bytes)"
  calls=$(voices_order tr alloy "Merhaba. Bu, konuşma hizmetinin dağıtım denetimidir ve kısa bir Türkçe cümle okur." "$cache/voices-tr.mp3")
  [[ -z "$calls" ]] || die "the Turkish order went to the speech server, which does not speak Turkish: $calls"
  say "voices: Turkish delivered, read by espeak-ng, no call to the speech server ($(stat -c %s "$cache/voices-tr.mp3") bytes)"
  # Issue 31's "done when", deployed: one text of an English, a Spanish and a Turkish paragraph,
  # its languages detected, is one file; the first two read through the speech server, and the
  # Turkish by espeak-ng in it too (the file outlasts the server's parts by more than 2 s).
  local mixed secs served
  mixed=$'The weather is lovely today, and we are going for a long walk by the river.\nMañana vamos a visitar a nuestros abuelos en el pueblo, porque hace mucho que no los vemos.\nBugün hava çok güzel, öğleden sonra parkta uzun bir yürüyüş yapacağız.\n'
  calls=$(voices_order "" nova "$mixed" "$cache/voices-mixed.mp3")
  [[ "$(grep -o 'voice=[a-z_]* language=[a-z-]*' <<<"$calls" | paste -sd,)" == "voice=af_nova language=en-us,voice=ef_dora language=es" ]] ||
    die "the three-language order's calls to the speech server, want af_nova's English then ef_dora's Spanish: ${calls:-none}"
  served=$(grep -o 'seconds=[0-9.]*' <<<"$calls" | cut -d= -f2 | awk '{ s += $1 } END { print s }')
  secs=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$cache/voices-mixed.mp3") || die "ffprobe $cache/voices-mixed.mp3"
  awk -v f="$secs" -v s="$served" 'BEGIN { exit !(f > s + 2) }' || die "the three-language file lasts $secs s, the speech server's parts $served s: no Turkish part in it"
  say "voices: English, Spanish and Turkish in one order: one file of $secs s, $served s of it from the speech server (af_nova, ef_dora), the rest espeak-ng's Turkish"
  dc --profile voices down -v >/dev/null 2>&1
}

# pg SQL runs a query in the scaled profile's Postgres (within 60 s, as every dc exec).
pg() { dc exec -T postgres psql -U parla -d parla -Atc "$1"; }

# stored_count ORDER counts the engine's finished productions of ORDER ("result stored", logged
# once per production by api/orders/fulfil.go) in the logs of every replica, the killed one
# included.
stored_count() {
  local c n=0 k
  for c in $(podman ps -a -q --filter label=com.docker.compose.project=parla-ci --filter label=com.docker.compose.service=node); do
    k=$(podman logs "$c" 2>&1 | grep -F '"msg":"result stored"' | grep -cF "\"order\":\"$1\"" || true)
    n=$((n + k))
  done
  echo "$n"
}

phase_scaled() {
  compose_up --profile scaled
  local base=http://127.0.0.1:$caddy_port
  wait_ready "$base"
  ours "$base" "http://localhost:$caddy_port"
  for ((i = 0; i < 60; i++)); do
    [[ "$(podman ps --filter label=com.docker.compose.service=node --filter health=healthy -q | wc -l)" == 3 ]] && break
    sleep 2
  done
  [[ "$(podman ps --filter label=com.docker.compose.service=node --filter health=healthy -q | wc -l)" == 3 ]] ||
    die "want 3 healthy replicas: $(dc ps node)"
  no_public_side_ports
  local link
  link=$(pay_and_wait "$base" tts "$(tts_order "$speech")")
  fetch_minio "$link" "$cache/scaled.mp3" "localhost:$minio_port" parla-scaled
  say "scaled: text-to-speech ordered through Caddy, delivered from MinIO"

  # A long order, its replica killed a second into the job: another replica takes it over.
  # 95,000 characters, so that the job outlasts the kill: at 50,000 (about 5 s of work) the
  # replica once finished it between the check that it was processing and the kill, on a
  # machine loaded by other work (its fulfil jobs: 0:completed@1 by the victim alone).
  local long co sid victim= id c
  long=$(printf 'The quick brown fox jumps over the lazy dog, and the deploy check goes on. %.0s' $(seq 1250))
  co=$(post "$base" /payment/tts/create-checkout-session "$(tts_order "$long" | jq -c '.order.email="killed@example.com" | .order.emailVerify="killed@example.com"')")
  sid=$(jq -r '.sessionId // empty' <<<"$co")
  [[ -n "$sid" ]] || die "long checkout: $co"
  curl -sS -o /dev/null --max-time 30 -X POST "$base/checkout/test/$sid/pay" || die "long order: test payment"
  for ((i = 0; i < 300; i++)); do
    id=$(pg "SELECT attempted_by[array_length(attempted_by, 1)] FROM river_job WHERE kind = 'fulfil' AND state = 'running' AND attempted_by IS NOT NULL LIMIT 1")
    # NODE_ID is the host name (the container's short id) and a suffix.
    for c in $(dc ps -q node); do [[ -n "$id" && "$id" == "${c:0:12}"* ]] && victim=$c; done
    [[ -n "$victim" ]] && break
    sleep 0.2
  done
  [[ -n "$victim" ]] || die "the long order never ran on a replica (attempted_by: $id)"
  sleep 1
  [[ "$(pg "SELECT status FROM orders WHERE session_id = '$sid'")" == processing ]] || die "the long order is not processing when its replica is to die"
  podman kill "$victim" >/dev/null || die "podman kill $victim"
  say "scaled: killed replica ${victim:0:12} a second into the long order"
  local t0=$SECONDS answer=
  for ((i = 0; i < 150; i++)); do
    answer=$(post "$base" /services/tts "{\"sessionId\":\"$sid\"}")
    [[ -n "$(jq -r '.data.data // empty' <<<"$answer")" ]] && break
    sleep 2
  done
  link=$(jq -r '.data.data // empty' <<<"$answer")
  [[ -n "$link" ]] || die "the killed replica's order was not delivered: $answer"
  fetch_minio "$link" "$cache/rescued.mp3" "localhost:$minio_port" parla-scaled
  say "scaled: the killed replica's order delivered $((SECONDS - t0)) s after the kill"
  # Once: done, one letter, and one production. The order ran twice: on the killed replica,
  # then on the replica that took it over. A takeover never hands the dead node's River row
  # to another node (a resumed loser's outcome would land on the winner's job): it inserts
  # the job again under the next takeover and completes the old row (api/orders/jobs,
  # takeover.go). So: two fulfil rows, both completed, the first run by the killed replica,
  # the second (takeover 1) by the node that took it over, and the order's runs counted 2.
  local oid jobs by runs stored
  oid=$(pg "SELECT id FROM orders WHERE session_id = '$sid' AND status = 'done'")
  [[ -n "$oid" ]] || die "the long order is not done"
  jobs=$(pg "SELECT string_agg(COALESCE(args->>'takeover', '0') || ':' || state || '@' || attempt || ':' || array_to_string(attempted_by, ' '), ', ' ORDER BY id) FROM river_job WHERE kind = 'fulfil' AND args->>'order_id' = '$oid'")
  [[ "$jobs" =~ ^0:completed@[0-9]+:([^,]+),\ 1:completed@[0-9]+:([^,]+)$ ]] ||
    die "the long order's fulfil jobs are $jobs, want the killed replica's completed and one takeover completed"
  by="${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
  [[ "${BASH_REMATCH[1]}" == "${victim:0:12}"* ]] || die "the long order's first run was not on the killed replica ${victim:0:12} (jobs: $jobs)"
  runs=$(pg "SELECT runs FROM orders WHERE id = '$oid'")
  [[ "$runs" == 2 ]] || die "the long order counted $runs runs, want 2: the killed replica's and the takeover"
  stored=$(stored_count "$oid")
  [[ "$stored" == 1 ]] || die "the engine finished the long order $stored times in the replicas' logs, want 1"
  local mails=0
  for ((i = 0; i < 30; i++)); do
    mails=$(curl -sS --max-time 10 "http://127.0.0.1:$mailpit_port/api/v1/search?query=to:killed@example.com" | jq -r '.messages_count // .total // 0') || mails=0
    [[ "$mails" -ge 1 ]] && break
    sleep 1
  done
  [[ "$mails" == 1 ]] || die "$mails delivery letters for the killed replica's order, want 1"
  say "scaled: delivered once (one letter; run by the killed replica, then taken over by ${by##* }; one production in the logs)"
  dc --profile scaled down -v >/dev/null 2>&1
}

# ---------------------------------------------------------------------------------------------

run_phase() {
  local start=$SECONDS
  say "== $1"
  "phase_$1"
  say "== $1 took $((SECONDS - start)) s"
  echo "$1 $((SECONDS - start))" >>"$timings"
}

cleanup() {
  [[ -n "$ticker_pid" ]] && kill "$ticker_pid" 2>/dev/null
  [[ -n "${service_pid:-}" ]] && kill "$service_pid" 2>/dev/null
  return 0
}
trap cleanup EXIT

phases=("$@")
((${#phases[@]})) && [[ "${phases[0]}" != all ]] || phases=(host bases image notags alone tools sides compose voices scaled)
# DEPLOY_TIMINGS: where the phases' times go (.ci/run's background tools write elsewhere).
timings=${DEPLOY_TIMINGS:-$cache/timings}
: >"$timings"
total=$SECONDS
for p in "${phases[@]}"; do run_phase "$p"; done
say "all of ${phases[*]} passed in $((SECONDS - total)) s"
