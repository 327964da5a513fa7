package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/engine"
	"github.com/subsecond/subsecond/store"
	"github.com/subsecond/subsecond/store/sqlite"
)

// hostile is a symbol (and profile name) that would run script if a page
// put it into the markup unescaped.
const hostile = `<img src=x onerror=alert(1)>`

// perfText returns perf script text for cpus CPUs sampled at hz for secs
// seconds from 5086.05 s: CPU 0 runs "web" (leaf handle_request), the other
// CPUs run "kubelet" whose leaf function is the hostile symbol.
func perfText(cpus, hz, secs int) string {
	var b strings.Builder
	b.WriteString("# ========\n# hostname : test-host\n# nr_cpus online : 2\n# ========\n#\n")
	start := int64(5086_050_000_000)
	step := int64(1_000_000_000) / int64(hz)
	for i := 0; i < hz*secs; i++ {
		t := start + int64(i)*step
		for cpu := 0; cpu < cpus; cpu++ {
			comm, pid, leaf := "kubelet", 1200, hostile
			if cpu == 0 {
				comm, pid, leaf = "web", 300, "handle_request"
			}
			fmt.Fprintf(&b, "%s %d/%d [%03d] %d.%06d: 10101010 cpu-clock:ppp: \n", comm, pid, pid+1, cpu, t/1e9, t%1e9/1e3)
			fmt.Fprintf(&b, "\tffffffff8100%04x %s+0x1a ([kernel.kallsyms])\n", cpu, leaf)
			b.WriteString("\tffffffff81001000 do_syscall_64+0x5b ([kernel.kallsyms])\n")
			fmt.Fprintf(&b, "\t          4a1f00 main.main+0x20 (/usr/bin/%s)\n\n", comm)
		}
	}
	return b.String()
}

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := io.WriteString(zw, s); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// testEnv is a real server over a real store in a temporary directory.
type testEnv struct {
	t   *testing.T
	srv *httptest.Server
	st  *store.Store
	s   *Server
}

func newEnv(t *testing.T, cfg Config) *testEnv {
	t.Helper()
	st, err := sqlite.OpenStore(context.Background(), t.TempDir()+"/test.db", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return newEnvOn(t, st, cfg)
}

// newEnvOn is newEnv over the store st, which the caller closes.
func newEnvOn(t *testing.T, st *store.Store, cfg Config) *testEnv {
	t.Helper()
	cfg.Store = sqliteStore{st}
	if cfg.Engine == nil {
		cfg.Engine = engine.Engine{}
	}
	if cfg.Night == nil {
		cfg.Night = sqliteNight{st}
	}
	if cfg.State == nil {
		cfg.State = st
	}
	s := New(cfg)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return &testEnv{t: t, srv: srv, st: st, s: s}
}

// server returns the Server behind e.
func (e *testEnv) server() *Server { return e.s }

// do sends a request; hdr lists header names and values alternately.
func (e *testEnv) do(method, path string, body io.Reader, hdr ...string) (*http.Response, []byte) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return res, b
}

type uploadResponse struct {
	Profile subsecond.Profile `json:"profile"`
	URL     string            `json:"url"`
	Existed bool              `json:"existed"`
}

// upload posts text as a raw body and returns the stored profile.
func (e *testEnv) upload(text, name string) subsecond.Profile {
	e.t.Helper()
	res, body := e.do("POST", "/api/profiles?name="+url.QueryEscape(name), strings.NewReader(text))
	if res.StatusCode != http.StatusCreated {
		e.t.Fatalf("upload: status %d: %s", res.StatusCode, body)
	}
	var up uploadResponse
	if err := json.Unmarshal(body, &up); err != nil {
		e.t.Fatal(err)
	}
	return up.Profile
}

