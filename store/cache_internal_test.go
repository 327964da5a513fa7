package store

import (
	"bytes"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/parser"
	"github.com/subsecond/subsecond/query"
	sampledata "github.com/subsecond/subsecond/sample-data"
)

// TestDerivedAllowance holds derivedAllowance to what a capture's first
// flame graph really derives from it (the filter's index and the flame
// graph's), within a quarter, on a deep-stacked real capture and on a wide
// synthetic one of many samples and few stacks; and checks that the cache
// counts what is derived beyond it from its next use on.
func TestDerivedAllowance(t *testing.T) {
	real, err := synth.Real()
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	cfg := sampledata.DefaultConfig()
	cfg.CPUs, cfg.Seconds, cfg.IncidentCPU = 16, 30, 3
	if _, err := sampledata.Generate(&text, cfg); err != nil {
		t.Fatal(err)
	}
	wide, err := synth.Parse(text.Bytes(), parser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*subsecond.Capture{"real": real, "wide": wide} {
		allow := derivedAllowance(c)
		if c.DerivedBytes() != 0 {
			t.Fatalf("%s: %d bytes derived before any view", name, c.DerivedBytes())
		}
		cc := newCaptureCache(1 << 40)
		cc.Put("t", c)
		if got, want := cc.Bytes(), tablesSize(c)+allow; got != want {
			t.Errorf("%s: cache holds %d bytes before any view; want the tables and the allowance, %d", name, got, want)
		}
		all := subsecond.Range{Start: c.Profile.Start, End: c.Profile.End + 1}
		if _, err := flame.Build(c, query.Filter{}, all); err != nil {
			t.Fatal(err)
		}
		if d := c.DerivedBytes(); float64(allow) < 0.75*float64(d) || float64(allow) > 1.25*float64(d) {
			t.Errorf("%s (%d samples, %d frames, %d stack nodes): derivedAllowance = %d; the first flame graph derives %d bytes",
				name, c.Samples.Len(), len(c.Frames), len(c.Nodes), allow, d)
		}
		for _, only := range []string{"kernel", "user"} {
			if _, err := flame.Build(c, query.Filter{Only: only}, all); err != nil {
				t.Fatal(err)
			}
		}
		cc.Get(t.Context(), "t", nil)
		if got, want := cc.Bytes(), tablesSize(c)+c.DerivedBytes(); got != want || c.DerivedBytes() <= allow {
			t.Errorf("%s: cache holds %d bytes after three flame graphs; want the tables and the %d bytes derived, %d (allowance %d)",
				name, got, c.DerivedBytes(), want, allow)
		}
	}
}
