package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/subsecond/subsecond"
)

// rawUpload opens a connection to e's server, sends a POST to
// /api/profiles with the given extra header lines and a body declared as
// length bytes, runs send to write (some of) it, and returns the answer.
// It fails the test if none comes within limit.
func rawUpload(t *testing.T, e *testEnv, hdr string, length int, limit time.Duration, send func(c *net.TCPConn)) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(e.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /api/profiles HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n%s\r\n", length, hdr)
	start := time.Now()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		default:
			send(c.(*net.TCPConn))
		}
	}()
	c.SetReadDeadline(time.Now().Add(limit))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer within %s: %v", limit, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	t.Logf("answer %d after %s: %s", res.StatusCode, time.Since(start).Round(time.Millisecond), strings.TrimSpace(string(b)))
	return res, string(b)
}

// trickle writes s a few bytes at a time, every gap, until it is written or
// the connection fails.
func trickle(c net.Conn, s string, n int, gap time.Duration) {
	for len(s) > 0 {
		k := min(n, len(s))
		if _, err := io.WriteString(c, s[:k]); err != nil {
			return
		}
		s = s[k:]
		time.Sleep(gap)
	}
}

// TestUploadAuthorizedFirst: an upload whose token is still to come in the
// form gets the short wait for it, not the upload timeout: a client that
// starts a form and stalls is let go in seconds, not held for an hour.
func TestUploadAuthorizedFirst(t *testing.T) {
	e := newEnv(t, Config{Token: "s3cret", UploadTimeout: time.Hour})
	e.server().authWait = 200 * time.Millisecond
	const form = "--b\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nx\r\n--b\r\nContent-Disposition: form-data; name=\"tok"
	res, _ := rawUpload(t, e, "Content-Type: multipart/form-data; boundary=b\r\n", 1<<20, 10*time.Second, func(c *net.TCPConn) {
		io.WriteString(c, form) // and nothing more
	})
	if res.StatusCode != http.StatusRequestTimeout {
		t.Errorf("stalled unauthorised form = %d; want 408", res.StatusCode)
	}
	// A wrong bearer token is refused before the body is read at all.
	res, body := rawUpload(t, e, "Authorization: Bearer wrong\r\n", 1<<20, 10*time.Second, func(*net.TCPConn) {})
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "wrong token") {
		t.Errorf("upload with a wrong token = %d %s; want 401 before any body", res.StatusCode, body)
	}
	// The form's token still works, and then the upload has its full time.
	b, ct := multipartBody(t, "token", "s3cret", "file", perfText(1, 30, 1))
	if res, b := e.do("POST", "/api/profiles", b, "Content-Type", ct); res.StatusCode != http.StatusCreated {
		t.Errorf("upload with the form's token: %d %s", res.StatusCode, b)
	}
}

// TestUploadMinRate: an upload slower than the minimum rate over a window
// ends with 408 and stores nothing; so does one that sends nothing.
func TestUploadMinRate(t *testing.T) {
	e := newEnv(t, Config{MinUploadRate: 10_000, RateWindow: 300 * time.Millisecond})
	text := perfText(1, 20, 1)
	res, body := rawUpload(t, e, "", len(text), 10*time.Second, func(c *net.TCPConn) {
		trickle(c, text, 10, 20*time.Millisecond) // 500 B/s
	})
	if res.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, "slower than 10000 B/s over 300ms") {
		t.Errorf("trickling upload = %d %s; want 408 naming the rate", res.StatusCode, body)
	}
	res, _ = rawUpload(t, e, "", len(text), 10*time.Second, func(*net.TCPConn) {})
	if res.StatusCode != http.StatusRequestTimeout {
		t.Errorf("silent upload = %d; want 408", res.StatusCode)
	}
	if n := e.count(); n != 0 {
		t.Errorf("store holds %d profiles after slow uploads; want 0", n)
	}
	// At a good pace the same upload, in pieces, is stored.
	res, body = rawUpload(t, e, "", len(text), 10*time.Second, func(c *net.TCPConn) {
		trickle(c, text, 8<<10, 20*time.Millisecond) // 400 KB/s
	})
	if res.StatusCode != http.StatusCreated {
		t.Errorf("upload at a good pace = %d %s; want 201", res.StatusCode, body)
	}
}

// TestUploadTimeout: an upload that keeps a good pace but takes longer
// than the upload timeout ends with 408 naming the limit.
func TestUploadTimeout(t *testing.T) {
	e := newEnv(t, Config{UploadTimeout: 300 * time.Millisecond, MinUploadRate: 1, RateWindow: time.Hour})
	text := perfText(1, 20, 1)
	res, body := rawUpload(t, e, "", len(text), 10*time.Second, func(c *net.TCPConn) {
		trickle(c, text, 100, 20*time.Millisecond)
	})
	if res.StatusCode != http.StatusRequestTimeout || !strings.Contains(body, "longer than its limit of 300ms") {
		t.Errorf("long upload = %d %s; want 408 naming the limit", res.StatusCode, body)
	}
}

