package store

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/decompress"
	"github.com/subsecond/subsecond/parser"
)

// ImportOptions describe one import.
type ImportOptions struct {
	Name     string // display name; FileName when empty
	FileName string // original file name, "" for stdin or an unnamed upload
	Size     int64  // compressed bytes of the input when known, else 0
	Strict   bool   // fail on the first malformed record instead of skipping it
	// Host names the machine the capture was recorded on; when empty, the
	// capture's "# hostname", else subsecond.UnknownHost.
	Host string
	// Progress, when set, is called from Import's goroutine after each batch
	// of samples is stored, with the input bytes (as read from r, before
	// decompression) consumed so far.
	Progress func(read int64)
}

// batchSamples is the number of samples handed from the parsing goroutine
// to the inserting one at a time. Three batches are in flight at most.
const batchSamples = 8192

// sampleCols is the number of columns of a samples row after the profile.
const sampleCols = 9

// batch is a slice of parsed samples plus the strings, frames and stack
// nodes first seen in them.
type batch struct {
	rows      []int64 // sampleCols per sample: t, seq, cpu, pid, tid, comm, event, weight, stack (as stored)
	strBase   int
	strs      []string
	frameBase int
	frames    []subsecond.FrameRec
	nodeBase  int
	nodes     []subsecond.StackNode
	read      int64
}

// parseResult is what the parsing goroutine knows at the end.
type parseResult struct {
	err      error
	base     int64
	stats    *subsecond.Stats
	meta     subsecond.Metadata
	warnings int
	first    []subsecond.Warning
	bytes    int64
	sum      []byte
	periods  []uint64 // per event: the period of its first sample
	tables   *subsecond.Interner
}

