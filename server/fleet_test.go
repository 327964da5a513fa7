package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/fleet"
	"github.com/subsecond/subsecond/internal/nightgen"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
	"github.com/subsecond/subsecond/timeline"
	"github.com/subsecond/subsecond/web"
)

// hostileLabel is a label value no page may show raw.
const hostileLabel = `<script>alert("x")</script> ünï 'q'`

// uploadNight posts the captures of a small night of host (2 CPUs, 2
// one-minute captures, kubelet in the kernel on CPU 1 for 20 s of the
// first when burst) with the query v.
func uploadNight(t *testing.T, e *testEnv, host string, burst bool, v url.Values) {
	t.Helper()
	n := &nightgen.Night{Host: host, CPUs: 2, Hz: 49, Start: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC),
		Captures: 2, Length: time.Minute, Unanchored: -1, Seed: 5}
	if burst {
		c0 := n.CaptureStart(0)
		n.Bursts = []nightgen.Burst{{CPU: 1, Start: c0.Add(10 * time.Second), End: c0.Add(30 * time.Second)}}
	}
	v.Set("host", host)
	for i := range n.Captures {
		var b bytes.Buffer
		if err := n.Write(&b, i, nil); err != nil {
			t.Fatal(err)
		}
		res, body := e.do("POST", "/api/profiles?"+v.Encode(), &b, "Authorization", "Bearer s3cret")
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("upload %s %d = %d %s", host, i, res.StatusCode, body)
		}
	}
}