// TestUploadBrokenOff: a body that ends before its declared length is the
// client's fault: 400, nothing stored.
func TestUploadBrokenOff(t *testing.T) {
	var logs logBuffer
	e := newEnv(t, Config{Logger: newLogger(&logs)})
	text := perfText(1, 20, 1)
	res, body := rawUpload(t, e, "", len(text)+1000, 10*time.Second, func(c *net.TCPConn) {
		io.WriteString(c, text)
		c.CloseWrite()
	})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "broke off") {
		t.Errorf("broken-off upload = %d %s; want 400", res.StatusCode, body)
	}
	if n := e.count(); n != 0 {
		t.Errorf("store holds %d profiles; want 0", n)
	}
	if l := logs.lines(t, 1); len(l) != 1 || l[0]["level"] != "INFO" {
		t.Errorf("log = %v; want one INFO line", l)
	}
}

// TestUploadsPerClient: a client may run UploadsPerClient uploads at once;
// beyond, 429 with Retry-After, while other clients still upload.
func TestUploadsPerClient(t *testing.T) {
	e := newEnv(t, Config{UploadsPerClient: 1, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	text := perfText(1, 20, 1)
	held := make(chan *http.Response, 1)
	release := make(chan struct{})
	go func() {
		res, _ := rawUpload(t, e, "", len(text), 20*time.Second, func(c *net.TCPConn) {
			io.WriteString(c, text[:100])
			<-release
			io.WriteString(c, text[100:])
		})
		held <- res
	}()
	s := e.server()
	waitFor(t, "the first upload to start", func() bool {
		s.uploads.mu.Lock()
		defer s.uploads.mu.Unlock()
		return s.uploads.n["127.0.0.1"] == 1
	})
	res, b := e.do("POST", "/api/profiles", strings.NewReader(text))
	wantError(t, res, b, http.StatusTooManyRequests, "1 uploads from your address")
	if res.Header.Get("Retry-After") == "" {
		t.Errorf("429 without Retry-After")
	}
	// Another client, behind the trusted proxy, is not held up.
	if res, b := e.do("POST", "/api/profiles", strings.NewReader(text), "X-Forwarded-For", "198.51.100.7"); res.StatusCode != http.StatusCreated {
		t.Errorf("upload from another client = %d %s; want 201", res.StatusCode, b)
	}
	close(release)
	if res := <-held; res.StatusCode != http.StatusOK {
		t.Errorf("held upload = %d; want 200 (the same capture as the other client's)", res.StatusCode)
	}
	// Its slot is free again.
	if res, b := e.do("POST", "/api/profiles", strings.NewReader(perfText(1, 30, 1))); res.StatusCode != http.StatusCreated {
		t.Errorf("upload after the first finished = %d %s; want 201", res.StatusCode, b)
	}
}

// fullStore stores uploads on a full disk: it writes them to /dev/full,
// which fails with the operating system's own ENOSPC.
type fullStore struct{ sqliteStore }

func (fullStore) Import(_ context.Context, r io.Reader, _ Upload) (*subsecond.Profile, bool, error) {
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	_, err = io.Copy(f, r)
	return nil, false, fmt.Errorf("stage upload: %w", err)
}

// TestUploadDiskFull: a full disk is 507 with a message that says so, and
// a warning in the log, not a 500 at ERROR that any client could repeat.
func TestUploadDiskFull(t *testing.T) {
	var logs logBuffer
	e := newEnv(t, Config{})
	srv := httptest.NewServer(New(Config{Store: fullStore{sqliteStore{e.st}}, Engine: countEngine{}, Logger: newLogger(&logs)}).Handler())
	defer srv.Close()
	e.srv = srv
	res, b := e.do("POST", "/api/profiles", strings.NewReader(perfText(1, 20, 1)))
	wantError(t, res, b, http.StatusInsufficientStorage, "disk is full")
	if l := logs.lines(t, 1); len(l) != 1 || l[0]["level"] != "WARN" || !strings.Contains(l[0]["err"].(string), "no space left") {
		t.Errorf("log = %v; want one WARN line naming ENOSPC", l)
	}
}

func zst(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(zw, s)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestUploadCorruptCompression: truncated or damaged gzip and zstd are the
// client's fault: 400 naming the problem, nothing stored, and no ERROR line
// (before, 500 "internal error" logged at ERROR, so anyone could fill the
// error log).
func TestUploadCorruptCompression(t *testing.T) {
	var logs logBuffer
	e := newEnv(t, Config{Logger: newLogger(&logs)})
	text := perfText(2, 100, 3)
	g, z := gz(t, text), zst(t, text)
	damaged := func(b []byte) []byte {
		b = bytes.Clone(b)
		for i := len(b) / 3; i < len(b)/3+64; i++ {
			b[i] ^= 0x5a
		}
		return b
	}
	for _, tc := range []struct {
		name string
		body []byte
		want string
	}{
		{"truncated gzip", g[:len(g)/2], "truncated gzip"},
		{"gzip without its trailer", g[:len(g)-4], "truncated gzip"},
		{"damaged gzip", damaged(g), "corrupt gzip"},
		{"truncated zstd", z[:len(z)/2], "truncated zstd"},
		{"damaged zstd", damaged(z), "corrupt zstd"},
	} {
		res, b := e.do("POST", "/api/profiles", bytes.NewReader(tc.body))
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: %d %s; want 400 naming %q", tc.name, res.StatusCode, b, tc.want)
		}
	}
	if n := e.count(); n != 0 {
		t.Errorf("store holds %d profiles; want 0", n)
	}
	for _, l := range logs.lines(t, 5) {
		if l["level"] == "ERROR" {
			t.Errorf("a client's corrupt upload logged at ERROR: %v", l)
		}
	}
}

// TestUploadDeclaredTooLarge: a body declared larger than the upload limit
// is refused before any of it is read: 413 naming the limit and its flag,
// at once, and to a client that asked to continue, instead of "100
// Continue".
func TestUploadDeclaredTooLarge(t *testing.T) {
	e := newEnv(t, Config{MaxUpload: 1 << 20})
	for name, hdr := range map[string]string{
		"plain":    "",
		"continue": "Expect: 100-continue\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			res, body := rawUpload(t, e, hdr, 3<<30, 5*time.Second, func(*net.TCPConn) {})
			if res.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("first answer to a declared 3 GiB = %d %s; want 413 (no 100 Continue)", res.StatusCode, body)
			}
			for _, want := range []string{"limit of 1048576 bytes", "--max-upload"} {
				if !strings.Contains(body, want) {
					t.Errorf("413 = %s; want it to name %q", body, want)
				}
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("413 after %s; want it at once, without the body", d)
			}
		})
	}
	// A declared size within the limit is asked for as before.
	text := perfText(1, 20, 1)
	res, body := rawUpload(t, e, "Expect: 100-continue\r\n", len(text), 5*time.Second, func(c *net.TCPConn) {
		io.WriteString(c, text)
	})
	if res.StatusCode != http.StatusContinue {
		t.Errorf("first answer to an upload within the limit = %d %s; want 100 Continue", res.StatusCode, body)
	}
}

