//go:build browsertest

package web

import "embed"

// static holds the browser tests' build of the front end (npm run
// build:test), which adds the hooks the tests read. It is never committed:
// tests/browser/helpers.mjs builds it before `go build -tags browsertest`.
//
//go:embed teststatic
var static embed.FS

const staticDir = "teststatic"
