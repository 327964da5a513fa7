// Package server serves Subsecond's web app and JSON API over a store of
// profiles and an analysis engine, both reached through small interfaces
// declared here (Store, Engine) and wired together by cmd/subsecond.
//
// Every view is a link: the range, filters, heatmap shape and flame-graph
// state live in the URL query, with the parameter names of docs/contracts.md
// (the CLI's flag names). Times in URLs are seconds from the profile's T0;
// ranges are half-open [start, end).
//
//	srv := server.New(server.Config{Store: st, Engine: eng, Night: night, MaxUpload: 2 << 30})
//	hs := &http.Server{Addr: ":8080", Handler: srv.Handler()}
//
// # Pages
//
//	GET /                     profiles and the upload form
//	GET /p/{id}               metadata, offset heatmap, cores map, hot spots
//	GET /p/{id}/flame         flame graph of start..end with filters
//	GET /p/{id}/diff          differential flame graph from start2..end2 (of profile base) to start..end
//	GET /p/{id}/stacks        stack chart of start..end (lanes per CPU or thread) above its flame graph
//	GET /hosts                hosts and the span of their captures
//	GET /hosts/{host}         a host's night (its latest session, or session=N): cores × time map, hot spots, markers, comm shares
//	GET /hosts/{host}/flame   flame graph of the host's wall-clock range from..to across its captures
//	GET /hosts/{host}/diff    differential flame graph from the host's from2..to2 to from..to
//	GET /hosts/{host}/stacks  stack chart of the host's from..to above its flame graph
//	GET /hosts/{host}/explain what precedes the host's markers (match, before, controls, seed, session), ranked by q
//	GET /hosts/{host}/explain/diff  differential flame graph: the windows before the markers against the control windows
//	GET /fleet                the fleet: hosts × time grouped by a label (group, label), a search (function, comm, comm_regex, stack), the contrasts
//	GET /static/*             embedded front-end assets
//
// # JSON API
//
//	POST   /api/profiles?name=N          upload (raw body or multipart field "file"); label=k=v (repeated) and boot=T set on its host
//	GET    /api/profiles                 {"profiles": [...]}
//	GET    /api/profiles/{id}            the profile
//	PATCH  /api/profiles/{id}            {"name": "…"}: rename; the profile
//	DELETE /api/profiles/{id}            204
//	GET    /api/profiles/{id}/heatmap    offset heatmap: rows, col, filters
//	GET    /api/profiles/{id}/cpus       cores map: bucket, filters
//	GET    /api/profiles/{id}/hotspots   {"hotspots": [...], "note"}: measure=busy|system, threshold, min, bucket, limit, cells, filters (docs/hotspots.md)
//	GET    /api/profiles/{id}/flamegraph start, end, filters, format=json|folded|svg|pprof|functions (with start2, end2 or base: as diff)
//	GET    /api/profiles/{id}/diff       start2, end2 (base), base (its profile), start, end, filters, format
//	GET    /api/profiles/{id}/samples    stack chart: start, end, filters, max_samples (default 200000)
//
// # Hosts (a host's captures as one wall-clock night)
//
//	GET    /api/hosts                    {"hosts": [...]}: captures, samples, span of each host
//	GET    /api/hosts/{host}/captures    {"captures": [...]}: the host's captures placed on its night, in time order, each with its session
//	GET    /api/hosts/{host}/sessions    {"sessions": [...]}: recording sessions (pauses ≤ 30 min), each with its span, captures, samples
//	GET    /api/hosts/{host}/timeline    cores × time grid: from, to (RFC 3339 or Unix s; default: session's span), session (default: the latest), bucket (≥ 1 s; columns × CPUs ≤ max cells)
//	GET    /api/hosts/{host}/hotspots    episodes across the night, with links: measure=busy|system, threshold, min (≥ 1 s), limit, near
//	GET    /api/hosts/{host}/comms       comm's share and the comms that jump: comm, from, to, bucket, limit
//	GET    /api/hosts/{host}/markers     {"markers": [...]}: from, to; each with its "10 s before" window and url
//	POST   /api/hosts/{host}/markers     JSON {"markers": [{"time", "text"}]} or a log as text with ?match=REGEX
//	GET    /api/hosts/{host}/series      one kind of series (name=cpu.sys…) on the cores map's columns: from, to, bucket, session
//	GET    /api/hosts/{host}/moves       what moves with a series (name, series_label, series_cpu) or a command (comm, frame): explain.Movement
//	POST   /api/hosts/{host}/series      JSON {"series": [{"name", "cpu", "label", "points": [{"t", "v"}]}]}, as record sends them
//	GET    /api/hosts/{host}/flamegraph  the range from, to across the host's captures: filters, format (with from2, to2: as diff); "unrecorded_ns"
//	GET    /api/hosts/{host}/diff        from2, to2 (base), from, to, filters, format, each range across the host's captures
//	GET    /api/hosts/{host}/explain     match, before, controls, seed, session: the findings (explain.Report)
//	GET    /api/hosts/{host}/explain/diff  the same, and filters, format: before-windows against control windows
//	GET    /api/hosts/{host}/samples     stack chart of the host's from, to: filters, max_samples
//	POST   /api/hosts/{host}/labels      JSON {"set": ["key=value"], "remove": ["key"]}: the host's labels after
//
// # The fleet (every host, from the count index written at import)
//
//	GET    /api/fleet                    hosts × time (web.FleetMap): from, to (default: the data's last 24 h), label, group, buckets, a search
//	GET    /api/fleet/search             hosts ranked by a search's share (web.FleetSearch): function, comm, comm_regex or stack; from, to, label, buckets
//	GET    /api/fleet/groups             names whose share differs between the values of label key group (web.FleetGroups): permutations, seed, limit
//	GET    /api/fleet/uptime             names whose share follows uptime (web.FleetUptime): permutations, seed, limit
//
// # Health (no token, no database access for /healthz)
//
//	GET    /healthz                      200 {"status": "ok"} while the process serves
//	GET    /readyz                       200 {"status": "ready"} while the database answers with this build's schema; else 503 and the reason
//
// Filters are cpu, pid, tid, comm, comm_regex, event, function, only, idle.
// Errors are {"error": "..."} with status 400 (naming the bad parameter),
// 401 (token), 403 (read-only or cross-origin), 404, 413 (over the upload
// limit; nothing is stored), 415 (not perf script text, or an unknown
// Content-Encoding), 408 (an upload too slow or too long), 421 (a Host the
// server does not answer to), 429 (too many uploads from one client), 503
// with Retry-After (too many heavy views at once, or the database down or
// restarting: nothing was stored) or 500 (details only in
// the server's log).
//
// # Limits
//
// Every view's cost is bounded before it starts: a heatmap or cores map
// past Config.MaxCells cells is refused with 400 naming col or bucket and
// a value that fits, and a flame graph past Config.MaxNodes nodes with 413.
// A host's range across captures holding more than Config.MaxRangeSamples
// samples, as the captures' per-second summaries count them before any is
// loaded, is refused with 413 naming from, to and cpu.
// At most Config.MaxHeavy views that read a whole capture are computed at
// once; the others wait while their clients do. An upload gets its long
// deadline (Config.UploadTimeout) only once authorised, must keep
// Config.MinUploadRate (408 otherwise), and a client address may run
// Config.UploadsPerClient at once (429 beyond).
//
// From a host under investigation:
//
//	perf script | gzip | curl --data-binary @- -H 'Content-Encoding: gzip' \
//	    'http://HOST:8080/api/profiles?name=web-1'
//	curl -H 'Accept: text/plain' --data-binary @out.perf 'http://HOST:8080/api/profiles'   # the link alone
//	curl -H "Authorization: Bearer $TOKEN" -X DELETE http://HOST:8080/api/profiles/ID
//	curl -o range.svg 'http://HOST:8080/api/profiles/ID/flamegraph?start=12.5&end=14&cpu=39&format=svg'
//
// # Security
//
// Pages carry a Content-Security-Policy without inline script; data for the
// script travels as a JSON script element. State-changing requests that a
// browser sends cross-origin are refused (http.CrossOriginProtection).
// Uploads and deletes can require a bearer token, or be refused altogether
// in read-only mode. Requests naming a Host the server is not meant to be
// reached by get 421 (Config.AllowedHosts), so that a page on another site
// cannot reach the server through DNS rebinding. X-Forwarded-* headers are
// believed only from Config.TrustedProxies.
//
// # Request log
//
// Each request gets one structured line in Config.Logger when it ends:
// method, route pattern, status, bytes, duration, profile and client.
package server
