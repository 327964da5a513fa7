// Package store keeps imported captures and answers every later question
// from them: a capture's text is parsed once, at import, and never read
// again. The import pipeline, the storage format and the capture cache live
// here and are the same for every database; a Backend (package
// store/sqlite, the embedded default, or store/postgres, for a team)
// stores the results.
//
//	b, err := sqlite.Open(ctx, "subsecond.db")
//	if err != nil { … }
//	s := store.New(b, store.Options{})
//	defer s.Close()
//	p, existed, err := s.Import(ctx, f, store.ImportOptions{FileName: "out.perf"})
//	c, err := s.Capture(ctx, p.ID) // columnar samples for heatmaps and flame graphs
//
// # Storage
//
// A profile is a row of metadata (subsecond.Profile), its interned tables
// (strings, frames and the stack prefix tree of subsecond.Capture, in a few
// compressed segments) and its samples as chunks: one row per second of
// the capture holding that second's samples column by column, each column
// encoded for its shape and the whole compressed (see encodeChunk), about
// 3.4 bytes a sample. A second is the chunk span because it is the widest
// column the views draw and the smallest a night's timeline needs: a 10 s
// window reads 10 or 11 chunks, a whole capture 120, and at 96 CPUs × 49 Hz
// a chunk holds ~4,700 samples, enough for its columns to compress well.
// Each chunk row also carries a summary (subsecond.ChunkSummary: samples,
// busy and system counts per CPU and per command) that views across many
// captures read instead of the samples.
//
// # Atomicity and concurrency
//
// An import parses and encodes everything before it touches the database,
// then writes the profile in one short transaction, so a profile becomes
// visible only when complete, a failed or killed import leaves nothing,
// and a slow upload never holds the database's single writer (SQLite)
// while its body trickles in: other imports and deletes wait at most for
// one commit. Duplicate content (the same SHA-256 of the text) is found
// before the write and, against a concurrent import of the same bytes, by
// the database's unique index at commit.
package store

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/lru"
	"github.com/subsecond/subsecond/query"
)

// Options configure a Store. Zero values mean the defaults.
type Options struct {
	// CacheSize is the byte budget of the capture cache (DefaultCacheSize).
	CacheSize int64
	// MaxText bounds an import's decompressed text in bytes
	// (DefaultMaxText); ImportOptions.MaxText overrides it per import.
	MaxText int64
	// MaxSamples bounds an import's samples (DefaultMaxSamples);
	// ImportOptions.MaxSamples overrides it per import.
	MaxSamples int64
	// MaxSecondSamples bounds the samples of one second of a capture
	// (DefaultMaxSecondSamples): an import holding more in one second is
	// refused, since no view could show that second. The server sets it to
	// what one view reads.
	MaxSecondSamples int64
	// Workers is the number of parse and encode goroutines of an import
	// (GOMAXPROCS − 1, at least 1) and of decoding goroutines of a load
	// (GOMAXPROCS). An import's reader, hasher and merger take most of a
	// core beside its parsers: on 2 cores a second parser of a real
	// capture cost a fifth more CPU time for no shorter an import.
	Workers int
	// SpillDir holds an import's encoded chunks beyond 64 MB until they
	// are written (os.TempDir()).
	SpillDir string
	// WarmLimit is the largest import, in samples, whose capture Import
	// puts in the cache, so that the first view after an upload reads
	// nothing back (DefaultWarmLimit); negative turns it off.
	WarmLimit int
	// BlockSize is the bytes of text per parse block (1 MiB); a block
	// extends to the next blank line, the end of a record.
	BlockSize int
	// MaxSeriesRead bounds the points of one kind of a host's series that
	// Series reads at once (DefaultMaxSeriesRead), counted from the
	// blocks' summaries before any is decoded.
	MaxSeriesRead int64
}

// DefaultMaxSeriesRead is the default of Options.MaxSeriesRead: 10 M
// points, 160 MB once decoded; a 12-hour night of a 96-CPU host's per-CPU
// share of one kind at one point a second is 4.1 M.
const DefaultMaxSeriesRead = 10_000_000

