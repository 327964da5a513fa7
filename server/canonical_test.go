package server

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestClampedRangeIsCanonical checks that a page asked for a range past
// its capture shows the clamped range, carries it in its view data for
// the script to write into the URL, links and preloads with it, and says
// what it changed.
func TestClampedRangeIsCanonical(t *testing.T) {
	e := newEnv(t, Config{})
	p := e.upload(perfText(2, 100, 3), "clamped") // samples from 0.05 s to 3.04 s after T0
	const end = "3.040000001"                     // one nanosecond after the last sample
	for _, path := range []string{
		"/p/" + p.ID + "/flame?start=-5&end=999&cpu=1",
		"/p/" + p.ID + "/stacks?start=-5&end=999&cpu=1",
		"/p/" + p.ID + "?start=-5&end=999&cpu=1",
	} {
		res, b := e.do("GET", path, nil)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d", path, res.StatusCode)
		}
		page := string(b)
		vd := viewDataOf(t, b)
		want := map[string]any{"start": "0", "end": end}
		if got := vd["canonical"]; !reflect.DeepEqual(got, want) {
			t.Errorf("GET %s: view data's canonical = %v; want %v", path, got, want)
		}
		if got := vd["params"].(map[string]any); got["start"] != "0" || got["end"] != end || got["cpu"] != "1" {
			t.Errorf("GET %s: view data's params = %v; want start 0, end %s, cpu 1", path, got, end)
		}
		const note = "start -5 s is before the capture; showing from 0 s; end 999 s is past the end of the capture; showing to 3.04 s."
		if got := elementText(page, `<p class="notice" role="status" data-testid="clamp-notice">`); got != note {
			t.Errorf("GET %s: notice %q; want %q", path, got, note)
		}
		if strings.Contains(page, "start=-5") || strings.Contains(page, "end=999") {
			t.Errorf("GET %s: the page still links with start=-5 or end=999", path)
		}
		if !strings.Contains(page, "0–3.04 s (3.04 s)") {
			t.Errorf("GET %s: the page does not show the range 0–3.04 s (3.04 s)", path)
		}
	}

	// A range within the capture is left as it is, with no notice.
	res, b := e.do("GET", "/p/"+p.ID+"/flame?start=1&end=2", nil)
	if vd := viewDataOf(t, b); res.StatusCode != http.StatusOK || vd["canonical"] != nil || strings.Contains(string(b), "clamp-notice") {
		t.Errorf("flame page of [1, 2) = %d, canonical %v; want 200 and nothing changed", res.StatusCode, vd["canonical"])
	}

	// A diff page clamps its base range too, against the base capture.
	res, b = e.do("GET", "/p/"+p.ID+"/diff?start2=-1&end2=1&start=1&end=99", nil)
	if got, want := viewDataOf(t, b)["canonical"], map[string]any{"start2": "0", "end": end}; res.StatusCode != http.StatusOK || !reflect.DeepEqual(got, want) {
		t.Errorf("diff page = %d, canonical %v; want 200 and %v", res.StatusCode, got, want)
	}
	if got := elementText(string(b), `<p class="notice" role="status" data-testid="clamp-notice">`); !strings.Contains(got, "start2 -1 s is before the base capture; showing from 0 s") {
		t.Errorf("diff page's notice %q; want it to name start2", got)
	}

	// The API answers as it did.
	if res, _ := e.do("GET", "/api/profiles/"+p.ID+"/flamegraph?start=-5&end=999", nil); res.StatusCode != http.StatusOK {
		t.Errorf("flamegraph API with start=-5&end=999 = %d; want 200", res.StatusCode)
	}
}