// count returns how many profiles the store holds.
func (e *testEnv) count() int {
	e.t.Helper()
	list, err := e.st.List(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return len(list)
}

// wantError checks a JSON error response's status and that its message
// contains want.
func wantError(t *testing.T, res *http.Response, body []byte, code int, want string) {
	t.Helper()
	if res.StatusCode != code {
		t.Fatalf("status = %d; want %d (body %s)", res.StatusCode, code, body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q; want application/json", ct)
	}
	var e struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %q is not JSON: %v", body, err)
	}
	if !strings.Contains(e.Error, want) {
		t.Errorf("error = %q; want it to mention %q", e.Error, want)
	}
	// Like a 400's, a 413's text names what is wrong: the sentinel's words
	// that wrapping appends say nothing more.
	for _, sentinel := range []error{subsecond.ErrInvalid, subsecond.ErrTooLarge} {
		if strings.HasSuffix(e.Error, ": "+sentinel.Error()) {
			t.Errorf("error = %q; want a sentence without the trailing %q", e.Error, sentinel.Error())
		}
	}
}

func TestUploadCurlGzip(t *testing.T) {
	e := newEnv(t, Config{})
	text := perfText(2, 100, 3)
	// What `perf script | gzip | curl --data-binary @- -H 'Content-Encoding: gzip'` sends.
	res, body := e.do("POST", "/api/profiles?name=web-1", bytes.NewReader(gz(t, text)),
		"Content-Encoding", "gzip", "Content-Type", "application/x-www-form-urlencoded", "Accept", "*/*")
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("status = %d; want 201: %s", res.StatusCode, body)
	}
	var up uploadResponse
	if err := json.Unmarshal(body, &up); err != nil {
		t.Fatal(err)
	}
	if up.Profile.Name != "web-1" || up.Profile.Samples != 600 || up.Profile.CPUs != 2 || up.Existed {
		t.Errorf("profile = %+v, existed %v; want web-1 with 600 samples on 2 CPUs, new", up.Profile, up.Existed)
	}
	if want := e.srv.URL + "/p/" + up.Profile.ID; up.URL != want || res.Header.Get("Location") != want {
		t.Errorf("url = %q, Location %q; want %q", up.URL, res.Header.Get("Location"), want)
	}

	// The same capture again, plain: 200 and the existing profile.
	res, body = e.do("POST", "/api/profiles?name=again", strings.NewReader(text))
	if res.StatusCode != http.StatusOK {
		t.Fatalf("second upload: status = %d; want 200: %s", res.StatusCode, body)
	}
	var again uploadResponse
	if err := json.Unmarshal(body, &again); err != nil {
		t.Fatal(err)
	}
	if !again.Existed || again.Profile.ID != up.Profile.ID || again.Profile.Name != "web-1" {
		t.Errorf("second upload = %+v; want existed: the stored profile, id %s, still named web-1", again, up.Profile.ID)
	}

	// A client asking for text gets the link, and a line saying the
	// capture was there already.
	res, body = e.do("POST", "/api/profiles?name=third", strings.NewReader(text), "Accept", "text/plain")
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	if res.StatusCode != http.StatusOK || len(lines) != 2 || lines[0] != up.URL || !strings.HasPrefix(lines[1], `already stored as "web-1" (uploaded `) ||
		!strings.HasSuffix(lines[1], "); not stored again") {
		t.Errorf("text/plain upload of a stored capture = %d %q; want 200, %s and a line saying it was stored as web-1", res.StatusCode, body, up.URL)
	}
	res, body = e.do("POST", "/api/profiles", strings.NewReader(strings.Replace(text, "web", "wab", 1)), "Accept", "text/plain")
	if got := string(body); res.StatusCode != http.StatusCreated || !strings.HasPrefix(got, e.srv.URL+"/p/") || strings.Count(got, "\n") != 1 {
		t.Errorf("text/plain upload of a new capture = %d %q; want 201 and the link alone", res.StatusCode, got)
	}
	e.do("DELETE", "/api/profiles/"+strings.TrimPrefix(strings.TrimSpace(string(body)), e.srv.URL+"/p/"), nil)
	if n := e.count(); n != 1 {
		t.Errorf("store holds %d profiles; want 1", n)
	}
}

// multipartBody returns a form with the given fields, in order; the field
// "file" is sent as a file part.
func multipartBody(t *testing.T, fields ...string) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		var w io.Writer
		var err error
		if fields[i] == "file" {
			w, err = mw.CreateFormFile("file", "capture.perf.txt.gz")
		} else {
			w, err = mw.CreateFormField(fields[i])
		}
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, fields[i+1])
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf, mw.FormDataContentType()
}

func TestUploadMultipart(t *testing.T) {
	e := newEnv(t, Config{})
	body, ct := multipartBody(t, "name", hostile, "file", string(gz(t, perfText(2, 50, 2))))
	res, b := e.do("POST", "/api/profiles", body, "Content-Type", ct, "Accept", "application/json")
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("status = %d; want 201: %s", res.StatusCode, b)
	}
	var up uploadResponse
	if err := json.Unmarshal(b, &up); err != nil {
		t.Fatal(err)
	}
	if up.Profile.Name != hostile || up.Profile.FileName != "capture.perf.txt.gz" || up.Profile.Samples != 200 {
		t.Errorf("profile = %+v; want the form's name, file name and 200 samples", up.Profile)
	}

	// A browser posting the form without script is sent to the profile.
	body, ct = multipartBody(t, "file", perfText(1, 50, 2))
	res, b = e.do("POST", "/api/profiles", body, "Content-Type", ct, "Accept", "text/html,application/xhtml+xml")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/p/") {
		t.Errorf("form post = %d Location %q; want 303 to /p/ID (%s)", res.StatusCode, res.Header.Get("Location"), b)
	}

	res, b = e.do("POST", "/api/profiles?name="+strings.Repeat("n", 300), strings.NewReader(perfText(1, 50, 1)))
	wantError(t, res, b, http.StatusBadRequest, "name")

	body, ct = multipartBody(t, "name", "no file here")
	res, b = e.do("POST", "/api/profiles", body, "Content-Type", ct)
	wantError(t, res, b, http.StatusBadRequest, "file")
	if n := e.count(); n != 2 {
		t.Errorf("store holds %d profiles; want 2", n)
	}
}

