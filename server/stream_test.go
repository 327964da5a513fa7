package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/subsecond/subsecond"
)

// firstReadStore signals on started when Import first gets bytes from the
// upload.
type firstReadStore struct {
	sqliteStore
	started chan struct{}
}

func (s firstReadStore) Import(ctx context.Context, r io.Reader, u Upload) (*subsecond.Profile, bool, error) {
	return s.sqliteStore.Import(ctx, &signalReader{r: r, started: s.started}, u)
}

type signalReader struct {
	r       io.Reader
	started chan struct{}
	once    bool
}

func (s *signalReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 && !s.once {
		s.once = true
		close(s.started)
	}
	return n, err
}

// TestUploadStreams holds back the end of an upload until the store has
// begun reading it: a server that buffered the body whole would never get
// there.
func TestUploadStreams(t *testing.T) {
	for _, multi := range []bool{false, true} {
		name := "raw"
		if multi {
			name = "multipart"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, Config{})
			started := make(chan struct{})
			srv := httptest.NewServer(New(Config{Store: firstReadStore{sqliteStore{e.st}, started}, Engine: countEngine{}}).Handler())
			defer srv.Close()

			text := perfText(2, 100, 3)
			var body io.Reader = strings.NewReader(text)
			ct := "text/plain"
			if multi {
				body, ct = multipartBody(t, "name", "streamed", "file", text)
			}
			all, _ := io.ReadAll(body)
			head, tail := all[:len(all)/2], all[len(all)/2:]

			pr, pw := io.Pipe()
			go func() {
				pw.Write(head)
				select {
				case <-started:
					pw.Write(tail)
					pw.Close()
				case <-time.After(10 * time.Second):
					pw.CloseWithError(errors.New("the store saw no bytes before the upload ended"))
				}
			}()
			req, _ := http.NewRequest("POST", srv.URL+"/api/profiles", pr)
			req.Header.Set("Content-Type", ct)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusCreated {
				t.Fatalf("status = %d; want 201", res.StatusCode)
			}
			select {
			case <-started:
			default:
				t.Fatal("the store never read the upload")
			}
		})
	}
}

// failingStore fails every listing with an error full of internals.
type failingStore struct{ sqliteStore }

func (failingStore) List(context.Context) ([]subsecond.Profile, error) {
	return nil, errors.New("sqlite: disk I/O error at /var/lib/secret/subsecond.db")
}

func (failingStore) Page(context.Context, int, string) ([]subsecond.Profile, string, error) {
	return nil, "", errors.New("sqlite: disk I/O error at /var/lib/secret/subsecond.db")
}

func TestInternalErrorsHidden(t *testing.T) {
	e := newEnv(t, Config{})
	srv := httptest.NewServer(New(Config{Store: failingStore{sqliteStore{e.st}}, Engine: countEngine{}}).Handler())
	defer srv.Close()
	e.srv = srv
	res, b := e.do("GET", "/api/profiles", nil)
	wantError(t, res, b, http.StatusInternalServerError, "internal error")
	if strings.Contains(string(b), "secret") {
		t.Errorf("500 body leaks internals: %s", b)
	}
	res, b = e.do("GET", "/", nil)
	if res.StatusCode != http.StatusInternalServerError || strings.Contains(string(b), "secret") || !strings.Contains(string(b), "internal error") {
		t.Errorf("index with a failing store = %d; want a 500 page without internals:\n%s", res.StatusCode, b)
	}
}

func TestStaticAssets(t *testing.T) {
	e := newEnv(t, Config{})
	s := New(Config{Store: sqliteStore{e.st}, Engine: countEngine{}})
	s.assets = newAssets(fstest.MapFS{
		"app.js":     {Data: []byte("console.log('subsecond')\n")},
		"app.css":    {Data: []byte("body { margin: 0 }\n")},
		".gitkeep":   {Data: nil},
		"app.js.map": {Data: []byte("{}")},
	})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	e.srv = srv

	_, page := e.do("GET", "/", nil)
	jsURL := s.assets.url("app.js")
	if !strings.Contains(jsURL, "?v=") || !strings.Contains(string(page), `src="`+jsURL+`"`) || !strings.Contains(string(page), s.assets.url("app.css")) {
		t.Fatalf("index does not reference the versioned assets %s", jsURL)
	}
	res, b := e.do("GET", jsURL, nil)
	if res.StatusCode != 200 || string(b) != "console.log('subsecond')\n" {
		t.Fatalf("GET %s = %d %q", jsURL, res.StatusCode, b)
	}
	if ct := res.Header.Get("Content-Type"); !strings.Contains(ct, "javascript") {
		t.Errorf("app.js Content-Type = %q", ct)
	}
	if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
		t.Errorf("versioned app.js Cache-Control = %q; want immutable", cc)
	}
	etag := res.Header.Get("ETag")
	res, _ = e.do("GET", "/static/app.css", nil)
	if cc := res.Header.Get("Cache-Control"); cc != "no-cache" || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/css") {
		t.Errorf("unversioned app.css: Cache-Control %q, Content-Type %q; want no-cache, text/css", cc, res.Header.Get("Content-Type"))
	}
	if res, _ = e.do("GET", "/static/app.js", nil, "If-None-Match", etag); res.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation with ETag %s = %d; want 304", etag, res.StatusCode)
	}
	for _, path := range []string{"/static/.gitkeep", "/static/nope.js", "/static/../server.go"} {
		if res, _ = e.do("GET", path, nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s = %d; want 404", path, res.StatusCode)
		}
	}
}