// TestFleetRoutes checks labels end to end (upload, POST labels, the
// hosts' list and pages, escaped) and the fleet's routes over a real
// store: their answers, their parameters' errors and their bounds.
func TestFleetRoutes(t *testing.T) {
	e := newEnv(t, Config{Token: "s3cret", MaxCells: 1000})
	e.s.fleet = e.st
	uploadNight(t, e, "node-1", true, url.Values{"label": {"zone=a", "rack=r1"}, "boot": {"2026-11-29T03:00:00Z"}})
	uploadNight(t, e, "node-2", false, url.Values{"label": {"zone=b"}, "boot": {"1796000000"}})

	// Labels: refused without the token, checked, then set.
	res, body := e.do("POST", "/api/hosts/node-2/labels", strings.NewReader(`{"set": ["team=x"]}`))
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST labels without token = %d %s; want 401", res.StatusCode, body)
	}
	res, body = e.do("POST", "/api/hosts/node-2/labels", strings.NewReader(`{"set": ["Team=x"]}`), "Authorization", "Bearer s3cret")
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "set: ") {
		t.Errorf("POST a bad label = %d %s; want 400 naming set", res.StatusCode, body)
	}
	set := `{"set": ["owner=` + strings.ReplaceAll(strings.ReplaceAll(hostileLabel, `\`, `\\`), `"`, `\"`) + `", "team=x"], "remove": ["zone"]}`
	res, body = e.do("POST", "/api/hosts/node-2/labels", strings.NewReader(set), "Authorization", "Bearer s3cret")
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"key":"team","value":"x"`) || strings.Contains(string(body), `"zone"`) {
		t.Fatalf("POST labels = %d %s; want team set, zone removed", res.StatusCode, body)
	}
	e.do("POST", "/api/hosts/node-2/labels", strings.NewReader(`{"set": ["zone=b"]}`), "Authorization", "Bearer s3cret")

	var hosts struct{ Hosts []timeline.Host }
	e.getJSON("/api/hosts", &hosts)
	if len(hosts.Hosts) != 2 || !fleetHas(hosts.Hosts[0].Labels, "zone", "a") || !fleetHas(hosts.Hosts[1].Labels, "owner", hostileLabel) {
		t.Errorf("GET /api/hosts = %+v; want node-1 in zone a, node-2 with the owner label", hosts)
	}
	for _, path := range []string{"/hosts", "/hosts/node-2", "/fleet?label=owner%3D" + url.QueryEscape(hostileLabel)} {
		res, body := e.do("GET", path, nil)
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d %s", path, res.StatusCode, body)
			continue
		}
		if strings.Contains(string(body), "<script>alert") || !strings.Contains(string(body), "&lt;script&gt;alert(") {
			t.Errorf("GET %s shows the label %q unescaped, or not at all", path, hostileLabel)
		}
	}

	// The map: a row per host, the columns asked, null where no samples.
	var m web.FleetMap
	// 60 columns asked of two minutes: 13, one per 10 s slot of the index.
	e.getJSON("/api/fleet?buckets=60&group=zone", &m)
	if len(m.Rows) != 2 || len(m.Rows[0].Values) != 13 || m.Group != "zone" || m.Measure != "peak_core" || !strings.Contains(strings.Join(m.Keys, ","), "zone") {
		t.Fatalf("GET /api/fleet = %+v; want 2 rows of 13 columns grouped by zone", m)
	}
	if m.To-m.From != 2*int64(time.Minute)+int64(time.Second) && (m.To-m.From < int64(2*time.Minute) || m.To-m.From > int64(3*time.Minute)) {
		t.Errorf("GET /api/fleet range %d ns; want the data's two minutes", m.To-m.From)
	}
	if p := m.Rows[0]; p.Host != "node-1" || p.Peak == nil || *p.Peak < 0.5 || !strings.HasPrefix(p.Href, "/hosts/node-1?from=") {
		t.Errorf("node-1's row = %+v; want its pegged core's peak and a link to its night", p)
	}

	// The search ranks node-1, whose kubelet held a core, first.
	var s web.FleetSearch
	e.getJSON("/api/fleet/search?comm=kubelet&buckets=12", &s)
	if len(s.Hosts) == 0 || s.Hosts[0].Host != "node-1" || s.Kind != "comm" || s.Match != "^kubelet$" || len(s.Hosts[0].Spark) != 12 {
		t.Errorf("GET /api/fleet/search?comm=kubelet = %+v; want node-1 first, the exact name", s)
	}

	var g web.FleetGroups
	e.getJSON("/api/fleet/groups?group=zone&permutations=1000", &g)
	if g.Key != "zone" || len(g.Groups) != 2 {
		t.Errorf("GET /api/fleet/groups = %+v; want zones a and b", g)
	}
	var u web.FleetUptime
	e.getJSON("/api/fleet/uptime?permutations=1000", &u)
	if u.Hosts != 2 {
		t.Errorf("GET /api/fleet/uptime = %+v; want 2 hosts", u)
	}

	for _, tc := range []struct {
		path   string
		status int
		msg    string
	}{
		{"/api/fleet/search", 400, "function: the search needs one of function, comm, comm_regex and stack"},
		{"/api/fleet?label=zone", 400, `label: \"zone\" is not a label key=value`},
		{"/api/fleet?function=a&stack=b", 400, "stack: the fleet searches one of"},
		{"/api/fleet/groups", 400, "group: the group contrast needs a label key"},
		{"/api/fleet?buckets=2000", 400, "buckets: 2 hosts × 2000 buckets = 4000 cells, more than this server's limit of 1000; use buckets ≤ 500"},
		{"/api/fleet?from=2026-11-30T04:00:00Z&to=2026-11-30T03:00:00Z", 400, "to: the range"},
		{"/fleet?comm=a&function=b", 400, "comm: the fleet searches one of function, comm, comm_regex and stack at a time; function is given too"},
	} {
		res, body := e.do("GET", tc.path, nil)
		if res.StatusCode != tc.status || !strings.Contains(string(body), tc.msg) {
			t.Errorf("GET %s = %d %s; want %d %q", tc.path, res.StatusCode, body, tc.status, tc.msg)
		}
	}
}