// Import reads a perf script capture from r (plain, gzip or zstd), stores
// it and returns its profile. If a profile with the same uncompressed
// content exists already, Import stores nothing and returns that profile
// with existed set.
//
// Input that is not perf script text (empty, binary, HTML, JSON) is refused
// with an error wrapping subsecond.ErrNotPerf. Malformed records are skipped
// and counted unless opt.Strict is set, in which case the first one fails
// the import. Nothing is stored unless Import returns a nil error.
func (s *Store) Import(ctx context.Context, r io.Reader, opt ImportOptions) (p *subsecond.Profile, existed bool, err error) {
	name := opt.FileName
	if name == "" {
		name = "input"
	}
	if opt.Host != "" {
		if err := subsecond.CheckHost(opt.Host); err != nil {
			return nil, false, fmt.Errorf("import %s: %w", name, err)
		}
	}
	cr := &countingReader{r: r}
	dr, err := decompress.NewReader(cr)
	if err != nil {
		return nil, false, fmt.Errorf("import %s: %w", name, err)
	}
	defer dr.Close()
	br := bufio.NewReaderSize(dr, 64<<10)
	head, err := br.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, false, fmt.Errorf("import %s: %w", name, err)
	}
	if err := sniff(head); err != nil {
		return nil, false, fmt.Errorf("import %s: %w", name, err)
	}

	if err := s.lockWrite(ctx); err != nil {
		return nil, false, fmt.Errorf("import %s: %w", name, err)
	}
	defer s.unlockWrite()

	// The bulk inserts go through the driver connection underneath the
	// transaction (see writer), so the transaction is pinned to one
	// connection.
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("import %s: %w", name, err)
	}
	defer conn.Close()
	// The import's commit leaves the write-ahead log alone: checkpointing
	// it there would copy the whole import into the database file and sync
	// it (50-100 ms for the 96-CPU capture) before the upload is answered.
	// checkpointLater does it after Import has returned.
	if err := setAutoCheckpoint(ctx, conn, 0); err != nil {
		return nil, false, fmt.Errorf("import %s: %w", name, err)
	}
	defer setAutoCheckpoint(context.Background(), conn, autoCheckpoint)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return nil, false, fmt.Errorf("import %s: %w", name, err)
	}
	defer tx.Rollback()

	id := newID()
	res, err := tx.ExecContext(ctx, `INSERT INTO profiles (id, name, file_name, sha256, bytes, uploaded_ns, metadata,
		time_base, start_ns, end_ns, samples, cpus, frequency_hz, warnings)
		VALUES (?, '', '', ?, 0, 0, '{}', 0, 0, 0, 0, 0, 0, 0)`, id, "pending:"+id)
	if err != nil {
		return nil, false, fmt.Errorf("import %s: %w", name, err)
	}
	pk, err := res.LastInsertId()
	if err != nil {
		return nil, false, fmt.Errorf("import %s: %w", name, err)
	}
	hr := newHashingReader(br)
	defer hr.Close()
	full := make(chan *batch, 2)
	free := make(chan *batch, 3)
	for range 3 {
		free <- &batch{rows: make([]int64, 0, batchSamples*sampleCols)}
	}
	stop := make(chan struct{})
	done := make(chan parseResult, 1)
	warm := newWarmCapture(s.warmLimit)
	go func() {
		done <- parseInput(hr, cr, opt.Strict, full, free, stop)
	}()

	werr := conn.Raw(func(dc any) error {
		var err error
		w, ok := (*writer)(nil), false
		if sc, isSQLite := dc.(*sqlite3.SQLiteConn); !isSQLite {
			err = fmt.Errorf("unexpected driver connection %T", dc)
		} else if w, err = newWriter(sc, pk, !s.driverOnly); err == nil {
			ok = true
			defer w.close()
		}
		if err != nil {
			close(stop)
		}
		for b := range full { // drained to the end so the parser never blocks
			if ok {
				if err = w.write(ctx, b); err == nil {
					warm.add(b.rows)
					if opt.Progress != nil {
						opt.Progress(b.read)
					}
				}
				if err != nil {
					ok = false
					close(stop) // the parser stops at its next send
				}
			}
			free <- b
		}
		return err
	})
	pr := <-done
	if werr != nil {
		return nil, false, fmt.Errorf("import %s: %w", name, werr)
	}
	if pr.err != nil {
		return nil, false, fmt.Errorf("import %s: %w", name, pr.err)
	}
	if err := ctx.Err(); err != nil {
		return nil, false, fmt.Errorf("import %s: %w", name, err)
	}

	p = &subsecond.Profile{ID: id, Name: opt.Name, Host: opt.Host, FileName: opt.FileName, Bytes: pr.bytes, Meta: pr.meta,
		Warnings: pr.warnings, WarningList: pr.first, SHA256: hex.EncodeToString(pr.sum)}
	if p.Name == "" {
		p.Name = opt.FileName
	}
	pr.stats.Fill(p)
	if p.Samples == 0 {
		msg := "no samples found"
		if len(pr.first) > 0 {
			msg += fmt.Sprintf("; line %d: %s", pr.first[0].Line, pr.first[0].Message)
		}
		return nil, false, fmt.Errorf("import %s: %w: %s", name, subsecond.ErrNotPerf, msg)
	}

	var existing string
	err = tx.QueryRowContext(ctx, `SELECT id FROM profiles WHERE sha256 = ?`, p.SHA256).Scan(&existing)
	switch {
	case err == nil:
		tx.Rollback()
		old, err := s.Profile(ctx, existing)
		if err != nil {
			return nil, false, fmt.Errorf("import %s: %w", name, err)
		}
		return old, true, nil
	case !errors.Is(err, sql.ErrNoRows):
		return nil, false, fmt.Errorf("import %s: %w", name, err)
	}

	if err := finish(ctx, tx, pk, p, pr.base, pr.periods); err != nil {
		if isConstraint(err) { // another process stored the same bytes meanwhile
			tx.Rollback()
			if old, err := s.profileBySHA(ctx, p.SHA256); err == nil {
				return old, true, nil
			}
		}
		return nil, false, fmt.Errorf("import %s: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, false, fmt.Errorf("import %s: %w", name, err)
	}
	s.warmCache(ctx, id, pr, warm)
	s.checkpointLater()
	return p, false, nil
}