// TestUploadOutlastsReadTimeout sends an upload more slowly than the
// http.Server's ReadTimeout allows other requests: the upload handler
// extends its own deadlines.
func TestUploadOutlastsReadTimeout(t *testing.T) {
	e := newEnv(t, Config{})
	srv := httptest.NewUnstartedServer(New(Config{Store: sqliteStore{e.st}, Engine: countEngine{}}).Handler())
	srv.Config.ReadTimeout = 200 * time.Millisecond
	srv.Config.WriteTimeout = 200 * time.Millisecond
	srv.Start()
	defer srv.Close()

	text := perfText(1, 50, 2)
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(text[:len(text)/2]))
		time.Sleep(600 * time.Millisecond)
		pw.Write([]byte(text[len(text)/2:]))
		pw.Close()
	}()
	res, err := http.Post(srv.URL+"/api/profiles", "text/plain", pr)
	if err != nil {
		t.Fatalf("slow upload: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("slow upload: status %d; want 201", res.StatusCode)
	}
}

// TestEmbeddedAssets follows a page's own stylesheet and script links into
// the assets embedded from web/static.
func TestEmbeddedAssets(t *testing.T) {
	e := newEnv(t, Config{})
	_, page := e.do("GET", "/", nil)
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`<link rel="stylesheet" href="(/static/app\.css\?v=[0-9a-f]+)"`),
		regexp.MustCompile(`<script type="module" src="(/static/app\.js\?v=[0-9a-f]+)"`),
	} {
		m := re.FindSubmatch(page)
		if m == nil {
			t.Fatalf("index page has no versioned link matching %s", re)
		}
		res, b := e.do("GET", string(m[1]), nil)
		if res.StatusCode != 200 || len(b) == 0 || !strings.Contains(res.Header.Get("Cache-Control"), "immutable") {
			t.Errorf("GET %s = %d, %d bytes, Cache-Control %q; want the embedded file, cached for good",
				m[1], res.StatusCode, len(b), res.Header.Get("Cache-Control"))
		}
	}
}

// TestUploadTextLimit sends a small compressed upload that expands past the
// text limit: refused, nothing stored. A capture of exactly the limit passes.
func TestUploadTextLimit(t *testing.T) {
	small := perfText(1, 20, 1)
	e := newEnv(t, Config{MaxText: int64(len(small))})
	big := gz(t, perfText(2, 100, 3)) // about 140 KB of text in a few KB
	if len(big) > len(small) {
		t.Fatalf("compressed capture (%d bytes) is not smaller than the limit (%d)", len(big), len(small))
	}
	res, b := e.do("POST", "/api/profiles", bytes.NewReader(big), "Content-Encoding", "gzip")
	wantError(t, res, b, http.StatusRequestEntityTooLarge, "text is larger than the limit")
	if n := e.count(); n != 0 {
		t.Fatalf("store holds %d profiles after a refused upload; want 0", n)
	}
	e.upload(small, "exactly at the limit")
}

// TestUploadDoubleCompression sends text compressed twice: the store
// decompresses once, and a compressed stream inside is refused with 413
// before it can expand past the text limit; nothing is stored.
func TestUploadDoubleCompression(t *testing.T) {
	text := []byte(perfText(2, 100, 3))
	e := newEnv(t, Config{MaxText: int64(len(text)) / 2})
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{
		"zstd of zstd": zw.EncodeAll(zw.EncodeAll(text, nil), nil),
		"gzip of zstd": gz(t, string(zw.EncodeAll(text, nil))),
	} {
		res, b := e.do("POST", "/api/profiles", bytes.NewReader(body))
		wantError(t, res, b, http.StatusRequestEntityTooLarge, "a compressed stream inside compressed input is refused")
		if n := e.count(); n != 0 {
			t.Fatalf("%s: store holds %d profiles after a refused upload; want 0", name, n)
		}
	}
}