// DefaultWarmLimit is the default of Options.WarmLimit: about 200 MB of
// columns.
const DefaultWarmLimit = 5_000_000

// Store imports captures into a Backend and reads them back. Its methods
// are safe for concurrent use.
type Store struct {
	b             Backend
	opt           Options
	importWorkers int // an import's parse and encode goroutines (see Options.Workers)
	cache         *lru.Cache[string, *subsecond.Capture]
	tables        *lru.Cache[string, *subsecond.Capture] // CaptureWindow's: the tables alone, no samples
	// hits and misses count Capture's lookups in cache (CacheStats).
	hits, misses atomic.Int64
	legacy       legacyDigests // whether imports must hash with SHA-256 too
	// changes counts what this Store changed of what the fleet's views
	// read (Changes).
	changes atomic.Uint64
	ix      *indexer // the fleet index writes imports left running
}

// Changes returns how many times this Store has changed what the fleet's
// views read: a profile imported, renamed or deleted, a host's labels
// set, markers added, the fleet index pruned or rebuilt. A cache of their
// answers that saw the same number saw what this Store wrote since, but
// not what another process wrote to the same database.
func (s *Store) Changes() uint64 { return s.changes.Load() }

// New returns a Store over b, which it owns: Close closes b.
func New(b Backend, opt Options) *Store {
	if opt.CacheSize <= 0 {
		opt.CacheSize = DefaultCacheSize
	}
	if opt.MaxText <= 0 {
		opt.MaxText = DefaultMaxText
	}
	if opt.MaxSamples <= 0 {
		opt.MaxSamples = DefaultMaxSamples
	}
	if opt.MaxSecondSamples <= 0 {
		opt.MaxSecondSamples = DefaultMaxSecondSamples
	}
	importWorkers := opt.Workers
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
		importWorkers = max(1, opt.Workers-1)
	}
	if opt.WarmLimit == 0 {
		opt.WarmLimit = DefaultWarmLimit
	}
	if opt.BlockSize <= 0 {
		opt.BlockSize = blockSize
	}
	if opt.MaxSeriesRead <= 0 {
		opt.MaxSeriesRead = DefaultMaxSeriesRead
	}
	return &Store{b: guard{b}, opt: opt, importWorkers: importWorkers, ix: newIndexer(),
		cache: newCaptureCache(opt.CacheSize - opt.CacheSize/tablesShare), tables: newTablesCache(opt.CacheSize / tablesShare)}
}

// Close waits for the fleet index writes that imports left running (for
// at most closeWait, then it cancels them), then closes the backend.
func (s *Store) Close() error {
	s.ix.close()
	return s.b.Close()
}

// Ready checks that the database answers and that its schema is this
// build's (Backend.Ready); its errors wrap subsecond.ErrUnavailable.
func (s *Store) Ready(ctx context.Context) error { return s.b.Ready(ctx) }

// ImportOptions describe one import.
type ImportOptions struct {
	Name     string // display name; FileName when empty
	FileName string // original file name, "" for stdin or an unnamed upload
	Size     int64  // compressed bytes of the input when known, else 0
	Strict   bool   // fail on the first malformed record instead of skipping it
	// Host names the machine the capture was recorded on; when empty, the
	// capture's "# hostname", else subsecond.UnknownHost.
	Host string
	// Labels are set on the host (see Store.SetHostLabels) with the
	// profile, in its transaction.
	Labels []subsecond.Label
	// Boot is the Unix time in nanoseconds the host booted (the recorder
	// reads /proc/stat's btime), 0 when unknown: the fleet index derives
	// uptimes from it, or from the capture's clock when that counts from
	// boot.
	Boot int64
	// MaxText and MaxSamples, when positive, override the Store's limits
	// for this import.
	MaxText    int64
	MaxSamples int64
	// Progress, when set, is called from Import's goroutine as the import
	// proceeds, with the input bytes (as read from r, before
	// decompression) consumed so far.
	Progress func(read int64)
	// Pause, when set, is called by the import's reader before it hands
	// each block of text (about Options.BlockSize) to the parsers: a
	// server pauses its imports there while views wait, so that an upload
	// takes the cores the views leave.
	Pause func(ctx context.Context)
}

