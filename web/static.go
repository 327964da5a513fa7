//go:build !browsertest

package web

import "embed"

// static holds the production build of the front end (npm run build).
//
//go:embed static
var static embed.FS

const staticDir = "static"