func TestUploadNotPerf(t *testing.T) {
	e := newEnv(t, Config{})
	for name, body := range map[string]string{
		"html":   "<!DOCTYPE html>\n<html><head><title>x</title></head><body>hi</body></html>\n",
		"json":   `{"traceEvents": [{"name": "x", "ph": "X"}]}` + "\n",
		"binary": "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00\x01\x00\x00\x00" + strings.Repeat("\x00\xff", 200),
		"empty":  "",
	} {
		t.Run(name, func(t *testing.T) {
			res, b := e.do("POST", "/api/profiles", strings.NewReader(body))
			wantError(t, res, b, http.StatusUnsupportedMediaType, "not perf script text")
		})
	}
	// An unnamed upload is "the upload", once.
	res, b := e.do("POST", "/api/profiles", strings.NewReader(""))
	wantError(t, res, b, http.StatusUnsupportedMediaType, "import the upload: not perf script text: empty")
	res, b = e.do("POST", "/api/profiles", strings.NewReader(perfText(1, 10, 1)), "Content-Encoding", "br")
	wantError(t, res, b, http.StatusUnsupportedMediaType, "br")
	if n := e.count(); n != 0 {
		t.Errorf("store holds %d profiles; want 0", n)
	}
}

func TestUploadTooLarge(t *testing.T) {
	e := newEnv(t, Config{MaxUpload: 64 << 10})
	text := perfText(2, 100, 3) // about 140 KB
	if len(text) < 100<<10 {
		t.Fatalf("test capture is only %d bytes", len(text))
	}
	res, b := e.do("POST", "/api/profiles", strings.NewReader(text))
	wantError(t, res, b, http.StatusRequestEntityTooLarge, "limit")

	body, ct := multipartBody(t, "file", text)
	res, b = e.do("POST", "/api/profiles", body, "Content-Type", ct)
	wantError(t, res, b, http.StatusRequestEntityTooLarge, "limit")
	if n := e.count(); n != 0 {
		t.Errorf("store holds %d profiles after oversize uploads; want 0", n)
	}
	// Under the limit it is stored.
	e.upload(perfText(1, 10, 1), "small")
}

func TestToken(t *testing.T) {
	e := newEnv(t, Config{Token: "s3cret"})
	text := perfText(1, 20, 1)
	res, b := e.do("POST", "/api/profiles", strings.NewReader(text))
	wantError(t, res, b, http.StatusUnauthorized, "token")
	if !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("WWW-Authenticate = %q; want Bearer", res.Header.Get("WWW-Authenticate"))
	}
	res, b = e.do("POST", "/api/profiles", strings.NewReader(text), "Authorization", "Bearer wrong")
	wantError(t, res, b, http.StatusUnauthorized, "wrong token")
	if n := e.count(); n != 0 {
		t.Fatalf("store holds %d profiles after refused uploads; want 0", n)
	}

	res, b = e.do("POST", "/api/profiles", strings.NewReader(text), "Authorization", "Bearer s3cret")
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("upload with token: %d %s", res.StatusCode, b)
	}
	var up uploadResponse
	json.Unmarshal(b, &up)

	body, ct := multipartBody(t, "token", "s3cret", "file", perfText(1, 30, 1))
	if res, b = e.do("POST", "/api/profiles", body, "Content-Type", ct); res.StatusCode != http.StatusCreated {
		t.Errorf("upload with form token: %d %s", res.StatusCode, b)
	}

	res, b = e.do("DELETE", "/api/profiles/"+up.Profile.ID, nil)
	wantError(t, res, b, http.StatusUnauthorized, "token")
	if res, b = e.do("DELETE", "/api/profiles/"+up.Profile.ID, nil, "Authorization", "Bearer s3cret"); res.StatusCode != http.StatusNoContent {
		t.Errorf("delete with token: %d %s", res.StatusCode, b)
	}
	// A browser without script sends the form's fields in document order:
	// name and token must come before the file the server streams.
	_, page := e.do("GET", "/", nil)
	iName, iToken, iFile := bytes.Index(page, []byte(`name="name"`)), bytes.Index(page, []byte(`name="token"`)), bytes.Index(page, []byte(`name="file"`))
	if iName < 0 || iToken < 0 || iFile < 0 || iName > iFile || iToken > iFile {
		t.Errorf("upload form field offsets: name %d, token %d, file %d; want name and token before file", iName, iToken, iFile)
	}
	if vd := viewDataOf(t, page); vd["tokenRequired"] != true {
		t.Errorf("view data tokenRequired = %v; want true", vd["tokenRequired"])
	}
	// Reading needs no token.
	if res, b = e.do("GET", "/api/profiles", nil); res.StatusCode != http.StatusOK {
		t.Errorf("list: %d %s", res.StatusCode, b)
	}
}

func TestReadOnly(t *testing.T) {
	e := newEnv(t, Config{})
	p := e.upload(perfText(1, 20, 1), "kept")
	ro := httptest.NewServer(New(Config{Store: sqliteStore{e.st}, Engine: countEngine{}, ReadOnly: true}).Handler())
	defer ro.Close()
	e.srv = ro

	res, b := e.do("POST", "/api/profiles", strings.NewReader(perfText(1, 30, 1)))
	wantError(t, res, b, http.StatusForbidden, "read-only")
	res, b = e.do("DELETE", "/api/profiles/"+p.ID, nil)
	wantError(t, res, b, http.StatusForbidden, "read-only")
	if n := e.count(); n != 1 {
		t.Errorf("store holds %d profiles; want 1", n)
	}
	res, b = e.do("GET", "/", nil)
	if res.StatusCode != http.StatusOK || strings.Contains(string(b), `id="upload-form"`) || !strings.Contains(string(b), "/p/"+p.ID) {
		t.Errorf("read-only index: status %d; want the profile listed and no upload form", res.StatusCode)
	}
	if vd := viewDataOf(t, b); vd["readOnly"] != true {
		t.Errorf("view data readOnly = %v; want true", vd["readOnly"])
	}
}