// autoCheckpoint is SQLite's default size of the write-ahead log, in
// pages, from which a commit checkpoints it.
const autoCheckpoint = 1000

// setAutoCheckpoint sets the import connection's automatic checkpoint
// threshold. Should restoring the default fail, the connection is
// discarded rather than returned to the pool without it.
func setAutoCheckpoint(ctx context.Context, conn *sql.Conn, pages int) error {
	_, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA wal_autocheckpoint = %d", pages))
	if err != nil && pages == autoCheckpoint {
		conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	return err
}

// checkpointLater copies the write-ahead log into the database file in the
// background, without waiting for readers or writers (a passive
// checkpoint); Close waits for it. A failure costs nothing but a longer
// log, which the next commit over the threshold checkpoints.
func (s *Store) checkpointLater() {
	s.bg.Go(func() {
		s.db.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)")
	})
}

// warmCache puts the capture just imported into the capture cache, built
// from the import's own tables and columns, so that the first Capture after
// an upload reads nothing from SQLite. The profile is read back as
// loadCapture reads it. Nothing is cached when the import was too large to
// collect (see warmLimit) or the profile cannot be read.
func (s *Store) warmCache(ctx context.Context, id string, pr parseResult, warm *warmCapture) {
	cols := warm.capture(pr.base, pr.periods)
	if cols == nil {
		return
	}
	p, err := s.Profile(ctx, id)
	if err != nil || p.Samples != int64(cols.Len()) {
		return
	}
	in := pr.tables
	s.cache.put(id, &subsecond.Capture{Profile: *p, Strings: in.Strings, Frames: in.Frames, Nodes: in.Nodes, Samples: *cols})
}

// parseInput runs in its own goroutine: it scans r, interns what it finds
// and sends batches of sample rows on full, taking empty ones from free.
// It closes full when done and stops early when stop is closed.
func parseInput(hr *hashingReader, cr *countingReader, strict bool, full, free chan *batch, stop chan struct{}) parseResult {
	defer close(full)
	sc := parser.NewScanner(hr, parser.Options{Strict: strict})
	in := subsecond.NewInterner()
	stacks := newStackCache(in)
	stats := subsecond.NewStats()
	res := parseResult{base: subsecond.NoTime, stats: stats}
	var sent struct{ strs, frames, nodes int }
	sent.strs, sent.nodes = 1, 1 // "" and the root are implied

	var b *batch
	send := func() bool {
		b.strBase, b.strs = sent.strs, in.Strings[sent.strs:]
		b.frameBase, b.frames = sent.frames, in.Frames[sent.frames:]
		b.nodeBase, b.nodes = sent.nodes, in.Nodes[sent.nodes:]
		sent.strs, sent.frames, sent.nodes = len(in.Strings), len(in.Frames), len(in.Nodes)
		b.read = cr.n.Load()
		select {
		case full <- b:
			b = nil
			return true
		case <-stop:
			return false
		}
	}
	// take gets an empty batch from free; false means stop was closed.
	take := func() bool {
		select {
		case b = <-free:
			b.rows = b.rows[:0]
			return true
		case <-stop:
			return false
		}
	}
	var seqs seqCounter
	for sc.Scan() {
		if b == nil && !take() {
			res.err = errors.New("stopped")
			return res
		}
		smp := sc.Sample()
		ev := stats.Add(smp)
		t := smp.Time
		if t != subsecond.NoTime {
			if res.base == subsecond.NoTime {
				res.base = t
			}
			t -= res.base
		}
		wt := smp.Period
		if wt == 0 {
			wt = 1
		}
		if int(ev) == len(res.periods) {
			res.periods = append(res.periods, wt)
		}
		if wt == res.periods[ev] {
			wt = 0 // stored as "the event's period", in no bytes
		}
		b.rows = append(b.rows, t, seqs.next(t), int64(smp.CPU), int64(smp.PID), int64(smp.TID),
			int64(in.String(smp.Comm)), int64(ev), int64(wt), int64(stacks.stack(smp.Frames, sc.FrameIDs())))
		if len(b.rows) == cap(b.rows) && !send() {
			res.err = errors.New("stopped")
			return res
		}
	}
	if err := sc.Err(); err != nil {
		res.err = err
		return res
	}
	if (b == nil && !take()) || !send() {
		res.err = errors.New("stopped")
		return res
	}
	if res.base == subsecond.NoTime {
		res.base = 0
	}
	res.meta = sc.Metadata()
	res.warnings, res.first = sc.Warnings()
	res.bytes, res.sum = hr.n, hr.sum
	res.tables = in
	return res
}

