# Parla — the two commands a fresh machine needs are `make run` and `make test`.
SHELL := /bin/bash
GO    ?= go
export PATH := $(shell $(GO) env GOPATH)/bin:$(PATH)

.PHONY: run test setup ui build go-test ui-test e2e fuzz bench clean

## run: install what is missing, build the UI and serve on embedded defaults (:8080)
run: setup ui
	$(GO) run .

## test: install what is missing, then every test (Go, UI unit tests, browser end to end, fuzzing)
test: setup ui go-test ui-test e2e fuzz

setup:
	bash .ci/install

ui:
	cd webui && npm run build

build: ui
	$(GO) build -o bin/parla .

go-test:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 20m ./...

ui-test:
	cd webui && npm run check:locales && npm test && npm run size

## e2e: the real server on embedded defaults, driven by Chromium like a visitor
e2e: build
	bash .ci/e2e.sh

## fuzz: every Fuzz* target for FUZZTIME (5 s) each, from its seed corpus in testdata/fuzz
fuzz:
	bash .ci/fuzz.sh

## bench: the performance targets of the issues (see README)
bench:
	$(GO) test -run '^$$' -bench . -benchtime 5x ./providers/espeak/
	$(GO) test -run '^$$' -bench 'TTS|Checkout|Startup' -benchtime 5x ./
	$(GO) test -run '^$$' -bench 'Upload' -benchtime 1x ./
	$(GO) test -run '^$$' -bench . -benchtime 3x ./media/ ./media/links/
	$(GO) test -run '^$$' -bench . -benchtime 1x ./providers/openai/
	bash .ci/loadtest.sh

clean:
	rm -rf bin webui/dist/assets webui/dist/index.html
