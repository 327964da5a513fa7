package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// checkDebugAddr accepts "" (no profiler) or a loopback HOST:PORT: the
// profiler shows the process's memory and can slow it down for as long as
// a client asks, so it is never served to other hosts nor behind the
// app's token.
func checkDebugAddr(addr string) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--debug-addr %s: want a loopback HOST:PORT such as 127.0.0.1:6060", addr)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("--debug-addr %s: the profiler is served on loopback addresses alone (127.0.0.1, ::1 or localhost)", addr)
	}
	return nil
}

// serveDebug serves net/http/pprof's handlers on addr, apart from the app,
// prints where, and returns a function that stops it.
func serveDebug(addr string, out io.Writer) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	fmt.Fprintf(out, "Profiler on http://%s/debug/pprof/\n", ln.Addr())
	return func() { hs.Close() }, nil
}