// Import reads a perf script capture from r (plain, gzip or zstd,
// recognised by content), stores it and returns its profile. If a profile
// with the same uncompressed content exists already, Import stores nothing
// and returns that profile with existed set.
//
// Input that is not perf script text (empty, binary, HTML, JSON) is refused
// with an error wrapping subsecond.ErrNotPerf; truncated or corrupt
// compressed input with one wrapping subsecond.ErrInvalid. Text past
// MaxText bytes, more than MaxSamples samples, more than
// subsecond.MaxEvents event names and a compressed stream inside
// compressed input are refused with errors wrapping subsecond.ErrTooLarge
// that name the limit. Malformed records are skipped and counted unless
// opt.Strict is set, in which case the first one fails the import.
// Nothing is stored unless Import returns a nil error. Errors name the
// input once, at their start: "import FILE: …", or with no file name, its
// display name or "the upload".
func (s *Store) Import(ctx context.Context, r io.Reader, opt ImportOptions) (p *subsecond.Profile, existed bool, err error) {
	name := cmp.Or(opt.FileName, opt.Name, "the upload")
	if opt.Host != "" {
		if err := query.CheckHost(opt.Host); err != nil {
			return nil, false, fmt.Errorf("import %s: %w", name, err)
		}
	}
	if err := checkLabels(opt.Labels); err != nil {
		return nil, false, fmt.Errorf("import %s: %w", name, err)
	}
	p, existed, err = s.importText(ctx, r, opt)
	if err != nil {
		return nil, false, fmt.Errorf("import %s: %w", name, err)
	}
	if !existed {
		s.changes.Add(1)
	}
	return p, existed, nil
}