// TestFleetNone checks the fleet's answers on a server that keeps no
// index, and with no capture yet.
func TestFleetNone(t *testing.T) {
	e := newEnv(t, Config{})
	for _, path := range []string{"/api/fleet", "/fleet"} {
		if res, body := e.do("GET", path, nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s without a fleet = %d %s; want 404", path, res.StatusCode, body)
		}
	}
	e.s.fleet = e.st
	if res, body := e.do("GET", "/api/fleet", nil); res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "no capture is on the wall clock") {
		t.Errorf("GET /api/fleet of an empty store = %d %s; want 400 saying so", res.StatusCode, body)
	}
}

// TestFleetBounds checks that the query table's fleet bounds are package
// fleet's.
func TestFleetBounds(t *testing.T) {
	if query.MaxFleetBuckets != fleet.MaxBuckets || query.DefaultFleetBuckets != fleet.DefaultBuckets ||
		query.MinPermutations != fleet.MinPermutations || query.MaxPermutations != fleet.MaxPermutations ||
		query.DefaultPermutations != fleet.DefaultPermutations {
		t.Errorf("the query table's buckets and permutations bounds differ from package fleet's")
	}
}

// TestTooLarge checks that a fleet view's ErrTooLarge says how to narrow it.
func TestTooLarge(t *testing.T) {
	err := tooLarge(fmt.Errorf("more than 200000 captures: %w", subsecond.ErrTooLarge))
	code, msg := status(err)
	if code != http.StatusRequestEntityTooLarge || msg != "more than 200000 captures; narrow the range (from, to) or the hosts (label)" {
		t.Errorf("status(tooLarge) = %d %q", code, msg)
	}
}

func fleetHas(ls []subsecond.Label, k, v string) bool {
	for _, l := range ls {
		if l.Key == k && l.Value == v {
			return true
		}
	}
	return false
}