func TestCrossOrigin(t *testing.T) {
	e := newEnv(t, Config{})
	text := perfText(1, 20, 1)
	res, b := e.do("POST", "/api/profiles", strings.NewReader(text), "Sec-Fetch-Site", "cross-site")
	wantError(t, res, b, http.StatusForbidden, "cross-origin")
	res, b = e.do("POST", "/api/profiles", strings.NewReader(text), "Origin", "http://evil.example")
	wantError(t, res, b, http.StatusForbidden, "cross-origin")
	p := e.upload(text, "x")
	res, b = e.do("DELETE", "/api/profiles/"+p.ID, nil, "Sec-Fetch-Site", "cross-site")
	wantError(t, res, b, http.StatusForbidden, "cross-origin")
	if n := e.count(); n != 1 {
		t.Fatalf("store holds %d profiles; want 1", n)
	}
	// The page itself posting (same origin) is allowed.
	res, b = e.do("POST", "/api/profiles", strings.NewReader(perfText(1, 30, 1)), "Sec-Fetch-Site", "same-origin", "Origin", e.srv.URL)
	if res.StatusCode != http.StatusCreated {
		t.Errorf("same-origin upload: %d %s", res.StatusCode, b)
	}
	// Cross-site reads are harmless and allowed.
	if res, _ = e.do("GET", "/api/profiles", nil, "Sec-Fetch-Site", "cross-site"); res.StatusCode != http.StatusOK {
		t.Errorf("cross-site GET: %d; want 200", res.StatusCode)
	}
}

func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t, Config{})
	p := e.upload(perfText(1, 20, 1), "x")
	for _, path := range []string{"/", "/p/" + p.ID, "/api/profiles", "/api/profiles/nope", "/p/nope"} {
		res, _ := e.do("GET", path, nil)
		csp := res.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "object-src 'none'", "frame-ancestors 'none'", "base-uri 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s: CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") {
			t.Errorf("GET %s: CSP allows inline code: %q", path, csp)
		}
		if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options = %q", path, got)
		}
		if got := res.Header.Get("Referrer-Policy"); got == "" {
			t.Errorf("GET %s: no Referrer-Policy", path)
		}
	}
}

func TestProfileAPI(t *testing.T) {
	e := newEnv(t, Config{})
	p := e.upload(perfText(2, 100, 3), "web-1")

	res, b := e.do("GET", "/api/profiles", nil)
	var list struct {
		Profiles []subsecond.Profile `json:"profiles"`
	}
	if err := json.Unmarshal(b, &list); err != nil || res.StatusCode != 200 || len(list.Profiles) != 1 || list.Profiles[0].ID != p.ID {
		t.Fatalf("list = %d %s; want the one profile", res.StatusCode, b)
	}

	res, b = e.do("GET", "/api/profiles/"+p.ID, nil)
	var got subsecond.Profile
	if err := json.Unmarshal(b, &got); err != nil || got.ID != p.ID || got.Samples != 600 || got.Meta.Hostname != "test-host" {
		t.Fatalf("get = %d %s; want the profile with 600 samples from test-host", res.StatusCode, b)
	}

	if res, b = e.do("DELETE", "/api/profiles/"+p.ID, nil); res.StatusCode != http.StatusNoContent {
		t.Fatalf("delete = %d %s; want 204", res.StatusCode, b)
	}
	for _, path := range []string{"", "/heatmap", "/cpus", "/hotspots", "/flamegraph", "/diff?start2=0&end2=1"} {
		res, b = e.do("GET", "/api/profiles/"+p.ID+path, nil)
		wantError(t, res, b, http.StatusNotFound, "profile \""+p.ID+"\": not found")
		if n := strings.Count(string(b), p.ID); n != 1 {
			t.Errorf("GET %s of a deleted profile: %s names it %d times; want once", path, b, n)
		}
	}
	res, b = e.do("DELETE", "/api/profiles/"+p.ID, nil)
	wantError(t, res, b, http.StatusNotFound, "not found")
	if n := strings.Count(string(b), p.ID); n != 1 {
		t.Errorf("DELETE of a deleted profile: %s names it %d times; want once", b, n)
	}
	res, b = e.do("GET", "/api/nothing-here", nil)
	wantError(t, res, b, http.StatusNotFound, "no such page")
	if res, _ = e.do("HEAD", "/api/profiles", nil); res.StatusCode != http.StatusOK {
		t.Errorf("HEAD /api/profiles = %d; want 200", res.StatusCode)
	}
	res, b = e.do("PUT", "/api/profiles", nil)
	wantError(t, res, b, http.StatusMethodNotAllowed, "method")
}