func (s *Store) importText(ctx context.Context, r io.Reader, opt ImportOptions) (*subsecond.Profile, bool, error) {
	if opt.MaxText <= 0 {
		opt.MaxText = s.opt.MaxText
	}
	if opt.MaxSamples <= 0 {
		opt.MaxSamples = s.opt.MaxSamples
	}
	legacy, err := s.legacy.get(ctx, s.b)
	if err != nil {
		return nil, false, err
	}
	src, head, err := openSource(r, opt.MaxText, legacy)
	if err != nil {
		return nil, false, err
	}
	defer src.closer.Close()
	if err := sniff(head); err != nil {
		return nil, false, err
	}
	res, err := s.run(ctx, src, opt)
	if err != nil {
		return nil, false, err
	}
	indexing := false // the chunks are the fleet index's to release
	defer func() {
		if !indexing {
			res.chunks.release()
		}
	}()

	p := &subsecond.Profile{Name: opt.Name, Host: opt.Host, FileName: opt.FileName, Bytes: res.bytes, Meta: res.meta,
		Warnings: res.nwarn, WarningList: res.warns, Digest: res.digest}
	if p.Name == "" {
		p.Name = opt.FileName
	}
	res.stats.Fill(p)
	if p.Samples == 0 {
		msg := "no samples found"
		if len(res.warns) > 0 {
			msg += fmt.Sprintf("; line %d: %s", res.warns[0].Line, res.warns[0].Message)
		}
		return nil, false, fmt.Errorf("%w: %s", subsecond.ErrNotPerf, msg)
	}
	if span := p.End - p.Start; span > subsecond.MaxSpan {
		return nil, false, fmt.Errorf("the capture's samples span %s, from %s s to %s s on its clock, more than the %s a capture may span (its heatmap could never be drawn): a sample's time is probably wrong: %w",
			time.Duration(span).Round(time.Second), query.DisplaySeconds(p.Start), query.DisplaySeconds(p.End), time.Duration(subsecond.MaxSpan), subsecond.ErrInvalid)
	}
	for _, d := range []string{p.Digest, res.legacy} {
		if d == "" {
			continue
		}
		if old, err := s.b.ProfileByDigest(ctx, d); err == nil {
			return old, true, nil
		} else if !errors.Is(err, subsecond.ErrNotFound) {
			return nil, false, err
		}
	}

	roll, err := rollupOf(res.comms, len(p.Events), res.chunks)
	if err != nil {
		return nil, false, err
	}
	p.ID = newID()
	tx, err := s.b.Begin(ctx, p.ID)
	if err != nil {
		return nil, false, err
	}
	defer tx.Abort()
	// The chunks first: the segments may still be being encoded meanwhile.
	if err := res.chunks.each(func(batch []Chunk) error { return tx.WriteChunks(ctx, batch) }); err != nil {
		return nil, false, err
	}
	if err := tx.WriteSegments(ctx, res.Segments()); err != nil {
		return nil, false, err
	}
	p.Uploaded = time.Unix(0, time.Now().UnixNano()).UTC() // as stored: no monotonic reading
	err = tx.Commit(ctx, &Record{Profile: *p, Comms: encodeStrings(res.comms), Rollup: roll,
		Labels: opt.Labels, MaxLabels: subsecond.MaxLabels})
	if errors.Is(err, ErrDuplicate) { // the same bytes were stored meanwhile
		old, err := s.b.ProfileByDigest(ctx, p.Digest)
		if err != nil {
			return nil, false, err
		}
		return old, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	// The fleet index after the answer (see indexer.go).
	if Indexable(p) {
		indexing = true
		cp := *p
		s.indexLater(res, &cp, opt.Boot)
	}
	if res.warm != nil {
		s.cache.Put(p.ID, &subsecond.Capture{Profile: *p, Strings: res.tables.Strings, Frames: res.tables.Frames,
			Nodes: res.tables.Nodes, Samples: *res.warm})
	}
	return p, false, nil
}

// newID returns a random 128-bit profile ID in lower-case base32 (26
// characters).
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// List returns every stored profile, most recently imported first, with
// their event summaries (Profile.EventCount, and the event with most
// samples alone in Events) but without warning messages; Profile has every
// event.
func (s *Store) List(ctx context.Context) ([]subsecond.Profile, error) {
	list, err := s.b.List(ctx, ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list profiles: %w", err)
	}
	return list, nil
}

// Page returns a page of the profile list, as List summarises them: at
// most limit profiles (at least one) from the one after profile after
// (from the first when ""), and the ID of the page's last profile when
// more follow it, else "". An after that names no stored profile yields
// an error wrapping subsecond.ErrNotFound.
func (s *Store) Page(ctx context.Context, limit int, after string) (list []subsecond.Profile, next string, err error) {
	limit = max(limit, 1)
	list, err = s.b.List(ctx, ListOptions{Limit: limit + 1, After: after})
	if err != nil {
		return nil, "", fmt.Errorf("list profiles: %w", err)
	}
	if len(list) > limit {
		list = list[:limit]
		next = list[limit-1].ID
	}
	return list, next, nil
}

// Profile returns the stored profile id with its events and first warning
// messages. An unknown id yields an error wrapping subsecond.ErrNotFound.
func (s *Store) Profile(ctx context.Context, id string) (*subsecond.Profile, error) {
	p, err := s.b.Profile(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("profile %q: %w", id, err)
	}
	return p, nil
}

// MaxNameLen bounds a profile's name in bytes.
const MaxNameLen = 200

// Rename sets profile id's name, in one transaction. An unknown id yields
// an error wrapping subsecond.ErrNotFound; a name longer than MaxNameLen
// bytes, not UTF-8 or holding control characters, one wrapping
// subsecond.ErrInvalid.
func (s *Store) Rename(ctx context.Context, id, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	err := s.b.Rename(ctx, id, name)
	s.changes.Add(1)
	if err != nil {
		return fmt.Errorf("rename profile %q: %w", id, err)
	}
	// A cached capture carries the old name: read it anew when asked.
	s.cache.Remove(id)
	return nil
}

// checkName reports whether name can name a profile.
func checkName(name string) error {
	if len(name) > MaxNameLen {
		return query.Invalidf("name", "%d bytes is longer than the %d a name may have", len(name), MaxNameLen)
	}
	if !utf8.ValidString(name) {
		return query.Invalidf("name", "the name is not UTF-8 text")
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return query.Invalidf("name", "the name holds a control character (%U)", r)
		}
	}
	return nil
}

