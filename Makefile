# The whole test suite: `make test`. It installs what it needs first: the
# front-end tools pinned by package-lock.json (`npm ci`, again whenever the
# lock file changes) and Debian's chromium for the browser tests (with apt
# when run as root; otherwise it stops and prints the command to run). CI
# runs .ci/run, which installs perf, make and PostgreSQL, starts a private
# PostgreSQL for the store's tests (SUBSECOND_TEST_POSTGRES), then runs
# this target and `make standalone`.
GO ?= go
# CHROMIUM is the browser the browser tests drive; never a downloaded one.
CHROMIUM ?= /usr/bin/chromium
export CHROMIUM

# TESTSUM summarises `go test -json`: a line per package with its tests
# passed, failed and skipped, why tests were skipped, the output of failed
# tests, and a closing line "tests: N passed, N failed, N skipped";
# it exits 1 when anything failed. SUMMARY keeps the gotest stage's closing
# line, which `make test` repeats as its last line.
TESTSUM = $(GO) run ./internal/testsum
SUMMARY := .test-summary

# FUZZTIME is how long the fuzz stage runs each fuzz target.
FUZZTIME ?= 5s

# The lock file's hash, recorded in node_modules once `npm ci` has installed it.
NPM_STAMP := node_modules/.subsecond-lock

.PHONY: test tools chromium node_modules check tidy gotest standalone race fuzz bench browser

test: tools check gotest race fuzz browser
	@echo "go test ./... above; its count again:"; cat $(SUMMARY)

tools: chromium node_modules

# chromium makes sure $(CHROMIUM) exists before any test starts.
chromium:
	@if [ ! -x "$(CHROMIUM)" ]; then \
		if [ "$(CHROMIUM)" = /usr/bin/chromium ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "chromium is missing: installing it with apt-get install chromium"; \
			DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium || exit 1; \
		else \
			echo "The browser tests need Debian's chromium at $(CHROMIUM), which is missing. Install it with:" >&2; \
			echo "    sudo apt-get update && sudo apt-get install -y chromium" >&2; \
			echo "or point CHROMIUM at another chromium: make test CHROMIUM=/path/to/chromium" >&2; \
			exit 1; \
		fi; \
	fi

# node_modules runs `npm ci` when node_modules is missing or was installed
# from another package-lock.json.
node_modules:
	@command -v npm >/dev/null || { echo "The front-end checks need Node.js and npm. Install them with:" >&2; \
		echo "    sudo apt-get update && sudo apt-get install -y nodejs npm" >&2; exit 1; }
	@want=$$(sha256sum package-lock.json | cut -d' ' -f1); \
	if [ "$$(cat $(NPM_STAMP) 2>/dev/null)" != "$$want" ]; then \
		echo "npm ci (node_modules is missing or older than package-lock.json)"; \
		npm ci --no-audit --no-fund && echo "$$want" > $(NPM_STAMP); \
	fi

# check fails on unformatted Go, vet findings, a go.mod that `go mod tidy`
# would change and generated files that drift.
check: tidy
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool templ generate
	git diff --exit-code -- 'web/*_templ.go'

# tidy fails, showing the difference, when go.mod or go.sum is not tidy.
tidy:
	@$(GO) mod tidy -diff || { echo "go.mod or go.sum is not tidy: run go mod tidy" >&2; exit 1; }

gotest:
	$(GO) test -json -count=1 ./... 2>&1 | $(TESTSUM) -line $(SUMMARY)

# standalone runs `go test ./...` once more from a copy of the checkout's
# tracked files in a temporary folder, with nothing beside it: a test that
# reads a file outside the repository, or one never committed, fails here.
standalone:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	mkdir "$$tmp/subsecond" && \
	git ls-files -z | xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' sh | \
		tar --null -T - -cf - | tar -xf - -C "$$tmp/subsecond" && \
	echo "go test ./... in $$tmp/subsecond" && \
	cd "$$tmp/subsecond" && $(GO) test -json -count=1 ./... 2>&1 | $(TESTSUM)

# race runs the packages that import and serve concurrently under the race
# detector: two imports beside readers, uploads beside page views.
race:
	$(GO) test -race -json -count=1 ./store/... ./server/... 2>&1 | $(TESTSUM)

# fuzz runs every fuzz target of the repository (each `func Fuzz…` in a
# _test.go file) for FUZZTIME, from its seed corpus, and prints its
# executions. Minimizing an input that finds new coverage stops after 100
# executions, so that the time goes to fuzzing (with go's default of up to
# 60 s per input, executions stopped after a few seconds). A failure
# prints go's whole output and fails the stage. Go 1.26's fuzz coordinator
# can fail a target with a bare "context deadline exceeded" when its own
# -fuzztime deadline races a busy worker (golang/go#75804, fixed in 1.27):
# such a run, which wrote no failing input, is reported as the race, not
# as a failure.
fuzz:
	@for f in $$(git grep -l '^func Fuzz' -- '*_test.go'); do \
		for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$$f"); do \
			out=$$($(GO) test -run='^$$' -fuzz="^$$t\$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=100x "./$$(dirname "$$f")" 2>&1) || \
				if echo "$$out" | grep -q '^    context deadline exceeded$$' && ! echo "$$out" | grep -q 'Failing input written'; then \
					echo "note $$t: go's fuzz coordinator stopped on its own deadline with no failing input (golang/go#75804)"; \
				else echo "$$out"; echo "FAIL $$t (./$$(dirname "$$f"))"; exit 1; fi; \
			echo "ok   $$t (./$$(dirname "$$f")): $$(echo "$$out" | awk '/^fuzz: elapsed/ { t = $$3 + 0; x = $$5; n = $$9 } \
				END { printf "%d executions in %d s (%d/s), %d new inputs", x, t, t ? x / t : x, n }')"; \
		done; \
	done

bench:
	./bench/run

# browser type-checks the front end, rebuilds it and fails if the committed
# build in web/static drifts from web/src, then drives Debian's chromium
# against the real server (tests/browser).
browser: tools
	npm run check
	npm run build
	git diff --exit-code -- web/static
	npm test