// TestViewAPI checks with a counting engine that URL parameters reach the
// engine parsed and its answers reach the client in each format.
func TestViewAPI(t *testing.T) {
	e := newEnv(t, Config{Engine: countEngine{}})
	p := e.upload(perfText(2, 100, 3), "web-1") // 5086.05 s to 5089.04 s; T0 = 5086 s
	api := "/api/profiles/" + p.ID

	get := func(path string) countView {
		t.Helper()
		res, b := e.do("GET", api+path, nil)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s = %d %s", path, res.StatusCode, b)
		}
		var v countView
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	// Defaults: the whole profile, 50 rows of 1 s.
	if v := get("/heatmap"); v.Rows != 50 || v.ColNS != 1e9 || v.Total != 600 || v.Start != 5086e9 || v.End != p.End+1 {
		t.Errorf("default heatmap = %+v; want 50 rows of 1 s over [T0, end] with 600 samples", v)
	}
	// Parameters reach the engine: range in seconds from T0, CPU filter.
	if v := get("/heatmap?rows=20&col=0.5&cpu=1&start=1&end=2.5"); v.Rows != 20 || v.ColNS != 5e8 || v.Total != 150 || v.Start != 5087e9 || v.End != 5088_500_000_000 {
		t.Errorf("heatmap = %+v; want 20 rows of 0.5 s, 150 samples of CPU 1 in [5087, 5088.5)", v)
	}
	if v := get("/cpus?bucket=0.25&comm=web"); v.Bucket != 25e7 || v.Total != 300 {
		t.Errorf("cores = %+v; want 0.25 s buckets and web's 300 samples", v)
	}

	res, b := e.do("GET", api+"/hotspots", nil)
	var hs struct {
		Hotspots []subsecond.Hotspot `json:"hotspots"`
	}
	if err := json.Unmarshal(b, &hs); err != nil || len(hs.Hotspots) != 2 {
		t.Fatalf("hotspots = %d %s; want two", res.StatusCode, b)
	}
	if h := hs.Hotspots[1]; h.CPU != 1 || h.Function != hostile ||
		h.URL != "/p/"+p.ID+"/flame?cpu=1&end=3.040000001&start=0.05" {
		t.Errorf("hot spot = %+v; want CPU 1 with the hostile leaf and a flame link for [0.05, 3.040000001)", h)
	}

	// Flame graphs in every format, with a content type and a file name.
	for format, ct := range map[string]string{"json": "application/json", "folded": "text/plain", "svg": "image/svg+xml", "pprof": "application/vnd.google.protobuf"} {
		res, b := e.do("GET", api+"/flamegraph?start=0&end=1&comm=web&format="+format, nil)
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), ct) {
			t.Errorf("flamegraph format %s = %d %q; want 200 %s", format, res.StatusCode, res.Header.Get("Content-Type"), ct)
		}
		if cd := res.Header.Get("Content-Disposition"); format != "json" && !strings.Contains(cd, "attachment") {
			t.Errorf("flamegraph format %s: Content-Disposition %q; want an attachment", format, cd)
		}
		if format == "folded" && string(b) != strings.Repeat("handle_request 1\n", 95) {
			t.Errorf("folded = %q; want web's 95 samples of [0.05, 1)", b)
		}
	}
	res, b = e.do("GET", api+"/diff?start2=0&end2=1&start=1&end=3", nil)
	var d struct{ Total, BaseTotal int }
	json.Unmarshal(b, &struct {
		Total     *int `json:"total"`
		BaseTotal *int `json:"base_total"`
	}{&d.Total, &d.BaseTotal})
	if res.StatusCode != 200 || d.Total != 400 || d.BaseTotal != 190 {
		t.Errorf("diff = %d %s; want totals 400 over base 190", res.StatusCode, b)
	}
}

func TestBadParameters(t *testing.T) {
	e := newEnv(t, Config{})
	p := e.upload(perfText(2, 100, 3), "x")
	api := "/api/profiles/" + p.ID
	for _, tc := range []struct{ path, param string }{
		{"/heatmap?rows=0", "rows"},
		{"/heatmap?rows=abc", "rows"},
		{"/heatmap?col=0.01", "col"},
		{"/heatmap?col=ten", "col"},
		{"/cpus?bucket=-1", "bucket"},
		{"/heatmap?cpu=x", "cpu"},
		{"/heatmap?pid=1-", "pid"},
		{"/heatmap?function=(", "function"},
		{"/heatmap?comm_regex=[", "comm_regex"},
		{"/heatmap?only=both", "only"},
		{"/heatmap?idle=yes", "idle"},
		{"/heatmap?event=cycles", "event"},
		{"/flamegraph?start=abc", "start"},
		{"/flamegraph?start=2&end=1", "end"},
		{"/flamegraph?start=9999999999", "start"},
		{"/flamegraph?start=99", "start"},
		{"/flamegraph?start=-9&end=-2", "end"},
		{"/flamegraph?start=-9999999999", "start"},
		{"/flamegraph?start=9223372036", "start"},
		{"/flamegraph?end=-9223372036", "end"},
		{"/heatmap?start=9223372036", "start"},
		{"/flamegraph?format=gif", "format"},
		{"/hotspots?threshold=2", "threshold"},
		{"/hotspots?min=0", "min"},
		{"/diff?start=0&end=1", "start2"},
		{"/diff?start2=1&end2=1", "end2"},
	} {
		res, b := e.do("GET", api+tc.path, nil)
		wantError(t, res, b, http.StatusBadRequest, tc.param)
	}
	// A range reaching past the capture is clamped to it.
	whole, b := e.do("GET", api+"/flamegraph", nil)
	clamped, b2 := e.do("GET", api+"/flamegraph?start=-5&end=99", nil)
	if whole.StatusCode != 200 || clamped.StatusCode != 200 || string(b) != string(b2) {
		t.Errorf("start=-5&end=99: %d %.200s; want %d %.200s, the whole capture", clamped.StatusCode, b2, whole.StatusCode, b)
	}
	// A range holding no sample of the filter is a client error too.
	res, b := e.do("GET", api+"/flamegraph?start=0&end=0.01", nil)
	wantError(t, res, b, http.StatusBadRequest, "no samples")
	// Pages refuse bad parameters with an error page.
	res, b = e.do("GET", "/p/"+p.ID+"?rows=0", nil)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `data-testid="error"`) || !strings.Contains(string(b), "rows") {
		t.Errorf("page with rows=0: %d; want a 400 page naming rows", res.StatusCode)
	}
}

