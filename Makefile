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

# The lock file's hash, recorded in node_modules once `npm ci` has installed it.
NPM_STAMP := node_modules/.subsecond-lock

.PHONY: test tools chromium node_modules check tidy gotest standalone race fuzz bench browser

test: tools check gotest race fuzz browser

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
	$(GO) test -count=1 ./...

# standalone runs `go test ./...` once more from a copy of the checkout's
# tracked files in a temporary folder, with nothing beside it: a test that
# reads a file outside the repository, or one never committed, fails here.
standalone:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	mkdir "$$tmp/subsecond" && \
	git ls-files -z | xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' sh | \
		tar --null -T - -cf - | tar -xf - -C "$$tmp/subsecond" && \
	echo "go test ./... in $$tmp/subsecond" && \
	cd "$$tmp/subsecond" && $(GO) test -count=1 ./...

# race runs the packages that import and serve concurrently under the race
# detector: two imports beside readers, uploads beside page views.
race:
	$(GO) test -race -count=1 ./store/... ./server/...

# fuzz runs the parser's fuzz target briefly, seeded from the corpus.
fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzScanner -fuzztime=20s ./parser

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