// Delete removes profile id and everything stored with it. An unknown id
// yields an error wrapping subsecond.ErrNotFound.
func (s *Store) Delete(ctx context.Context, id string) error {
	err := s.b.Delete(ctx, id)
	s.changes.Add(1)
	if err != nil {
		return fmt.Errorf("delete profile %q: %w", id, err)
	}
	s.cache.Remove(id)
	s.tables.Remove(id)
	return nil
}

// Capture returns profile id's samples in columnar form, sorted by time
// (input order among equal times), with the strings, frames and stack tree
// exactly as the import interned them. Captures are cached within
// Options.CacheSize bytes, and Import caches the capture it has just
// stored (see Options.WarmLimit), so the first request after an upload
// reads nothing back; the result is shared and must not be modified. An
// unknown id, or one deleted meanwhile through another process, yields an
// error wrapping subsecond.ErrNotFound.
func (s *Store) Capture(ctx context.Context, id string) (*subsecond.Capture, error) {
	c, hit, err := s.cache.Get(ctx, id, func(ctx context.Context) (*subsecond.Capture, error) { return s.load(ctx, id) })
	if err == nil {
		s.countLookup(hit)
	}
	if err == nil && hit {
		var ok bool
		if ok, err = s.b.Exists(ctx, id); err == nil && !ok {
			s.cache.Remove(id)
			err = subsecond.ErrNotFound
		}
	}
	if err != nil {
		return nil, fmt.Errorf("profile %q: %w", id, err)
	}
	return c, nil
}

// CachedCapture returns profile id's capture and true when the capture
// cache holds it, after checking, as Capture does, that it is still
// stored; false, and no error, when the cache does not hold it, which it
// never loads. A view of a cached capture need not read its profile first:
// the capture's Profile says all that a query is resolved against.
func (s *Store) CachedCapture(ctx context.Context, id string) (*subsecond.Capture, bool, error) {
	c, ok := s.cache.Peek(id)
	if !ok {
		return nil, false, nil
	}
	s.countLookup(true)
	ok, err := s.b.Exists(ctx, id)
	if err == nil && !ok {
		s.cache.Remove(id)
		err = subsecond.ErrNotFound
	}
	if err != nil {
		return nil, false, fmt.Errorf("profile %q: %w", id, err)
	}
	return c, true, nil
}

// load reads and decodes a whole capture, its chunks on every core.
func (s *Store) load(ctx context.Context, id string) (*subsecond.Capture, error) {
	st, err := s.b.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	c := &subsecond.Capture{Profile: st.Profile}
	if err := decodeSegments(st.Segments, c); err != nil {
		return nil, err
	}
	cols, err := s.decodeChunks(ctx, st.Chunks, tableLimits(c), c.Profile.Samples)
	if err != nil {
		return nil, err
	}
	c.Samples = cols
	return c, nil
}

