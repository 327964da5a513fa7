# The whole test suite: `make test`. CI runs .ci/run, which installs what the
# tests need on a fresh machine and then runs this target.
GO ?= go

.PHONY: test check gotest fuzz bench browser

test: check gotest fuzz browser

# check fails on unformatted Go, vet findings and generated files that drift.
check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool templ generate
	git diff --exit-code -- 'web/*_templ.go'

gotest:
	$(GO) test -count=1 ./...

# fuzz runs the parser's fuzz target briefly, seeded from the corpus.
fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzScanner -fuzztime=20s ./parser

bench:
	./bench/run

# browser type-checks the front end, rebuilds it and fails if the committed
# build in web/static drifts from web/src, then drives Debian's chromium
# against the real server (tests/browser). Needs `npm ci` first.
browser:
	npm run check
	npm run build
	git diff --exit-code -- web/static
	npm test
