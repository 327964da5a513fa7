# The whole test suite: `make test`. CI runs .ci/run, which installs what the
# tests need on a fresh machine and then runs this target.
GO ?= go

.PHONY: test check gotest race fuzz bench browser

test: check gotest race fuzz browser

# check fails on unformatted Go, vet findings and generated files that drift.
check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool templ generate
	git diff --exit-code -- 'web/*_templ.go'

gotest:
	$(GO) test -count=1 ./...

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
# against the real server (tests/browser). Needs `npm ci` first.
browser:
	npm run check
	npm run build
	git diff --exit-code -- web/static
	npm test