// CaptureWindow returns profile id's capture holding at least the samples
// of the whole seconds that r (half-open, in the capture's own clock)
// overlaps, which its caller finds with Capture.Window: the capture cache's
// copy when it holds one (sliced, it costs nothing), else the capture's
// tables and the samples decoded from those seconds' chunks alone. It
// loads nothing into the capture cache: the night's hot spots look at a
// few seconds of one CPU in each of many captures, where loading each
// whole capture (and evicting others for it) costs a hundred times more.
// The tables, which an explanation or a host's moves would otherwise
// decode again for each of the tens of windows they read of a capture,
// are kept in a cache of their own (a sixteenth of Options.CacheSize), and
// windows of one profile share them.
func (s *Store) CaptureWindow(ctx context.Context, id string, r subsecond.Range) (*subsecond.Capture, error) {
	if c, ok, err := s.CachedCapture(ctx, id); err != nil || ok {
		return c, err
	}
	from, to := chunkSeconds(r)
	t, kept := s.tables.Peek(id)
	var st *Stored
	var err error
	if kept {
		st, err = s.b.Chunks(ctx, id, from, to, true)
	} else {
		st, err = s.b.LoadWindow(ctx, id, from, to)
	}
	if err != nil {
		return nil, fmt.Errorf("profile %q: %w", id, err)
	}
	c := &subsecond.Capture{Profile: st.Profile}
	if kept {
		c.Strings, c.Frames, c.Nodes = t.Strings, t.Frames, t.Nodes
		c.Profile.WarningList = t.Profile.WarningList // which Chunks leaves out
	} else {
		if err := decodeSegments(st.Segments, c); err != nil {
			return nil, fmt.Errorf("profile %q: %w", id, err)
		}
		s.tables.Put(id, &subsecond.Capture{Profile: c.Profile, Strings: c.Strings, Frames: c.Frames, Nodes: c.Nodes})
	}
	if c.Samples, err = s.decodeAll(ctx, st.Chunks, tableLimits(c)); err != nil {
		return nil, fmt.Errorf("window of %s: %w", id, err)
	}
	return c, nil
}

// WindowSamples returns how many samples profile id holds in the whole
// seconds that r (half-open, in the capture's own clock) overlaps, the
// samples CaptureWindow would decode, counted from the chunks' rows
// without reading their data.
func (s *Store) WindowSamples(ctx context.Context, id string, r subsecond.Range) (int64, error) {
	from, to := chunkSeconds(r)
	st, err := s.b.Chunks(ctx, id, from, to, false)
	if err != nil {
		return 0, fmt.Errorf("profile %q: %w", id, err)
	}
	var n int64
	for _, ch := range st.Chunks {
		n += int64(ch.Samples)
	}
	return n, nil
}

// chunkSeconds returns the first and last chunk seconds that r overlaps;
// from > to when r is empty.
func chunkSeconds(r subsecond.Range) (from, to int64) {
	if r.Empty() {
		return 1, 0
	}
	return chunkSecond(r.Start), chunkSecond(r.End - 1)
}

// decodeAll decodes chunks (a window of a capture), however many samples
// they hold, as decodeChunks does.
func (s *Store) decodeAll(ctx context.Context, chunks []Chunk, lim limits) (subsecond.Columns, error) {
	var n int64
	for _, ch := range chunks {
		n += int64(ch.Samples)
	}
	return s.decodeChunks(ctx, chunks, lim, n)
}