// seqCounter numbers samples for the samples table's key (profile, t,
// seq): seq must keep samples with equal times distinct and in input order,
// and should be small, since it is stored in every row. Within a sliding
// window of recent times it counts samples per time, so nearly every seq is
// 0 and costs no bytes; a sample whose time has fallen out of the window
// (input far out of order, or without a time) gets farSeq plus its ordinal,
// larger than any count and than every earlier fallback. The window keeps
// memory bounded by the sampling rate, not the input size.
//
// perf script prints samples in time order, so the counts of times first
// seen as a new latest time are kept in a slice in increasing time order,
// where the next sample finds its time at the end; only times first seen
// out of order go into a map.
type seqCounter struct {
	inOrder []seqCount // times first seen as the latest, increasing, from head on
	head    int
	recent  map[int64]int64 // times first seen out of order
	latest  int64
	started bool
	n       int64
}

type seqCount struct{ t, n int64 }

const (
	seqWindow = int64(time.Second)
	farSeq    = int64(1) << 40
	sweepMask = 1<<14 - 1
)

func (c *seqCounter) next(t int64) int64 {
	c.n++
	if t == subsecond.NoTime {
		return farSeq + c.n
	}
	if !c.started {
		c.started, c.latest, c.recent = true, t, map[int64]int64{}
		c.inOrder = append(c.inOrder, seqCount{t: t})
	}
	if t > c.latest {
		c.latest = t
		c.inOrder = append(c.inOrder, seqCount{t: t, n: 1})
		c.dropOld()
		return 0
	}
	if t < c.latest-seqWindow {
		return farSeq + c.n
	}
	if c.n&sweepMask == 0 {
		for k := range c.recent {
			if k < c.latest-seqWindow {
				delete(c.recent, k)
			}
		}
	}
	var count *int64
	live := c.inOrder[c.head:]
	if last := &live[len(live)-1]; last.t == t {
		count = &last.n
	} else if i, ok := slices.BinarySearchFunc(live, t, func(e seqCount, t int64) int { return cmp.Compare(e.t, t) }); ok {
		count = &live[i].n
	}
	if count == nil {
		s := c.recent[t]
		if s >= farSeq>>1 {
			return farSeq + c.n
		}
		c.recent[t] = s + 1
		return s
	}
	s := *count
	if s >= farSeq>>1 {
		return farSeq + c.n
	}
	*count = s + 1
	return s
}

// dropOld forgets in-order times that have fallen out of the window.
func (c *seqCounter) dropOld() {
	for c.inOrder[c.head].t < c.latest-seqWindow {
		c.head++
	}
	if c.head >= 1024 && c.head >= len(c.inOrder)/2 {
		c.inOrder = append(c.inOrder[:0], c.inOrder[c.head:]...)
		c.head = 0
	}
}

// stackCache puts a fast path in front of Interner.Stack. Interning a
// stack frame by frame costs several map lookups per frame; here a frame is
// found through the parser's dense frame ID (plus the fields the ID does not
// cover) and a whole stack through one lookup of its frame indexes. Misses
// go to the Interner, so the indexes are exactly the ones it assigns.
type stackCache struct {
	in     *subsecond.Interner
	byID   [][]frameEntry // by parser frame ID
	stacks map[string]int32
	key    []byte
}

