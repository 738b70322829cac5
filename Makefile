# Parla — the two commands a fresh machine needs are `make run` and `make test`.
SHELL := /bin/bash
GO    ?= go
export PATH := $(shell $(GO) env GOPATH)/bin:$(PATH)

.PHONY: lighthouse deploy-check run test test-loaded setup ui build whisper whisper-build models go-test whisper-test ui-test e2e fuzz bench whisper-bench fault-scenario clean

# MODEL: the whisper model `make run` and `make whisper` fetch and use (models/download.sh list).
MODEL ?= base

## run: install what is missing, build the UI, libwhisper (cached) and the binary, fetch the
## whisper and Silero VAD models where the network allows, and serve on embedded defaults (:8080);
## whatever cannot be opened is said in one block at start. MODEL=small picks another model.
run: setup whisper-build models
	WHISPER_MODEL="$${WHISPER_MODEL:-models/ggml-$(MODEL).bin}" ./bin/parla

## test: install what is missing, then every test (Go, whisper.cpp, UI unit tests, browser end to end, fuzzing)
test: setup ui go-test whisper-test ui-test e2e fuzz deploy-check

## test-loaded: LOADED_TARGET (test) with four busy loops beside it, load about 6 on 2 cores as
## a shared CI runner sees it (issue 27): a test whose bounds hold only on an idle machine fails
## here. LOADED_TARGET=go-test for the Go tests alone; LOADED_JOBS=4 loops.
## The loops are another tenant's load, so they run in a session of their own (setsid): with
## the kernel's autogroups (kernel.sched_autogroup_enabled=1, as here) they take their fair
## share of the cores from the whole suite, as another container's processes would, and do
## not compete inside the suite's own group, where a visitor's nice-19 measure yields to the
## suite's nice-0 work by design (media/visitors.go). In the suite's own session they left
## such a measure about 1 % of a core: TestCheckUploadOwnPool and TestDirectLinks/analyze
## (link analyses leave the speech unmeasured when starved, by design) failed that way.
LOADED_TARGET ?= test
LOADED_JOBS   ?= 4
# A backstop against a hang, long enough for the worst case: loops in the suite's own session
# left a visitor's nice-19 measure about 1 % of a core (TestUploadMeasuresAndPricesEveryFormat
# took 159 s, 5 s without them).
LOADED_GO_TIMEOUT ?= 60m
test-loaded:
	pids=(); trap 'kill $${pids[@]} 2>/dev/null' EXIT; \
	for ((i = 0; i < $(LOADED_JOBS); i++)); do setsid bash -c 'while :; do :; done' >/dev/null 2>&1 & pids+=($$!); done; \
	$(MAKE) $(LOADED_TARGET) GO_TEST_TIMEOUT=$(LOADED_GO_TIMEOUT)

setup:
	bash .ci/install

ui:
	cd webui && npm run build

# The whisper tag whenever libwhisper is in the cache (see `make whisper`).
build: ui
	eval "$$(bash .ci/whisper.sh env-if-built)"; $(GO) build -tags "$$WHISPER_TAGS" -o bin/parla .

## whisper: libwhisper built statically from source (cached in the Go cache; WHISPER_SRC=<dir or
## tarball> to choose it), bin/parla with -tags whisper, and the models where the network allows.
## WHISPER_GPU=cuda builds ggml's CUDA backend too (nvcc needed; WHISPER_CUDA_ARCHS, default
## "75;80;86;89;90"): whisper then runs on the first GPU it sees (README: GPU)
whisper: ui models
	exports=$$(bash .ci/whisper.sh env) && eval "$$exports" && $(GO) build -tags "$$WHISPER_TAGS" -o bin/parla .

# whisper-build: bin/parla with whisper when its source can be had (status 3: none here, so the
# binary is built without it and the start says so), as `make whisper` otherwise.
whisper-build: ui
	status=0; exports=$$(bash .ci/whisper.sh env) || status=$$?; \
	if ((status == 3)); then exports=""; elif ((status)); then exit $$status; fi; \
	eval "$$exports"; $(GO) build -tags "$${WHISPER_TAGS:-}" -o bin/parla .

## models: the whisper model MODEL (base) and the Silero VAD model, checked; skipped offline
models:
	bash models/download.sh --if-online $(MODEL) silero-v6.2.0

## whisper-test: the tests that need libwhisper (built first); skipped outside CI without the source
whisper-test:
	bash .ci/whisper.sh test