var viewDataRe = regexp.MustCompile(`(?s)<script id="view-data" type="application/json">(.*?)</script>`)

// viewDataOf returns a page's view-data JSON.
func viewDataOf(t *testing.T, page []byte) map[string]any {
	t.Helper()
	m := viewDataRe.FindSubmatch(page)
	if m == nil {
		t.Fatalf("page has no view-data script:\n%s", page)
	}
	var v map[string]any
	if err := json.Unmarshal(m[1], &v); err != nil {
		t.Fatalf("view-data is not JSON: %v\n%s", err, m[1])
	}
	return v
}

// wantMarkup checks that page contains each of the snippets.
func wantMarkup(t *testing.T, name string, page []byte, snippets ...string) {
	t.Helper()
	for _, s := range snippets {
		if !bytes.Contains(page, []byte(s)) {
			t.Errorf("%s page lacks %s", name, s)
		}
	}
}

func TestPages(t *testing.T) {
	e := newEnv(t, Config{})
	p := e.upload(perfText(2, 100, 3), hostile)

	pages := map[string]string{
		"index":   "/",
		"profile": "/p/" + p.ID + "?cpu=0-1&rows=20&scale=log",
		"flame":   "/p/" + p.ID + "/flame?start=1&end=2.5&cpu=1&measure=system&search=" + url.QueryEscape(hostile) + "&zoom=3",
		"diff":    "/p/" + p.ID + "/diff?start=1&end=2&start2=0&end2=1",
	}
	got := map[string][]byte{}
	for name, path := range pages {
		res, b := e.do("GET", path, nil)
		if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("GET %s = %d %s", path, res.StatusCode, res.Header.Get("Content-Type"))
		}
		got[name] = b
		wantMarkup(t, name, b, `<body data-page="`+name+`">`, `<link rel="stylesheet" href="/static/app.css`,
			`<script type="module" src="/static/app.js`)
		// Hostile names are escaped text wherever they appear.
		if bytes.Contains(b, []byte("<img")) {
			t.Errorf("%s page contains an unescaped <img", name)
		}
		if bytes.Contains(b, []byte("<script>")) || bytes.Contains(b, []byte("onerror=alert(1)>")) {
			t.Errorf("%s page contains inline script or raw hostile markup", name)
		}
		vd := viewDataOf(t, b)
		if vd["page"] != name {
			t.Errorf("%s page: view-data page = %v", name, vd["page"])
		}
		if name != "index" {
			prof, _ := vd["profile"].(map[string]any)
			if prof["id"] != p.ID || prof["name"] != hostile || prof["t0_ns"] != float64(5086e9) || prof["samples"] != float64(600) {
				t.Errorf("%s page: view-data profile = %v", name, prof)
			}
			if vd["api"] != "/api/profiles/"+p.ID {
				t.Errorf("%s page: view-data api = %v", name, vd["api"])
			}
			if !bytes.Contains(b, []byte("&lt;img src=x onerror=alert(1)&gt;")) {
				t.Errorf("%s page does not show the hostile name as text", name)
			}
		}
	}
	wantMarkup(t, "index", got["index"], `id="upload-form"`, `data-testid="upload-form"`, `action="/api/profiles"`,
		`enctype="multipart/form-data"`, `<input type="file" name="file" id="upload-file"`, `name="name"`,
		`id="upload-drop" data-testid="upload-drop"`, `<progress id="upload-progress" data-testid="upload-progress"`,
		`id="upload-error" data-testid="upload-error"`, `<table data-testid="profiles">`, `href="/p/`+p.ID+`"`,
		`&lt;img src=x onerror=alert(1)&gt;`)
	wantMarkup(t, "profile", got["profile"], `<dl data-testid="metadata"`, `test-host`,
		`<form id="filters" data-testid="filters" method="get"`, `name="cpu" value="0-1"`, `name="rows" value="20"`,
		`name="comm_regex"`, `name="function"`, `name="only"`, `name="idle"`, `name="bucket"`, `name="col"`,
		`<option value="log" selected>`,
		`<div id="heatmap" data-testid="heatmap"`, `<div id="cores" data-testid="cores-map"`,
		`<ol data-testid="hotspots">`, `href="/p/`+p.ID+`/flame?cpu=1&amp;end=3&amp;start=0.1"`,
		`<code class="func">&lt;img src=x onerror=alert`,
		`id="copy-link" data-testid="copy-link"`)
	params := viewDataOf(t, got["profile"])["params"].(map[string]any)
	if params["cpu"] != "0-1" || params["rows"] != "20" || params["scale"] != "log" {
		t.Errorf("profile view-data params = %v", params)
	}
	wantMarkup(t, "flame", got["flame"], `<div id="flame" data-testid="flamegraph"`, `<input id="search" data-testid="search" name="search"`,
		`value="&lt;img src=x onerror=alert(1)&gt;"`,
		`data-testid="export-svg" href="/api/profiles/`+p.ID+`/flamegraph?cpu=1&amp;end=2.5&amp;format=svg&amp;start=1"`,
		`data-testid="export-folded"`, `data-testid="export-pprof"`, `<div id="top">`, `<table data-testid="top-functions">`,
		`id="copy-link" data-testid="copy-link"`, `1–2.5 s (1.5 s)`, `<input type="hidden" name="zoom" value="3"`,
		`href="/p/`+p.ID+`?cpu=1&amp;measure=system"`)
	if params := viewDataOf(t, got["flame"])["params"].(map[string]any); params["search"] != hostile || params["zoom"] != "3" {
		t.Errorf("flame view-data params = %v", params)
	}
	wantMarkup(t, "diff", got["diff"], `<div id="flame" data-testid="flamegraph"`, `/api/profiles/`+p.ID+`/diff?`)

	res, b := e.do("GET", "/p/nope", nil)
	if res.StatusCode != http.StatusNotFound || !bytes.Contains(b, []byte(`data-testid="error"`)) {
		t.Errorf("unknown profile page = %d; want a 404 page", res.StatusCode)
	}
}