// decodeChunks decodes chunks, sorted by (Second, Seq), into one set of
// columns in capture order, in parallel. want is the sample count the
// profile records; the chunks must hold exactly that many.
func (s *Store) decodeChunks(ctx context.Context, chunks []Chunk, lim limits, want int64) (subsecond.Columns, error) {
	var total int64
	for _, ch := range chunks {
		if ch.Samples < 0 || ch.Samples > maxChunkSamples {
			return subsecond.Columns{}, fmt.Errorf("%w: chunk of %d samples", errCorrupt, ch.Samples)
		}
		total += int64(ch.Samples)
	}
	if total != want {
		return subsecond.Columns{}, fmt.Errorf("%w: chunks hold %d samples, the profile %d", errCorrupt, total, want)
	}
	out := subsecond.MakeColumns(int(total))
	out.Resize(out.Len() + int(total))

	// One run of consecutive chunks per worker, of about equal samples,
	// each decoded into its place in out.
	type run struct{ lo, hi, at int } // chunks [lo, hi), the first's first sample at
	var runs []run
	per := total/int64(s.opt.Workers) + 1
	at, lo := 0, 0
	var acc int64
	for i := range chunks {
		acc += int64(chunks[i].Samples)
		if acc >= per || i+1 == len(chunks) {
			runs = append(runs, run{lo, i + 1, at})
			at += int(acc)
			lo, acc = i+1, 0
		}
	}
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	for k, r := range runs {
		wg.Go(func() {
			var buf []byte
			pos := r.at
			for i := r.lo; i < r.hi; i++ {
				if err := ctx.Err(); err != nil {
					errs[k] = err
					return
				}
				ch := &chunks[i]
				n := int(ch.Samples)
				dst := out.Slice(pos, pos, pos+n)
				var err error
				if buf, err = decodeChunk(ch.Data, &dst, lim, buf); err != nil {
					errs[k] = fmt.Errorf("chunk %d/%d: %w", ch.Second, ch.Seq, err)
					return
				}
				if dst.Len() != n || (n > 0 && &dst.Time[0] != &out.Time[pos]) {
					errs[k] = fmt.Errorf("chunk %d/%d: %w: holds %d samples, not %d", ch.Second, ch.Seq, errCorrupt, dst.Len(), n)
					return
				}
				pos += n
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return subsecond.Columns{}, err
	}
	secs := make([]span, len(chunks))
	for i, ch := range chunks {
		secs[i] = span{ch.Second, int(ch.Samples)}
	}
	sortSeconds(&out, secs)
	return out, nil
}

// Window returns the samples of profile id whose time lies in r (half-open,
// absolute nanoseconds), on the given CPUs (all when cpus is empty), sorted
// by time, reading only the chunks that overlap r. Comm and Stack index the
// tables of the profile's Capture.
func (s *Store) Window(ctx context.Context, id string, r subsecond.Range, cpus []int32) (subsecond.Columns, error) {
	// The chunks' stacks are coded from the profile's stack nodes: read
	// with its tables, as CaptureWindow reads them.
	c, err := s.CaptureWindow(ctx, id, r)
	if err != nil {
		return subsecond.Columns{}, err
	}
	all := c.Samples
	// The chunks' samples are in time order: r is one run of them.
	lo, _ := slices.BinarySearch(all.Time, r.Start)
	hi, _ := slices.BinarySearch(all.Time, r.End)
	hi = max(lo, hi)
	if len(cpus) == 0 {
		return all.Slice(lo, hi, hi), nil
	}
	want := map[int32]bool{}
	for _, c := range cpus {
		want[c] = true
	}
	out := subsecond.MakeColumns(0)
	for i := lo; i < hi; {
		j := i
		for j < hi && want[all.CPU[j]] {
			j++
		}
		out.AppendRange(&all, i, j)
		for i = j; i < hi && !want[all.CPU[i]]; i++ {
		}
	}
	return out, nil
}

// Summaries returns profile id's chunk summaries, one per second with
// samples, in time order (the samples without a time, if any, first, with
// Start subsecond.NoTime). They are read without decoding samples.
func (s *Store) Summaries(ctx context.Context, id string) ([]subsecond.ChunkSummary, error) {
	st, err := s.b.Chunks(ctx, id, math.MinInt64, math.MaxInt64, false)
	if err != nil {
		return nil, fmt.Errorf("summaries of %s: %w", id, err)
	}
	comms, err := decodeStrings(st.Comms)
	if err != nil {
		return nil, fmt.Errorf("summaries of %s: %w", id, err)
	}
	m := newSummaryMerger(comms, len(st.Profile.Events), len(st.Chunks))
	for i, ch := range st.Chunks {
		start := ch.Second * subsecond.ChunkSpan
		if ch.Second == chunkSecond(subsecond.NoTime) {
			start = subsecond.NoTime
		}
		if err := m.add(start, ch.Summary, len(st.Chunks)-i-1); err != nil {
			return nil, fmt.Errorf("summaries of %s: chunk %d/%d: %w", id, ch.Second, ch.Seq, err)
		}
	}
	return m.summaries(), nil
}