// frameEntry is one interned frame among those sharing a parser frame ID.
type frameEntry struct {
	addr uint64
	src  string
	kind subsecond.FrameKind
	idx  int32
}

// maxPerID bounds the frames remembered per parser frame ID (one text at
// many addresses, as a shared library mapped at different bases).
const maxPerID = 8

func newStackCache(in *subsecond.Interner) *stackCache {
	return &stackCache{in: in, stacks: map[string]int32{}}
}

// stack returns the Interner's node for frames (leaf-first); ids are the
// parser's frame IDs, parallel to frames, or nil.
func (c *stackCache) stack(frames []subsecond.Frame, ids []uint32) int32 {
	if len(frames) == 0 {
		return 0
	}
	if len(ids) != len(frames) {
		return c.in.Stack(frames)
	}
	key := c.key[:0]
	for i := len(frames) - 1; i >= 0; i-- { // root-first, the order in which the Interner adds frames
		key = binary.LittleEndian.AppendUint32(key, uint32(c.frame(&frames[i], ids[i])))
	}
	c.key = key
	if n, ok := c.stacks[string(key)]; ok {
		return n
	}
	n := c.in.Stack(frames)
	c.stacks[string(key)] = n
	return n
}

// frame returns the Interner's index of f, whose parser frame ID is id.
func (c *stackCache) frame(f *subsecond.Frame, id uint32) int32 {
	if int(id) >= len(c.byID) {
		if id > 1<<24 {
			return c.in.Frame(f)
		}
		c.byID = append(c.byID, make([][]frameEntry, int(id)+1-len(c.byID))...)
	}
	list := c.byID[id]
	for _, e := range list {
		if e.addr == f.Addr && e.kind == f.Kind && e.src == f.SrcLine {
			return e.idx
		}
	}
	idx := c.in.Frame(f)
	if len(list) < maxPerID {
		c.byID[id] = append(list, frameEntry{addr: f.Addr, src: f.SrcLine, kind: f.Kind, idx: idx})
	}
	return idx
}

// writer inserts one profile's rows inside the import's transaction. It
// works on the driver connection under the transaction: database/sql would
// allocate and convert an argument slice for every statement (220 MB for
// the 96-CPU capture), and go-sqlite3 would start a goroutine per statement
// to watch the context, which write checks once per batch instead.
type writer struct {
	pk      int64
	samples *inserter
	strs    *inserter
	frames  *inserter
	nodes   *inserter
	bulk    *bulkInserter // the samples' fast path, when available
}

// newWriter prepares the insert statements of profile pk; bulk allows the
// samples' fast path (see bulkInserter).
func newWriter(conn *sqlite3.SQLiteConn, pk int64, bulk bool) (*writer, error) {
	w := &writer{pk: pk}
	var err error
	if w.samples, err = newInserter(conn, "samples", pk, sampleCols, 64); err != nil {
		return nil, err
	}
	if bulk {
		w.bulk = newBulkInserter(w.samples)
	}
	if w.strs, err = newInserter(conn, "strings", pk, 2, 64); err != nil {
		w.close()
		return nil, err
	}
	if w.frames, err = newInserter(conn, "frames", pk, 7, 64); err != nil {
		w.close()
		return nil, err
	}
	if w.nodes, err = newInserter(conn, "stack_nodes", pk, 3, 64); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

func (w *writer) close() {
	for _, in := range []*inserter{w.samples, w.strs, w.frames, w.nodes} {
		if in != nil {
			in.close()
		}
	}
}

// write stores b's new strings, frames, stack nodes and samples.
func (w *writer) write(ctx context.Context, b *batch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, s := range b.strs {
		if err := w.strs.add(int64(b.strBase+i), s); err != nil {
			return err
		}
	}
	if err := w.strs.flush(); err != nil {
		return err
	}
	for i, f := range b.frames {
		inline := int64(0)
		if f.Inline {
			inline = 1
		}
		if err := w.frames.add(int64(b.frameBase+i), int64(f.Symbol), int64(f.DSO), int64(f.SrcLine),
			int64(f.Addr), int64(f.Kind), inline); err != nil {
			return err
		}
	}
	if err := w.frames.flush(); err != nil {
		return err
	}
	for i, n := range b.nodes {
		if err := w.nodes.add(int64(b.nodeBase+i), int64(n.Parent), int64(n.Frame)); err != nil {
			return err
		}
	}
	if err := w.nodes.flush(); err != nil {
		return err
	}
	if w.bulk != nil {
		return w.bulk.insert(b.rows)
	}
	rows := b.rows
	for len(rows) > 0 {
		r := rows[:sampleCols]
		rows = rows[sampleCols:]
		if err := w.samples.add(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8]); err != nil {
			return err
		}
	}
	return w.samples.flush()
}