# A backstop against a hang, not a speed target (make test-loaded raises it).
GO_TEST_TIMEOUT ?= 20m
go-test:
	$(GO) vet ./...
	bash .ci/deadcode.sh
	# The root package's end-to-end tests alone: a visitor's upload is measured at nice 19
	# (media/visitors.go), and media's own nice-0 ffmpeg runs beside it starved it.
	$(GO) test -count=1 -timeout $(GO_TEST_TIMEOUT) $$($(GO) list ./... | grep -vx parla)
	$(GO) test -count=1 -timeout $(GO_TEST_TIMEOUT) .
	# The order book's, its queue's, the API credit's, the test checkout's suites and the money simulation again, on a throwaway Postgres.
	PARLA_TEST_DB=postgres $(GO) test -count=1 -timeout 10m ./api/orders/... ./api/credit/ ./providers/stripe/ ./api/moneysim/

ui-test:
	cd webui && npm run check:locales && npm run check:types && npm test && npm run size

## e2e: the real server on embedded defaults, driven by Chromium like a visitor
e2e: build
	bash .ci/e2e.sh

## deploy-check: the image and compose.yaml built and run as an operator would (.ci/deploy.sh),
## in CI within its time left; elsewhere with DEPLOY_CHECKS=1
deploy-check:
	bash .ci/deploy-check.sh

## fuzz: every Fuzz* target for FUZZTIME (5 s) each, from its seed corpus in testdata/fuzz
fuzz:
	bash .ci/fuzz.sh

## lighthouse: Lighthouse 12.2.3 (mobile) on /, /tts, /sst, /vtt in every language against
## bin/parla on its defaults; fails on a layout shift over 0.02, and with STRICT=1 (a quiet
## machine) on blocking time of 200 ms or more or a score under 90 (issue 32).
lighthouse: build
	bash .ci/lighthouse.sh

## fault-scenario: issue 29's frozen-node scenario at the default timeouts (heartbeat 2 s,
## dead after 10 s): a 25,000-character order, its node frozen 75 s while the other delivers and
## the visitor deletes; again with the other node restarted, and with Postgres restarted. About
## five minutes of wall time, so `make test` skips it (TestFrozenNodeScenario wants
## PARLA_FAULT_SCENARIO=1); the 40 seeded fault schedules (TestFaultSchedules, 20 kinds of
## fault: fault_test.go; PARLA_FAULT_SEED=n[,m…] replays some) stay in go-test.
fault-scenario:
	PARLA_FAULT_SCENARIO=1 $(GO) test -count=1 -timeout 15m -run 'TestFrozenNodeScenario' -v .

## bench: the performance targets of the issues (see README)
bench:
	$(GO) test -run '^$$' -bench 'Speak(1k|50k|50kSpanish|50kJapanese)$$' -benchtime 5x ./providers/espeak/
	$(GO) test -run '^$$' -bench 'Speak50kVsBare' -benchtime 3x ./providers/espeak/
	$(GO) test -run '^$$' -bench 'TTS|Checkout|Startup' -benchtime 5x ./
	$(GO) test -run '^$$' -bench 'Upload' -benchtime 1x ./
	$(GO) test -run '^$$' -bench 'Metrics' -benchtime 200x ./
	$(GO) test -run '^$$' -bench . -benchtime 3x ./media/ ./media/links/
	$(GO) test -run '^$$' -bench . -benchtime 1x ./providers/openai/
	$(GO) test -run '^$$' -bench 'CheckoutOn|TTSOrdersOn|NodeDeath' -benchtime 1x .
	$(GO) test -run '^$$' -bench 'Preview(File|Link|sBesidePaidOrder)$$' -benchtime 1x -timeout 30m .
	$(MAKE) whisper-bench

## whisper-bench: our whisper job next to whisper-cli built from the same source, and the VADs
whisper-bench:
	exports=$$(bash .ci/whisper.sh env --cli) && eval "$$exports" && \
	  $(GO) test -tags "$$WHISPER_TAGS" -run '^$$' -bench 'VersusWhisperCLI|FindSpeech' -benchtime 5x -timeout 60m ./providers/whisper/ && \
	  $(GO) test -tags "$$WHISPER_TAGS" -run '^$$' -bench 'PreviewWhisper' -benchtime 1x -timeout 30m .

clean:
	rm -rf bin webui/dist/assets webui/dist/index.html
