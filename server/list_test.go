package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
)

// manyEvents returns a capture of one sample of each of n events, distinct
// per seed.
func manyEvents(seed, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "a 1 [000] %d.%06d: 1 e%d_%d: \n\tffff f (k)\n\n", seed+1, i, seed, i)
	}
	return b.String()
}

// TestListPages: the profile list, API and page, comes a page at a time
// (per_page, cursor), each naming the next, and its entries carry an
// event summary instead of every event name, which the profile's own
// answer keeps. Before, every list held every profile with every event:
// 50 captures of 65,535 event names made it 105 MB and 9.2 s.
func TestListPages(t *testing.T) {
	e := newEnv(t, Config{})
	ids := map[string]bool{}
	for i := range 5 {
		ids[e.upload(manyEvents(i, 500), fmt.Sprint("many-", i)).ID] = true
	}

	type page struct {
		Profiles   []subsecond.Profile `json:"profiles"`
		NextCursor string              `json:"next_cursor"`
		Next       string              `json:"next"`
	}
	seen := map[string]bool{}
	next, pages := "/api/profiles?per_page=2", 0
	for ; next != ""; pages++ {
		res, b := e.do("GET", next, nil)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d %s", next, res.StatusCode, b)
		}
		if len(b) > 4000 {
			t.Errorf("GET %s answered %d bytes; want a summary of two profiles' events, not 1,000 names", next, len(b))
		}
		var p page
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		for _, pr := range p.Profiles {
			seen[pr.ID] = true
			if pr.EventCount != 500 || len(pr.Events) != 1 {
				t.Errorf("list entry %s: event_count %d, %d events; want 500 and the top one alone", pr.Name, pr.EventCount, len(pr.Events))
			}
		}
		if want := (pages < 2); (p.Next != "") != want || (p.NextCursor != "") != want {
			t.Errorf("page %d: next %q, next_cursor %q; want them on pages 0 and 1 alone", pages, p.Next, p.NextCursor)
		}
		if p.Next != "" && !strings.Contains(p.Next, "cursor="+p.NextCursor) || !strings.HasPrefix(next, "/api/profiles?") {
			t.Errorf("next %q does not carry next_cursor %q", p.Next, p.NextCursor)
		}
		next = p.Next
	}
	if pages != 3 || len(seen) != 5 {
		t.Errorf("listed %d profiles in %d pages; want 5 in 3", len(seen), pages)
	}

	for id := range ids {
		res, b := e.do("GET", "/api/profiles/"+id, nil)
		var p subsecond.Profile
		if res.StatusCode != http.StatusOK || json.Unmarshal(b, &p) != nil || len(p.Events) != 500 || p.EventCount != 500 {
			t.Errorf("GET /api/profiles/%s = %d, %d events; want all 500", id, res.StatusCode, len(p.Events))
		}
		break
	}

	for _, tc := range []struct{ query, want string }{
		{"per_page=0", "per_page: 0 is outside 1 to 1000"},
		{"per_page=1001", "per_page: 1001 is outside 1 to 1000"},
		{"cursor=nosuchprofileaaaaaaaaaaaaa", `cursor: there is no profile "nosuchprofileaaaaaaaaaaaaa" to list after`},
	} {
		res, b := e.do("GET", "/api/profiles?"+tc.query, nil)
		wantError(t, res, b, http.StatusBadRequest, tc.want)
	}

	// The page links to the next, and the next back to the first.
	_, b := e.do("GET", "/?per_page=3", nil)
	if n := strings.Count(string(b), "<tr data-id="); n != 3 || !strings.Contains(string(b), `rel="next"`) {
		t.Fatalf("/?per_page=3 lists %d profiles, next link %v; want 3 and a link to the next page", n, strings.Contains(string(b), `rel="next"`))
	}
	at := strings.Index(string(b), `href="/?`)
	end := strings.Index(string(b)[at+6:], `"`)
	href := strings.ReplaceAll(string(b)[at+6:at+6+end], "&amp;", "&")
	_, b = e.do("GET", href, nil)
	if n := strings.Count(string(b), "<tr data-id="); n != 2 || strings.Contains(string(b), `rel="next"`) || !strings.Contains(string(b), "First page") {
		t.Errorf("GET %s lists %d profiles; want the last 2, no next link and a link to the first page", href, n)
	}
}