// finish writes the profile row's final figures, its events and warnings.
func finish(ctx context.Context, tx *sql.Tx, pk int64, p *subsecond.Profile, base int64, periods []uint64) error {
	meta, err := json.Marshal(p.Meta)
	if err != nil {
		return err
	}
	p.Uploaded = time.Now().UTC()
	_, err = tx.ExecContext(ctx, `UPDATE profiles SET name = ?, file_name = ?, sha256 = ?, bytes = ?, uploaded_ns = ?,
		metadata = ?, time_base = ?, start_ns = ?, end_ns = ?, samples = ?, cpus = ?, frequency_hz = ?, warnings = ?,
		host = ? WHERE pk = ?`, p.Name, p.FileName, p.SHA256, p.Bytes, p.Uploaded.UnixNano(), string(meta), base,
		p.Start, p.End, p.Samples, p.CPUs, p.FrequencyHz, p.Warnings, p.Host, pk)
	if err != nil {
		return fmt.Errorf("store profile: %w", err)
	}
	for i, e := range p.Events {
		if _, err := tx.ExecContext(ctx, `INSERT INTO events (profile, idx, name, samples, period) VALUES (?, ?, ?, ?, ?)`,
			pk, i, e.Name, e.Samples, int64(periods[i])); err != nil {
			return fmt.Errorf("store events: %w", err)
		}
	}
	for i, wn := range p.WarningList {
		if _, err := tx.ExecContext(ctx, `INSERT INTO warnings (profile, seq, line, message) VALUES (?, ?, ?, ?)`,
			pk, i, wn.Line, wn.Message); err != nil {
			return fmt.Errorf("store warnings: %w", err)
		}
	}
	return nil
}

// profileBySHA returns the stored profile with the given content hash.
func (s *Store) profileBySHA(ctx context.Context, sum string) (*subsecond.Profile, error) {
	var id string
	if err := s.db.QueryRowContext(ctx, `SELECT id FROM profiles WHERE sha256 = ?`, sum).Scan(&id); err != nil {
		return nil, err
	}
	return s.Profile(ctx, id)
}

// inserter batches rows of one profile into multi-row INSERT statements,
// which cut the per-statement overhead of cgo and SQLite; leftover rows go
// through a single-row statement. The profile's key is written into the
// statements as a literal, which saves binding it in every row. The
// argument slice is reused.
type inserter struct {
	table     string
	cols, per int // bound columns per row, rows per multi-row statement
	one, many driver.StmtExecContext
	closers   []driver.Stmt
	args      []driver.NamedValue
	n         int // values queued
}