// TestFleetAnswersKept: a fleet answer asked again, its parameters in
// another order, is written from memory and is the answer computed; a
// change made through the server's store (an upload, labels set) is seen
// at once, one made by another process (a second store on the same
// database) within fleetAnswerAge.
func TestFleetAnswersKept(t *testing.T) {
	defer func(a time.Duration) { fleetAnswerAge = a }(fleetAnswerAge)
	fleetAnswerAge = 500 * time.Millisecond
	path := filepath.Join(t.TempDir(), "fleet.db")
	st, err := sqlite.OpenStore(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := newEnvOn(t, st, Config{Token: "s3cret", Fleet: st})
	uploadNight(t, e, "node-1", true, url.Values{"label": {"zone=a"}})
	rows := func(path string) (int, []byte) {
		t.Helper()
		res, body := e.do("GET", path, nil)
		var m web.FleetMap
		if res.StatusCode != http.StatusOK || json.Unmarshal(body, &m) != nil {
			t.Fatalf("GET %s = %d %.200s", path, res.StatusCode, body)
		}
		return len(m.Rows), body
	}
	n, first := rows("/api/fleet?group=zone&buckets=60")
	hits := e.s.answers.hits.Load()
	if n2, again := rows("/api/fleet?buckets=60&group=zone"); n2 != 1 || n != 1 || !bytes.Equal(again, first) || e.s.answers.hits.Load() != hits+1 {
		t.Errorf("asked again: %d rows (first %d), same answer %v, %d hits more; want the kept answer", n2, n, bytes.Equal(again, first), e.s.answers.hits.Load()-hits)
	}
	uploadNight(t, e, "node-2", false, url.Values{"label": {"zone=b"}})
	if n, _ := rows("/api/fleet?group=zone&buckets=60"); n != 2 {
		t.Errorf("after node-2's upload: %d rows; want 2", n)
	}
	e.do("POST", "/api/hosts/node-2/labels", strings.NewReader(`{"set": ["zone=c"]}`), "Authorization", "Bearer s3cret")
	if _, body := rows("/api/fleet?group=zone&buckets=60"); !strings.Contains(string(body), `"c"`) {
		t.Errorf("after node-2's label: %s; want zone c", body)
	}
	// Another process imports node-3.
	other, err := sqlite.OpenStore(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	n3 := &nightgen.Night{Host: "node-3", CPUs: 2, Hz: 49, Start: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC),
		Captures: 1, Length: time.Minute, Unanchored: -1, Seed: 6}
	var b bytes.Buffer
	if err := n3.Write(&b, 0, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.Import(context.Background(), &b, store.ImportOptions{Host: "node-3"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(fleetAnswerAge + time.Second)
	for {
		n, _ := rows("/api/fleet?group=zone&buckets=60")
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v after another process imported node-3: %d rows; want 3 within %v", time.Since(deadline.Add(-fleetAnswerAge-time.Second)), n, fleetAnswerAge)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLabelBounds checks a label's byte bounds where labels come in: a
// key of subsecond.MaxLabelKey bytes and a value of MaxLabelValue bytes
// are stored; a byte more is refused with 400 naming the bound, by the
// labels' POST (the host's labels unchanged) and by an upload (no
// capture stored).
func TestLabelBounds(t *testing.T) {
	e := newEnv(t, Config{Token: "s3cret"})
	e.s.fleet = e.st
	uploadNight(t, e, "node-1", false, url.Values{"label": {"zone=a"}})
	key := "k" + strings.Repeat("x", subsecond.MaxLabelKey-1)
	val := strings.Repeat("é", subsecond.MaxLabelValue/2) // 256 bytes in 128 characters
	labels := func() []subsecond.Label {
		var hosts struct{ Hosts []timeline.Host }
		e.getJSON("/api/hosts", &hosts)
		if len(hosts.Hosts) != 1 {
			t.Fatalf("GET /api/hosts = %+v; want node-1 alone", hosts)
		}
		return hosts.Hosts[0].Labels
	}
	post := func(set string) (*http.Response, []byte) {
		b, _ := json.Marshal(map[string][]string{"set": {set}})
		return e.do("POST", "/api/hosts/node-1/labels", bytes.NewReader(b), "Authorization", "Bearer s3cret")
	}
	if res, body := post(key + "=" + val); res.StatusCode != http.StatusOK {
		t.Fatalf("POST a label of %d-byte key and %d-byte value = %d %s; want 200", len(key), len(val), res.StatusCode, body)
	}
	if !fleetHas(labels(), key, val) {
		t.Fatalf("labels = %+v; want the longest key and value stored", labels())
	}
	before := labels()
	for _, tc := range []struct{ set, msg string }{
		{key + "x=v", "the key is longer than 64 bytes"},
		{"zone=" + val + "é", "the value of zone is longer than 256 bytes"},
	} {
		res, body := post(tc.set)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), tc.msg) {
			t.Errorf("POST label %.30q… = %d %s; want 400 %q", tc.set, res.StatusCode, body, tc.msg)
		}
		if after := labels(); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("labels after a refused POST = %+v; want %+v", after, before)
		}

		var b bytes.Buffer
		n := &nightgen.Night{Host: "node-2", CPUs: 1, Hz: 49, Start: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC),
			Captures: 1, Length: 10 * time.Second, Unanchored: -1, Seed: 1}
		if err := n.Write(&b, 0, nil); err != nil {
			t.Fatal(err)
		}
		v := url.Values{"host": {"node-2"}, "label": {tc.set}}
		res, body = e.do("POST", "/api/profiles?"+v.Encode(), &b, "Authorization", "Bearer s3cret")
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), tc.msg) {
			t.Errorf("upload with label %.30q… = %d %s; want 400 %q", tc.set, res.StatusCode, body, tc.msg)
		}
		if ps, err := e.st.List(context.Background()); err != nil || len(ps) != 2 {
			t.Errorf("captures after a refused upload: %d (%v); want node-1's 2", len(ps), err)
		}
	}
}