// TestPagePreloads checks that the flame, diff and stack-chart pages ask
// from their heads for the JSON their script draws first, written as the
// script writes it (web/src/state.ts's apiURL: keys sorted, escaped as
// url.QueryEscape does) so that the script's fetch takes the answer, and
// that each such URL answers.
func TestPagePreloads(t *testing.T) {
	e := newEnv(t, Config{})
	p := e.upload(perfText(2, 100, 3), "x")
	api := "/api/profiles/" + p.ID
	fn := url.QueryEscape(`^(main|run)[^!' ~*]*$`)
	const escaped = "%5E%28main%7Crun%29%5B%5E%21%27+~%2A%5D%2A%24"
	for _, c := range []struct {
		path string
		want []string
	}{
		{"/p/" + p.ID + "/flame?start=1&end=2.5&cpu=1&search=main&zoom=3&function=" + fn,
			[]string{api + "/flamegraph?cpu=1&end=2.5&format=json&function=" + escaped + "&start=1"}},
		{"/p/" + p.ID + "/diff?start=1&end=2&start2=0&end2=1&idle=1",
			[]string{api + "/diff?end=2&end2=1&format=json&idle=1&start=1&start2=0"}},
		{"/p/" + p.ID + "/stacks?lanes=thread&start=0.5&end=1&max_samples=500&function=" + fn,
			[]string{api + "/flamegraph?end=1&format=json&function=" + escaped + "&max_samples=500&start=0.5",
				api + "/samples?end=1&function=" + escaped + "&max_samples=500&start=0.5"}},
		{"/p/" + p.ID + "/stacks", []string{api + "/flamegraph?format=json", api + "/samples"}},
		{"/p/" + p.ID, nil},
		{"/", nil},
	} {
		res, b := e.do("GET", c.path, nil)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s = %d", c.path, res.StatusCode)
		}
		var got []string
		for _, m := range regexp.MustCompile(`<link rel="preload" as="fetch" crossorigin="anonymous" href="([^"]*)">`).FindAllSubmatch(b, -1) {
			got = append(got, html.UnescapeString(string(m[1])))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("GET %s preloads\n%q; want\n%q", c.path, got, c.want)
		}
		if len(got) > 0 && bytes.Index(b, []byte(`rel="preload"`)) > bytes.Index(b, []byte(`<script type="module"`)) {
			t.Errorf("GET %s: the preloads come after the script", c.path)
		}
		for _, u := range got {
			if res, body := e.do("GET", u, nil); res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
				t.Errorf("GET %s (preloaded by %s) = %d %s: %s", u, c.path, res.StatusCode, res.Header.Get("Content-Type"), body)
			}
		}
	}
}

// TestHostileParameters puts markup into every parameter a page echoes:
// filter values, view state and a bad value quoted in an error page.
func TestHostileParameters(t *testing.T) {
	e := newEnv(t, Config{})
	p := e.upload(perfText(2, 100, 3), "x")
	const evil = `"><script>alert(1)</script><img src=x onerror=alert(2)>`
	q := url.Values{}
	for _, name := range []string{"comm", "comm_regex", "function", "search", "zoom", "view", "scale", "unknown"} {
		q.Set(name, evil)
	}
	for _, path := range []string{
		"/p/" + p.ID + "?" + q.Encode(),
		"/p/" + p.ID + "/flame?" + q.Encode(),
		"/p/" + p.ID + "/diff?start2=0&end2=1&" + q.Encode(),
		"/p/" + p.ID + "?rows=" + url.QueryEscape(evil),
		"/p/" + url.PathEscape(evil),
	} {
		res, b := e.do("GET", path, nil)
		if res.StatusCode >= 500 {
			t.Errorf("GET %s = %d", path, res.StatusCode)
		}
		for _, bad := range []string{"<script>alert", "<img"} {
			if bytes.Contains(b, []byte(bad)) {
				t.Errorf("GET %s: the page contains %q unescaped", path, bad)
			}
		}
		if res.StatusCode == 200 {
			if params := viewDataOf(t, b)["params"].(map[string]any); params["search"] != nil && params["search"] != evil {
				t.Errorf("GET %s: view-data search = %q; want the value intact", path, params["search"])
			}
		}
	}
}

