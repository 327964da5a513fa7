package sqlite

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/zeebo/blake3"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/internal/synth"
	"github.com/subsecond/subsecond/migrations"
	"github.com/subsecond/subsecond/parser"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/store"
)

// gunzipFile returns the decompressed content of a gzip file.
func gunzipFile(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// parse reads text into a capture in one serial pass: the reference an
// upgraded profile must equal.
func parse(t *testing.T, text []byte) *subsecond.Capture {
	t.Helper()
	c, err := synth.Parse(text, parser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// views renders a capture's views as their JSON (and folded) bytes.
func views(t *testing.T, c *subsecond.Capture) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	add := func(name string, v any, err error) {
		if err != nil {
			out[name] = []byte("error: " + err.Error())
			return
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	g, err := heatmap.Offset(c, query.Filter{}, heatmap.Options{})
	add("heatmap", g, err)
	k, err := heatmap.PerCore(c, query.Filter{}, 0)
	add("cores", k, err)
	h, err := heatmap.Hotspots(c, query.Filter{}, heatmap.HotOptions{})
	add("hotspots", h, err)
	all := subsecond.Range{Start: c.Profile.T0(), End: c.Profile.End + 1}
	fg, err := flame.Build(c, query.Filter{Idle: true}, all)
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"json", "folded", "svg"} {
		var b bytes.Buffer
		if err := fg.Export(&b, format); err != nil {
			t.Fatal(err)
		}
		out["flame."+format] = b.Bytes()
	}
	return out
}

// TestUpgradeFromRows opens a database written before chunks (one row per
// sample; see testdata/README.md): every profile is converted, loses
// nothing, and draws every view byte for byte as the same input parsed
// afresh.
func TestUpgradeFromRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "rows.db")
	if err := os.WriteFile(path, gunzipFile(t, "testdata/rows.db.gz"), 0o644); err != nil {
		t.Fatal(err)
	}

	// The profiles as the old schema holds them.
	old, err := sql.Open("sqlite3", path+"?"+DSNParams)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		id, name, host, file, sha, meta string
		bytes, uploaded, start, end     int64
		samples                         int64
		warnings                        int
	}
	var before []row
	rows, err := old.Query(`SELECT id, name, host, file_name, sha256, metadata, bytes, uploaded_ns, start_ns, end_ns,
		samples, warnings FROM profiles ORDER BY pk`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.name, &r.host, &r.file, &r.sha, &r.meta, &r.bytes, &r.uploaded, &r.start, &r.end,
			&r.samples, &r.warnings); err != nil {
			t.Fatal(err)
		}
		before = append(before, r)
	}
	rows.Close()
	old.Close()
	if len(before) != 5 {
		t.Fatalf("test database holds %d profiles; want 5", len(before))
	}

	var progress []int64
	b, err := Open(ctx, path, Options{Progress: func(done, total int64) { progress = append(progress, done, total) }})
	if err != nil {
		t.Fatalf("Open of a row-per-sample database: %v", err)
	}
	defer b.Close()
	var total int64
	for _, r := range before {
		total += r.samples
	}
	if len(progress) != 2*len(before) || progress[len(progress)-2] != total || progress[len(progress)-1] != total {
		t.Errorf("progress = %v; want one call per profile, ending at %d of %d", progress, total, total)
	}
	for _, gone := range []string{"samples", "stack_nodes", "frames", "strings"} {
		var n int
		if err := b.db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = ?`, gone).Scan(&n); err != nil || n != 0 {
			t.Errorf("table %s still there after the upgrade (%d, %v)", gone, n, err)
		}
	}

	s := store.New(b, store.Options{})
	inputs := map[string][]byte{
		"small.perf":     gunzipFile(t, "testdata/small.perf.gz"),
		"odd.perf":       gunzipFile(t, "testdata/odd.perf.gz"),
		"bad.perf":       gunzipFile(t, "testdata/bad.perf.gz"),
		"generated.perf": gunzipFile(t, "testdata/generated.perf.gz"),
		"real":           gunzipFile(t, "../../sample-data/real-mixed-2cpu-5s.perf.txt.gz"),
	}
	for _, r := range before {
		p, err := s.Profile(ctx, r.id)
		if err != nil {
			t.Fatalf("profile %s after the upgrade: %v", r.name, err)
		}
		meta, _ := json.Marshal(p.Meta)
		if p.Name != r.name || p.Host != r.host || p.FileName != r.file || p.Digest != store.DigestSHA256+r.sha || string(meta) != r.meta ||
			p.Bytes != r.bytes || p.Uploaded.UnixNano() != r.uploaded || p.Start != r.start || p.End != r.end ||
			p.Samples != r.samples || p.Warnings != r.warnings {
			t.Errorf("profile %s after the upgrade = %+v; want %+v", r.name, p, r)
		}
		c, err := s.Capture(ctx, r.id)
		if err != nil {
			t.Fatalf("capture %s after the upgrade: %v", r.name, err)
		}
		want := parse(t, inputs[r.name])
		if !reflect.DeepEqual(c.Strings, want.Strings) || !reflect.DeepEqual(c.Frames, want.Frames) ||
			!reflect.DeepEqual(c.Nodes, want.Nodes) || !reflect.DeepEqual(c.Samples, want.Samples) {
			t.Errorf("capture %s after the upgrade differs from its input parsed afresh", r.name)
		}
		// The views read the profile's figures too: give the reference
		// the stored ones, which the comparison above checked.
		want.Profile = c.Profile
		got, ref := views(t, c), views(t, want)
		for name := range ref {
			if !bytes.Equal(got[name], ref[name]) {
				t.Errorf("%s of %s after the upgrade differs (%d bytes, want %d)", name, r.name, len(got[name]), len(ref[name]))
			}
		}
		sums, err := s.Summaries(ctx, r.id)
		if err != nil || len(sums) == 0 {
			t.Errorf("summaries of %s after the upgrade: %d, %v", r.name, len(sums), err)
		}
	}

	// Each text sent again is the profile stored from it before imports
	// hashed with BLAKE3, found by its SHA-256 (dedupe is exact across the
	// change); a new text is known by its BLAKE3 digest.
	for _, r := range before {
		p, existed, err := s.Import(ctx, bytes.NewReader(inputs[r.name]), store.ImportOptions{FileName: r.name})
		if err != nil || !existed || p.ID != r.id {
			t.Errorf("%s sent again: profile %v, existed %v, %v; want the stored %s", r.name, p, existed, err, r.id)
		}
	}
	text := bytes.ReplaceAll(inputs["real"], []byte("python3"), []byte("python4"))
	p, existed, err := s.Import(ctx, bytes.NewReader(text), store.ImportOptions{FileName: "new.perf"})
	if err != nil || existed || p.Digest != fmt.Sprintf("%s%x", store.DigestBLAKE3, blake3.Sum256(text)) {
		t.Fatalf("a new text: %+v, existed %v, %v; want a new profile known by its BLAKE3", p, existed, err)
	}
	if again, existed, err := s.Import(ctx, bytes.NewReader(text), store.ImportOptions{}); err != nil || !existed || again.ID != p.ID {
		t.Errorf("the new text sent again: %v, existed %v, %v; want %s", again, existed, err, p.ID)
	}
	if some, err := b.LegacyDigests(ctx); err != nil || !some {
		t.Errorf("LegacyDigests with the old profiles stored = %v, %v; want true", some, err)
	}
	for _, r := range before {
		if err := s.Delete(ctx, r.id); err != nil {
			t.Fatal(err)
		}
	}
	if some, err := b.LegacyDigests(ctx); err != nil || some {
		t.Errorf("LegacyDigests with the old profiles deleted = %v, %v; want false", some, err)
	}

	// Opening again converts nothing more.
	b.Close()
	progress = nil
	b2, err := Open(ctx, path, Options{Progress: func(done, total int64) { progress = append(progress, done) }})
	if err != nil {
		t.Fatal(err)
	}
	b2.Close()
	if progress != nil {
		t.Errorf("second Open reported conversion progress %v; want none", progress)
	}
}

// TestUpgradeFromFirstSchema builds a database at schema version 1 by hand
// (no event periods, no hosts) and opens it.
func TestUpgradeFromFirstSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite3", path+"?"+DSNParams)
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, migrations.SQLite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 1); err != nil {
		t.Fatalf("migrate to version 1: %v", err)
	}
	const id = "aaaaaaaaaaaaaaaaaaaaaaaaaa"
	_, err = db.Exec(`INSERT INTO profiles VALUES (1, ?, 'old', 'old.perf', 'abc123', 42, 1700000000000000000, '{"hostname":"h"}',
		1000, 1000, 2000, 2, 1, 49, 0)`, id)
	if err == nil {
		_, err = db.Exec(`INSERT INTO events VALUES (1, 0, 'cycles', 2);
			INSERT INTO strings VALUES (1, 1, 'main'), (1, 2, 'app');
			INSERT INTO frames VALUES (1, 0, 1, 2, 0, 4096, 2, 0);
			INSERT INTO stack_nodes VALUES (1, 1, 0, 0);
			INSERT INTO samples VALUES (1, 0, 0, 3, 10, 11, 2, 0, 1, 1), (1, 1000, 1, 3, 10, 11, 2, 0, 1, 1)`)
	}
	if err != nil {
		t.Fatalf("insert version-1 data: %v", err)
	}
	db.Close()

	s, err := OpenStore(ctx, path, store.Options{})
	if err != nil {
		t.Fatalf("Open of a version-1 database: %v", err)
	}
	defer s.Close()
	c, err := s.Capture(ctx, id)
	if err != nil {
		t.Fatalf("Capture of upgraded profile: %v", err)
	}
	if c.Profile.Name != "old" || c.Profile.Meta.Hostname != "h" || c.Profile.Host != "h" || c.Samples.Len() != 2 ||
		c.Samples.Time[1] != 2000 || c.Samples.Weight[0] != 1 || c.Strings[c.Frames[c.Nodes[c.Samples.Stack[0]].Frame].Symbol] != "main" {
		t.Errorf("upgraded capture = %+v; want the version-1 data", c)
	}
}

// TestEveryConnectionConfigured checks the DSN settings on several pooled
// connections held at once, not only on the first.
func TestEveryConnectionConfigured(t *testing.T) {
	ctx := context.Background()
	b, err := Open(ctx, filepath.Join(t.TempDir(), "c.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var conns []*sql.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 3 {
		c, err := b.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		var mode string
		var fk, busy, sync int
		for q, dst := range map[string]any{"PRAGMA journal_mode": &mode, "PRAGMA foreign_keys": &fk,
			"PRAGMA busy_timeout": &busy, "PRAGMA synchronous": &sync} {
			if err := c.QueryRowContext(ctx, q).Scan(dst); err != nil {
				t.Fatal(err)
			}
		}
		if mode != "wal" || fk != 1 || busy != 10000 || sync != 1 {
			t.Errorf("connection %d: journal_mode=%s foreign_keys=%d busy_timeout=%d synchronous=%d; want wal 1 10000 1",
				i, mode, fk, busy, sync)
		}
	}
}

// TestWriteAheadLogTruncated checks that an import's and a delete's
// write-ahead log is copied into the database file and truncated, so that
// the log does not keep the size of the largest import.
func TestWriteAheadLogTruncated(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	b, err := Open(ctx, path, Options{CheckpointDelay: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := store.New(b, store.Options{})
	var text strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&text, "app 1/1 [000] %d.%06d: 1000 cpu-clock:\n\t%x f%d+0x20 (/usr/bin/app)\n\n",
			100+i/1000, i%1000*1000, 0x400100+i%97, i%997)
	}
	before := fileSize(t, path)
	p, _, err := s.Import(ctx, strings.NewReader(text.String()), store.ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b.bg.Wait()
	if n := fileSize(t, path+"-wal"); n != 0 {
		t.Errorf("write-ahead log after an import: %d bytes; want 0", n)
	}
	if after := fileSize(t, path); after <= before {
		t.Errorf("database file %d bytes after the import, %d before; want the import in it", after, before)
	}
	if err := s.Delete(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	b.bg.Wait()
	if n := fileSize(t, path+"-wal"); n != 0 {
		t.Errorf("write-ahead log after a delete: %d bytes; want 0", n)
	}
}

// TestCheckpointDelayed checks that an import's checkpoint waits for its
// delay, so that it does not meet the upload's answer and the views asked
// for next, and that Close runs a pending one at once.
func TestCheckpointDelayed(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	b, err := Open(ctx, path, Options{CheckpointDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(b, store.Options{})
	text := "app 1/1 [000] 100.000000: 1000 cpu-clock:\n\t400100 main+0x20 (/usr/bin/app)\n\n"
	before := fileSize(t, path)
	if _, _, err := s.Import(ctx, strings.NewReader(text), store.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	// Run at once, as it was, the checkpoint is done within milliseconds.
	time.Sleep(300 * time.Millisecond)
	if n := fileSize(t, path+"-wal"); n == 0 {
		t.Errorf("write-ahead log 0.3 s after an import: empty; want the import in it until its checkpoint's delay")
	}
	if after := fileSize(t, path); after != before {
		t.Errorf("database file %d bytes 0.3 s after the import, %d before; want it untouched until the checkpoint", after, before)
	}
	closed := make(chan error, 1)
	go func() { closed <- b.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Close waited for the pending checkpoint's delay (an hour)")
	}
	if after := fileSize(t, path); after <= before {
		t.Errorf("database file %d bytes after Close, %d before the import; want the import in it", after, before)
	}
	if n := fileSize(t, path+"-wal"); n != 0 {
		t.Errorf("write-ahead log after Close: %d bytes; want 0", n)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