// TestUploadTokenLast: with a token, a form is authorised before the
// server reads past its first authBound bytes: one whose token comes after
// a large field is refused with 401 having had at most authBound bytes
// read. The server's reads are counted at the pipe the body comes through.
func TestUploadTokenLast(t *testing.T) {
	e := newEnv(t, Config{Token: "s3cret"})
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		w, _ := mw.CreateFormField("comment")
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		for range 64 << 20 / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		if mw.WriteField("token", "s3cret") != nil {
			return
		}
		if w, err := mw.CreateFormFile("file", "capture.txt"); err == nil {
			io.WriteString(w, perfText(1, 20, 1))
		}
		pw.CloseWithError(mw.Close())
	}()
	body := &countingReader{r: pr}
	req := httptest.NewRequest("POST", "/api/profiles", body)
	req.Host = "localhost"
	req.Header.Set("Content-Type", mw.FormDataContentType())
	rec := httptest.NewRecorder()
	e.server().Handler().ServeHTTP(rec, req)
	pr.CloseWithError(io.ErrClosedPipe)
	read := body.n
	if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "token") {
		t.Errorf("form with its token after a 64 MiB field = %d %s; want 401", rec.Code, rec.Body)
	}
	if read > authBound {
		t.Errorf("server read %d bytes of the form before refusing it; want at most %d", read, authBound)
	}
	if n := e.count(); n != 0 {
		t.Errorf("store holds %d profiles; want 0", n)
	}
	// The page's form, name then token then file, is authorised by its
	// token field.
	b, ct := multipartBody(t, "name", "web-1", "token", "s3cret", "file", perfText(1, 30, 1))
	if res, b := e.do("POST", "/api/profiles", b, "Content-Type", ct); res.StatusCode != http.StatusCreated {
		t.Errorf("upload with name, token, file = %d %s; want 201", res.StatusCode, b)
	}
}