// TestUploadHost names the upload's host with ?host= or a form field, which
// overrides the capture's "# hostname"; a host that cannot be one URL
// segment is a 400 and stores nothing.
func TestUploadHost(t *testing.T) {
	e := newEnv(t, Config{})
	text := "# hostname : from-header\n" + perfText(2, 50, 2)
	res, b := e.do("POST", "/api/profiles?host=web-9", strings.NewReader(text))
	var up uploadResponse
	if err := json.Unmarshal(b, &up); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %d %s", res.StatusCode, b)
	}
	if up.Profile.Host != "web-9" || up.Profile.Meta.Hostname != "from-header" {
		t.Errorf("host %q, hostname %q; want web-9 overriding from-header", up.Profile.Host, up.Profile.Meta.Hostname)
	}
	body, ct := multipartBody(t, "host", "db-2", "file", perfText(1, 50, 3))
	res, b = e.do("POST", "/api/profiles", body, "Content-Type", ct, "Accept", "application/json")
	if err := json.Unmarshal(b, &up); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("form upload: %d %s", res.StatusCode, b)
	}
	if up.Profile.Host != "db-2" {
		t.Errorf("form upload's host = %q; want db-2", up.Profile.Host)
	}
	res, b = e.do("POST", "/api/profiles?host=a%2Fb", strings.NewReader(perfText(1, 50, 4)))
	wantError(t, res, b, http.StatusBadRequest, "host")
	if n := e.count(); n != 2 {
		t.Errorf("store holds %d profiles; want 2", n)
	}
}

// TestRename renames a profile through PATCH, with the token when one is
// set, and refuses it in read-only mode, cross-origin and with bad bodies.
func TestRename(t *testing.T) {
	e := newEnv(t, Config{})
	p := e.upload(perfText(1, 20, 1), "old")
	tok := httptest.NewServer(New(Config{Store: sqliteStore{e.st}, Engine: countEngine{}, Token: "s3cret"}).Handler())
	defer tok.Close()
	e.srv = tok
	api := "/api/profiles/" + p.ID
	patch := func(body string, hdr ...string) (*http.Response, []byte) {
		return e.do("PATCH", api, strings.NewReader(body), append([]string{"Content-Type", "application/json"}, hdr...)...)
	}
	res, b := patch(`{"name": "new"}`)
	wantError(t, res, b, http.StatusUnauthorized, "token")
	res, b = patch(`{"name": "  web-1 <b>incident</b>  "}`, "Authorization", "Bearer s3cret")
	var got subsecond.Profile
	if res.StatusCode != http.StatusOK || json.Unmarshal(b, &got) != nil || got.Name != "web-1 <b>incident</b>" || got.ID != p.ID {
		t.Fatalf("PATCH name = %d %s; want the profile with the new name, trimmed", res.StatusCode, b)
	}
	res, b = e.do("GET", "/", nil)
	if !strings.Contains(string(b), "web-1 &lt;b&gt;incident&lt;/b&gt;") {
		t.Errorf("index after rename does not list the new name, escaped")
	}
	for _, tc := range []struct{ body, want string }{
		{`{"name": "` + strings.Repeat("x", 201) + `"}`, "name: 201 bytes"},
		{`{"name": "a\nb"}`, "control character"},
		{`{"nme": "x"}`, "name:"},
		{`{}`, "nothing to change"},
		{`name=x`, "not JSON"},
		{`{"name": "` + strings.Repeat("x", 5000) + `"}`, "longer than 4096 bytes"},
	} {
		res, b = patch(tc.body, "Authorization", "Bearer s3cret")
		wantError(t, res, b, http.StatusBadRequest, tc.want)
	}
	res, b = e.do("PATCH", "/api/profiles/nosuchprofileidxxxxxxxxxxx", strings.NewReader(`{"name": "x"}`), "Authorization", "Bearer s3cret")
	wantError(t, res, b, http.StatusNotFound, "not found")
	res, b = patch(`{"name": "x"}`, "Authorization", "Bearer s3cret", "Sec-Fetch-Site", "cross-site")
	wantError(t, res, b, http.StatusForbidden, "cross-origin")

	ro := httptest.NewServer(New(Config{Store: sqliteStore{e.st}, Engine: countEngine{}, ReadOnly: true}).Handler())
	defer ro.Close()
	e.srv = ro
	res, b = patch(`{"name": "x"}`)
	wantError(t, res, b, http.StatusForbidden, "read-only")
	if q, err := e.st.Profile(context.Background(), p.ID); err != nil || q.Name != "web-1 <b>incident</b>" {
		t.Errorf("refused renames changed the name to %q (%v)", q.Name, err)
	}
}