func newInserter(conn *sqlite3.SQLiteConn, table string, pk int64, cols, per int) (*inserter, error) {
	row := "(" + strconv.FormatInt(pk, 10) + strings.Repeat(",?", cols) + ")"
	in := &inserter{table: table, cols: cols, per: per, args: make([]driver.NamedValue, cols*per)}
	for i := range in.args {
		in.args[i].Ordinal = i + 1
	}
	for _, q := range []string{"INSERT INTO " + table + " VALUES " + row,
		"INSERT INTO " + table + " VALUES " + strings.TrimSuffix(strings.Repeat(row+",", per), ",")} {
		st, err := conn.Prepare(q)
		if err != nil {
			in.close()
			return nil, fmt.Errorf("prepare %s insert: %w", table, err)
		}
		in.closers = append(in.closers, st)
		ex, ok := st.(driver.StmtExecContext)
		if !ok {
			in.close()
			return nil, fmt.Errorf("prepare %s insert: statement %T cannot execute", table, st)
		}
		if in.one == nil {
			in.one = ex
		} else {
			in.many = ex
		}
	}
	return in, nil
}

// add queues one row, executing the multi-row statement when it is full.
func (in *inserter) add(vals ...any) error {
	for _, v := range vals {
		in.args[in.n].Value = v
		in.n++
	}
	if in.n < len(in.args) {
		return nil
	}
	in.n = 0
	if _, err := in.many.ExecContext(context.Background(), in.args); err != nil {
		return fmt.Errorf("insert %s: %w", in.table, err)
	}
	return nil
}

// flush stores the queued rows.
func (in *inserter) flush() error {
	n := in.n
	in.n = 0
	for i := 0; i < n; i += in.cols {
		row := in.args[i : i+in.cols]
		for j := range row {
			row[j].Ordinal = j + 1
		}
		_, err := in.one.ExecContext(context.Background(), row)
		for j := range row {
			row[j].Ordinal = i + j + 1
		}
		if err != nil {
			return fmt.Errorf("insert %s: %w", in.table, err)
		}
	}
	return nil
}

func (in *inserter) close() {
	for _, st := range in.closers {
		st.Close()
	}
	in.closers = nil
}

// countingReader counts the bytes read through it; the count may be read
// from another goroutine.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// hashingReader reads r in a goroutine of its own, computing the SHA-256
// and length of everything read, and hands the bytes on through Read: the
// hash then costs the parsing goroutine nothing but a copy. n and sum are
// valid once Read has returned io.EOF.
type hashingReader struct {
	full chan chunk
	free chan []byte
	done chan struct{}
	exit chan struct{}
	buf  []byte // the chunk being consumed
	cur  []byte // its unread part
	err  error
	n    int64
	sum  []byte
}

type chunk struct {
	b   []byte
	err error
}

const (
	hashChunk  = 256 << 10
	hashChunks = 4
)

func newHashingReader(r io.Reader) *hashingReader {
	h := &hashingReader{full: make(chan chunk, hashChunks), free: make(chan []byte, hashChunks),
		done: make(chan struct{}), exit: make(chan struct{})}
	for range hashChunks {
		h.free <- make([]byte, hashChunk)
	}
	go h.run(r)
	return h
}

func (h *hashingReader) run(r io.Reader) {
	defer close(h.exit)
	sha := sha256.New()
	var n int64
	for {
		var buf []byte
		select {
		case buf = <-h.free:
		case <-h.done:
			return
		}
		k, err := fill(r, buf)
		sha.Write(buf[:k])
		n += int64(k)
		if err == io.EOF {
			h.n, h.sum = n, sha.Sum(nil) // published by the send below
		}
		select {
		case h.full <- chunk{buf[:k], err}:
		case <-h.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// fill reads into buf until it is full or r fails, and returns r's error
// unchanged (io.ReadFull would turn a truncated gzip stream's
// io.ErrUnexpectedEOF into success).
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func (h *hashingReader) Read(p []byte) (int, error) {
	for len(h.cur) == 0 {
		if h.err != nil {
			return 0, h.err
		}
		if h.buf != nil {
			h.free <- h.buf[:cap(h.buf)]
		}
		c := <-h.full
		h.buf, h.cur, h.err = c.b, c.b, c.err
	}
	n := copy(p, h.cur)
	h.cur = h.cur[n:]
	return n, nil
}

// Close stops the reading goroutine and waits for it, so that the caller
// may close what it reads from.
func (h *hashingReader) Close() {
	close(h.done)
	<-h.exit
}
