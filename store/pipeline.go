package store

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/decompress"
	"github.com/subsecond/subsecond/parser"
	"github.com/subsecond/subsecond/query"
)

// The import pipeline turns perf script text into a profile's tables and
// encoded chunks without touching the database; Store.Import then writes
// them in one short transaction. Its stages:
//
//	inflate   gzip input only, one goroutine: decompress ahead of the
//	          reader (readAhead)
//	read      one goroutine: decompress once (the format recognised by
//	          content; a compressed stream inside is refused) unless
//	          inflate does, count the text against MaxText, and cut it into
//	          blocks that end at a record boundary (a blank line)
//	hash      one goroutine: the text's digest, piece by piece as read
//	          into the blocks' buffers, which go back to the reader once
//	          both it and their parse worker are done with them
//	parse     one goroutine per core but one (Options.Workers): each
//	          parses whole blocks into columns and a worker-local
//	          Interner, in parallel
//	merge     Import's goroutine, block by block in input order: maps each
//	          worker's new strings, frames, stack nodes and events into the
//	          profile's tables, counts the samples (MaxSamples), and files
//	          them into chunks of one second
//	encode    one goroutine per core: sorts, summarises and compresses
//	          each chunk once it is complete
//	feed      one goroutine: codes the stack nodes and the frames into
//	          their segments as the merge makes them (tableFeed)
//	tables    one goroutine, once the last part is merged: encodes the
//	          strings' segments, and takes the nodes' and frames' once
//	          their last are coded, while the last chunks are encoded and
//	          Import builds and writes the fleet index
//
// Merging in input order, each worker's new table entries in the order it
// met them, gives every string, frame and node exactly the index a serial
// pass would (subsecond.Builder's), so the result does not depend on how
// blocks were shared out.

// Limits of an import, when neither ImportOptions nor Options set them.
const (
	// DefaultMaxText bounds a capture's decompressed text: the bundled
	// 96-CPU × 120 s capture is 888 MB.
	DefaultMaxText = 8 << 30
	// DefaultMaxSamples bounds a capture's samples: 96 CPUs sampled at
	// 49 Hz for two minutes are 564,480; at 999 Hz, 11.5 million.
	DefaultMaxSamples = 50_000_000
	// DefaultMaxSecondSamples bounds the samples of one second of a
	// capture: as many as one view reads (the server's default
	// --max-view-samples), since no view could show a second holding more.
	// perf samples a CPU at most about 100,000 times a second: 10 million
	// are a hundred CPUs at that rate.
	DefaultMaxSecondSamples = 10_000_000
)

// blockSize is the size of the blocks the text is cut into for the parse
// workers; a block grows up to 16 times that, and at most maxBlock, when it
// holds no blank line. The pool's buffers are each faulted in once: at
// 4 MiB, the real 27 s capture's import took 17,900 page faults, at 1 MiB
// 13,900 (half a MiB saved no more).
const (
	blockSize = 1 << 20
	maxBlock  = 64 << 20
)

// partSamples is how many samples a parse worker hands on at a time when a
// block holds more (a stream parsed whole, see block.rest).
const partSamples = 1 << 16

// sealLag is how far behind the latest second a chunk is sealed: perf
// script prints samples in time order, give or take the few milliseconds
// by which CPUs' buffers are merged.
const sealLag = 2

// source is the text of an import: decompressed once, counted, hashed.
type source struct {
	raw      *countingReader // the input as given
	text     io.Reader       // decompressed text, limited to max bytes
	closer   io.Closer
	max      int64
	n        int64 // text bytes read
	sha      *digester
	pieces   chan<- hashJob // where read sends what it read to be hashed; nil: read hashes it
	over     bool           // the text went past max
	overflow error
}

// openSource prepares r for parsing: the format is recognised from the
// first bytes, and decompressed text that is itself compressed is refused.
// The head of the text is returned for sniffing; it is also the start of
// what src reads.
func openSource(r io.Reader, max int64, legacy bool) (*source, []byte, error) {
	cr := &countingReader{r: r}
	rc, f, err := decompress.Open(cr)
	if err != nil {
		return nil, nil, err
	}
	if f == decompress.Gzip {
		// Inflating the bundled capture takes about 1.1 s of CPU for gzip,
		// 0.25 s for zstd: gunzip beside hashing on the reader would bound
		// the import, while for zstd the copy a readAhead adds costs more
		// than it saves (uploaded to serve: 0.85 s and 1.45 s of CPU
		// without it, 0.91 s and 1.59 s with it).
		rc = newReadAhead(rc)
	}
	br := bufio.NewReaderSize(rc, 64<<10)
	head, err := br.Peek(sniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		rc.Close()
		return nil, nil, err
	}
	if inner := decompress.Detect(head); f != decompress.Plain && inner != decompress.Plain {
		rc.Close()
		return nil, nil, fmt.Errorf("%s inside %s: a compressed stream inside compressed input is refused, as it could expand "+
			"past any limit; decompress the inner layer first: %w", inner, f, subsecond.ErrTooLarge)
	}
	return &source{raw: cr, text: br, closer: rc, max: max, sha: newDigester(legacy)}, head, nil
}

// read fills p from the text, at most hashPiece bytes, counting them and
// hashing them or sending them to be hashed. Past max bytes it fails with
// an error wrapping subsecond.ErrTooLarge.
func (s *source) read(p []byte) (int, error) {
	if s.n >= s.max {
		var probe [1]byte
		if n, err := s.text.Read(probe[:]); n == 0 && err != nil {
			return 0, err
		}
		s.over = true
		return 0, fmt.Errorf("the capture's text is larger than the limit of %d bytes (--max-text): %w", s.max, subsecond.ErrTooLarge)
	}
	if int64(len(p)) > s.max-s.n {
		p = p[:s.max-s.n]
	}
	if len(p) > hashPiece {
		p = p[:hashPiece]
	}
	n, err := s.text.Read(p)
	s.n += int64(n)
	if n > 0 {
		if s.pieces != nil {
			s.pieces <- hashJob{piece: p[:n]}
		} else {
			s.sha.Write(p[:n])
		}
	}
	return n, err
}

// hashJob is a piece of the text to hash, or a block whose pieces have all
// been sent, to release once they are hashed.
type hashJob struct {
	piece []byte
	done  *block
}

// hashPieces hashes the pieces sent on jobs, in order, into sha, and
// releases the blocks that hold them.
func hashPieces(sha *digester, jobs <-chan hashJob, pool chan<- *[]byte) {
	for j := range jobs {
		sha.Write(j.piece)
		if j.done != nil {
			j.done.release(pool)
		}
	}
}

// block is a piece of the text that ends at a record boundary, or, with
// rest set, the remainder of the input parsed as one stream (text whose
// records are not separated by blank lines).
type block struct {
	seq  int
	data []byte
	rest io.Reader
	buf  *[]byte      // returned to the pool when parsed and hashed
	refs atomic.Int32 // releases to wait for before that: the parser's and the hasher's
}

// release drops one reference to b's buffer, returning it to pool with
// the last.
func (b *block) release(pool chan<- *[]byte) {
	if b.buf != nil && b.refs.Add(-1) <= 0 {
		pool <- b.buf
	}
}

// part is what a parse worker hands on: samples of one block whose Comm,
// Stack and Event index the worker's own tables, of which it carries
// snapshots.
type part struct {
	block int
	last  bool // the block's final part
	cols  subsecond.Columns
	w     *worker
	strs  []string
	frms  []subsecond.FrameRec
	nodes []subsecond.StackNode
	evs   []string
	// Set on the final part:
	lines int // lines in the block
	nwarn int
	warns []subsecond.Warning // line numbers relative to the block
	meta  subsecond.Metadata
	err   error
}

// worker is one parse goroutine's state, kept across its blocks: its
// tables grow with what it has seen, and the merger maps each entry into
// the profile's tables once.
type worker struct {
	in     *subsecond.Interner
	sc     *parser.Scanner // reused from block to block, keeping its frame IDs
	stacks *stackCache
	free   chan *part // parts the merger is done with, for reuse
	events map[string]uint16
	evs    []string
	row    subsecond.Row // the sample being appended

	// Kept by the merger: worker index → profile index, for the entries
	// mapped so far.
	strMap   []uint32
	frameMap []int32
	nodeMap  []int32
	evMap    []uint16
}

func newWorker() *worker {
	in := subsecond.NewInterner()
	w := &worker{in: in, stacks: newStackCache(in), free: make(chan *part, partsPerWorker), events: map[string]uint16{},
		strMap: []uint32{0}, nodeMap: []int32{0}}
	w.row = subsecond.Row{Strings: in, Stack: func() int32 { return w.stacks.stack(w.row.Sample.Frames, w.sc.FrameIDs(), w.row.Sample.TID) }}
	for range partsPerWorker {
		w.free <- &part{w: w}
	}
	return w
}

// idMap returns the map from the worker's indexes into table t to the
// profile's, a slice of the type of the columns that index t.
func (w *worker) idMap(t subsecond.Table) any {
	m, ok := byTable[any](t, w.strMap, w.nodeMap, w.evMap)
	if !ok {
		panic(fmt.Sprintf("store: no map of table %d", t))
	}
	return m
}

// idColumns are the columns whose values index a table.
var idColumns = func() []storeColumn {
	var out []storeColumn
	for _, k := range storeColumns {
		if k.Info().Table != subsecond.NoTable {
			out = append(out, k)
		}
	}
	return out
}()

// partsPerWorker is how many parts a worker may have handed on and not
// had back: it waits for the merger beyond that.
const partsPerWorker = 3

// parseBlock parses b, sending its samples on out in parts. after is the
// parser's state at the end of the first block, for the later ones. It
// returns the parser's state at the end of b.
func (w *worker) parseBlock(ctx context.Context, b *block, strict bool, after *parser.State, out chan<- *part) (parser.State, bool) {
	opt := parser.Options{Strict: strict, After: after}
	if w.sc == nil {
		w.sc = parser.NewScanner(nil, opt)
	}
	sc := w.sc
	var kept bool
	if b.rest != nil {
		kept = sc.Reset(b.rest, opt)
	} else {
		kept = sc.ResetBytes(b.data, opt)
	}
	if !kept {
		w.stacks.forgetIDs()
	}
	p := w.newPart(ctx, b.seq)
	if p == nil {
		return sc.State(), false
	}
	for sc.Scan() {
		smp := sc.Sample()
		ev, ok := w.events[smp.Event]
		if !ok {
			if len(w.evs) >= subsecond.MaxEvents {
				p.err = fmt.Errorf("line %d: the capture has more than %d distinct event names, the most a profile can hold: %w", smp.Line, subsecond.MaxEvents, subsecond.ErrTooLarge)
				break
			}
			ev = uint16(len(w.evs))
			w.events[smp.Event] = ev
			w.evs = append(w.evs, smp.Event)
		}
		if p.err = tablesFit(w.in, 1+3*len(smp.Frames), len(smp.Frames), len(smp.Frames)); p.err != nil {
			break
		}
		w.row.Sample, w.row.Event = smp, ev
		p.cols.Append(&w.row)
		if p.cols.Len() == partSamples {
			if !w.send(ctx, p, out) {
				return sc.State(), false
			}
			if p = w.newPart(ctx, b.seq); p == nil {
				return sc.State(), false
			}
		}
	}
	if p.err == nil {
		p.err = sc.Err()
		if !strict && errors.Is(p.err, subsecond.ErrNotPerf) {
			p.err = nil // a block of bad records only; whether the capture has samples is decided at the end
		}
	}
	p.last, p.lines, p.meta = true, sc.Line(), sc.Metadata()
	p.nwarn, p.warns = sc.Warnings()
	return sc.State(), w.send(ctx, p, out)
}

// newPart returns an empty part of block seq, waiting for the merger to
// give one back if need be; nil when ctx ends first.
func (w *worker) newPart(ctx context.Context, seq int) *part {
	select {
	case p := <-w.free:
		p.cols.Resize(0)
		*p = part{block: seq, w: w, cols: p.cols}
		return p
	case <-ctx.Done():
		return nil
	}
}

// send hands p on with snapshots of the worker's tables.
func (w *worker) send(ctx context.Context, p *part, out chan<- *part) bool {
	p.strs, p.frms, p.nodes, p.evs = w.in.Strings, w.in.Frames, w.in.Nodes, w.evs
	select {
	case out <- p:
		return true
	case <-ctx.Done():
		return false
	}
}

// parsed is the outcome of the pipeline: everything an import stores.
type parsed struct {
	tables *subsecond.Interner
	stats  *subsecond.Stats
	comms  []string
	chunks *chunkSpool
	meta   subsecond.Metadata
	nwarn  int
	warns  []subsecond.Warning
	bytes  int64
	digest string             // the text's identity (see digester)
	legacy string             // its SHA-256 digest, when the database held profiles known by it
	warm   *subsecond.Columns // the samples in capture order, when few enough
	// segs receives the tables' segments, encoded in a goroutine of their
	// own from the moment the tables are complete (see pipeline.run);
	// Segments waits for them.
	segs     <-chan []Segment
	segments []Segment
	// index holds the encoders' counts for the fleet index, from the
	// second base (see buildIndex).
	index []*indexAcc
	base  int64
}

// Segments returns the tables' segments, waiting for their encoding.
func (res *parsed) Segments() []Segment {
	if res.segs != nil {
		res.segments, res.segs = <-res.segs, nil
	}
	return res.segments
}

// pipeline holds the state of one run of the import pipeline.
type pipeline struct {
	opt      ImportOptions
	workers  int // parse goroutines
	encoders int // encode goroutines
	src      *source

	in    *subsecond.Interner
	stats *subsecond.Stats
	class *classifier
	evMap map[uint16]bool

	samples   int64
	maxSecond int64
	// perSecond counts the sealed samples of each second, against
	// maxPerSecond.
	perSecond    map[int64]int64
	maxPerSecond int64
	started      bool
	open         map[int64]*chunkBuf
	nextSeq      map[int64]int32 // per second sealed at least once: the Seq of its next chunk
	lastBuf      *chunkBuf
	lastChunk    int   // samples of the chunk sealed last
	base         int64 // second of the first timed sample: the fleet index's slots count from it
	index        []*indexAcc
	encode       chan *chunkBuf
	encWG        sync.WaitGroup
	encErr       atomic.Pointer[error]
	spool        *chunkSpool
	tables       *tableFeed  // codes the stack nodes and frames as they are merged
	warm         []*chunkBuf // sealed chunks kept for the warm capture, nil when off
	warmOff      bool
	warmLimit    int
	blockSize    int

	meta  subsecond.Metadata
	nwarn int
	warns []subsecond.Warning
	lines int
}

// chunkBuf collects the samples of one chunk until it is sealed.
type chunkBuf struct {
	second int64
	seq    int32
	cols   subsecond.Columns
	view   view
	base   int64                 // pipeline.base when sealed
	nodes  []subsecond.StackNode // the profile's stack nodes when sealed
}

// run parses the source with the Store's import workers.
func (s *Store) run(ctx context.Context, src *source, opt ImportOptions) (*parsed, error) {
	pl := &pipeline{opt: opt, workers: s.importWorkers, encoders: max(s.importWorkers, s.opt.Workers), src: src, in: subsecond.NewInterner(), stats: subsecond.NewStats(),
		class: newClassifier(), open: map[int64]*chunkBuf{}, nextSeq: map[int64]int32{}, perSecond: map[int64]int64{}, maxPerSecond: s.opt.MaxSecondSamples,
		spool: newChunkSpool(s.opt.SpillDir), warmLimit: s.opt.WarmLimit, blockSize: s.opt.BlockSize}
	res, err := pl.run(ctx)
	if err != nil {
		pl.spool.release()
		return nil, err
	}
	return res, nil
}

func (pl *pipeline) run(ctx context.Context) (*parsed, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()

	blocks := make(chan *block, pl.workers)
	parts := make(chan *part, 2*pl.workers)
	pool := make(chan *[]byte, 2*pl.workers+1)
	for range cap(pool) {
		var b []byte // grown as fill needs it: a small capture takes little
		pool <- &b
	}
	var readErr error
	wg.Go(func() {
		defer close(blocks)
		readErr = pl.split(ctx, blocks, pool)
	})
	// The parser's state after the first block (the capture's header)
	// is where every later block's parse starts from.
	var first parser.State
	firstDone := make(chan struct{})
	var parseWG sync.WaitGroup
	for range pl.workers {
		w := newWorker()
		parseWG.Go(func() {
			for b := range blocks {
				var after *parser.State
				if b.seq > 0 {
					select {
					case <-firstDone:
						after = &first
					case <-ctx.Done():
						return
					}
				}
				st, ok := w.parseBlock(ctx, b, pl.opt.Strict, after, parts)
				if b.seq == 0 {
					first = st
					close(firstDone)
				}
				b.release(pool)
				if !ok {
					return
				}
			}
		})
	}
	wg.Go(func() {
		parseWG.Wait()
		close(parts)
	})
	// An encoder per core: the last seconds' chunks are sealed together
	// at the end, when the parsers are done.
	pl.encode = make(chan *chunkBuf, pl.encoders)
	for range pl.encoders {
		acc := newIndexAcc()
		pl.index = append(pl.index, acc)
		pl.encWG.Go(func() { pl.encodeChunks(acc) })
	}
	pl.tables = startTableFeed()
	err := pl.merge(ctx, parts)
	if err != nil {
		cancel()
		for range parts { // let the workers finish
		}
	}
	// The tables are complete once every part is merged: their segments
	// are encoded beside the last chunks and, in Import, the fleet index,
	// rather than after them (on a 4 MB capture, 6 of the 54 ms of CPU an
	// upload took, all of it on the critical path).
	segs := make(chan []Segment, 1)
	if err == nil {
		in := pl.in
		streamed := func() ([]Segment, []Segment) { return pl.tables.finish(in) }
		go func() { segs <- packSegments(encodeSegmentsWith(in, streamed)) }()
		err = pl.sealAll()
	} else {
		pl.tables.abandon()
		close(segs)
	}
	close(pl.encode)
	pl.encWG.Wait()
	if e := pl.encErr.Load(); err == nil && e != nil {
		err = *e
	}
	wg.Wait()
	if readErr != nil && (err == nil || errors.Is(err, context.Canceled) && ctx.Err() == nil) {
		err = readErr
	}
	if err == nil {
		err = pl.src.closer.Close()
	}
	if err != nil {
		<-segs
		return nil, err
	}
	res := &parsed{tables: pl.in, stats: pl.stats, comms: pl.class.comms, chunks: pl.spool, meta: pl.meta,
		nwarn: pl.nwarn, warns: pl.warns, bytes: pl.src.n, index: pl.index, base: pl.base}
	res.digest, res.legacy = pl.src.sha.digests()
	res.segs = segs
	if !pl.warmOff {
		res.warm = assemble(pl.warm)
	}
	return res, nil
}

// split reads the text into blocks that end after a blank line and sends
// them in order.
func (pl *pipeline) split(ctx context.Context, out chan<- *block, pool chan *[]byte) error {
	// The text is hashed in a goroutine of its own, fed the pieces read
	// into the blocks' buffers as they are read: on the reader it made the
	// stage that every byte passes through, and that the parsers waited
	// for, half as slow again (0.63 s of the 0.75 s it took on the bundled
	// capture were SHA-256). Each block's buffer waits for its parser and
	// the hasher before it is reused.
	jobs := make(chan hashJob, 64)
	hashed := make(chan struct{})
	go func() {
		defer close(hashed)
		hashPieces(pl.src.sha, jobs, pool)
	}()
	pl.src.pieces = jobs
	stopHashing := func() {
		if pl.src.pieces != nil {
			pl.src.pieces = nil
			close(jobs)
			<-hashed
		}
	}
	defer stopHashing()
	var carry []byte
	send := func(b *block) bool {
		if pause := pl.opt.Pause; pause != nil && b.seq > 0 {
			pause(ctx)
		}
		if b.buf != nil {
			b.refs.Store(2)
			jobs <- hashJob{done: b}
		}
		select {
		case out <- b:
			return true
		case <-ctx.Done():
			b.release(pool)
			return false
		}
	}
	for seq := 0; ; seq++ {
		var bp *[]byte
		select {
		case bp = <-pool:
		case <-ctx.Done():
			return ctx.Err()
		}
		buf := append((*bp)[:0], carry...)
		carry = nil
		size := pl.blockSize
		if seq == 0 {
			// The parser starts once the first block is read: a quarter
			// of a block is read sooner, and holds the header.
			size = max(size/4, 1)
		}
		for {
			n, err := fill(pl.src, &buf, size, pl.opt.Size)
			if err != nil && err != io.EOF {
				return err
			}
			if err == io.EOF || n == 0 {
				*bp = buf
				if len(buf) == 0 {
					pool <- bp
					return nil
				}
				send(&block{seq: seq, data: buf, buf: bp})
				return nil
			}
			if cut := boundary(buf); cut > 0 {
				carry = append(carry, buf[cut:]...)
				buf = buf[:cut]
				break
			}
			if size >= min(maxBlock, 16*pl.blockSize) {
				// No blank line in maxBlock bytes: records are not
				// separated by blank lines, and the rest is parsed as one
				// stream.
				*bp = buf
				// The worker reads the source from here on and hashes what
				// it reads itself, after what was read so far.
				stopHashing()
				rest := io.MultiReader(bytes.NewReader(buf), readerFunc(pl.src.read))
				if !send(&block{seq: seq, rest: rest}) {
					return ctx.Err()
				}
				return nil // the worker reads the source to its end
			}
			size *= 2
		}
		*bp = buf
		if !send(&block{seq: seq, data: buf, buf: bp}) {
			return ctx.Err()
		}
	}
}

// hashPiece is the most text source.read reads at a time, and so the size
// of the pieces the hasher is sent: hashed soon after it is read, while it
// is still in the processor's caches, a piece costs a third less than a
// whole block hashed later (measured on the bundled capture: 0.55 s
// against 0.8 s).
const hashPiece = 256 << 10

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// fill reads from src until *buf holds size bytes or the input ends.
// *buf grows to size, or first to what is left of an input of expect
// bytes (0: unknown): the pool's blocks allocated whole (three of a block's
// size a capture, zeroed and faulted in) took half of a fresh server's import
// of a capture of a few kilobytes. A compressed input's text outgrows its
// expect, and then its buffer grows to size.
func fill(src *source, buf *[]byte, size int, expect int64) (int, error) {
	b := *buf
	if cap(b) < size {
		want := size - len(b)
		if left := expect - src.n; expect > 0 && left < int64(want) {
			want = max(int(left), 0) + 4<<10
		}
		b = slices.Grow(b, want)
	}
	total := 0
	for len(b) < size {
		if len(b) == cap(b) {
			b = slices.Grow(b, size-len(b))
		}
		n, err := src.read(b[len(b):min(size, cap(b))])
		b = b[:len(b)+n]
		total += n
		if err != nil {
			*buf = b
			return total, err
		}
	}
	*buf = b
	return total, nil
}

// boundary returns the offset just after the last blank line in b, or 0.
func boundary(b []byte) int {
	if i := bytes.LastIndex(b, []byte("\n\n")); i >= 0 {
		return i + 2
	}
	if i := bytes.LastIndex(b, []byte("\n\r\n")); i >= 0 {
		return i + 3
	}
	return 0
}

// merge consumes the workers' parts in input order: a block's parts come
// from one worker, in order; blocks finished early wait in pending.
func (pl *pipeline) merge(ctx context.Context, parts <-chan *part) error {
	pending := map[int][]*part{}
	next := 0
	for p := range parts {
		pending[p.block] = append(pending[p.block], p)
		for len(pending[next]) > 0 {
			q := pending[next][0]
			pending[next] = pending[next][1:]
			if err := pl.mergePart(q); err != nil {
				return err
			}
			pl.tables.publish(pl.in)
			last := q.last
			q.w.free <- q // never blocks: the worker took it from there; it is the worker's again
			if last {
				delete(pending, next)
				next++
			}
			if pl.opt.Progress != nil {
				pl.opt.Progress(pl.src.raw.n.Load())
			}
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// mergePart maps p's samples into the profile.
func (pl *pipeline) mergePart(p *part) error {
	if p.err != nil {
		var se *parser.SyntaxError
		if errors.As(p.err, &se) {
			return &parser.SyntaxError{Line: se.Line + pl.lines, Msg: se.Msg}
		}
		return p.err
	}
	w := p.w
	// With one parse worker its tables are the profile's: mapping its new
	// entries in the order it met them would give each its own index
	// (strings, frames and nodes are distinct, and the worker's tables and
	// the profile's start alike), so the profile's tables are the part's
	// snapshots of the worker's, which the worker does not change, held
	// as an Interner made from tables; nothing interns into it.
	one := pl.workers == 1
	if one {
		if err := tablesFit(&subsecond.Interner{}, len(p.strs), len(p.frms), len(p.nodes)); err != nil {
			return err
		}
		pl.in = &subsecond.Interner{Strings: p.strs, Frames: p.frms, Nodes: p.nodes}
	} else {
		if err := tablesFit(pl.in, len(p.strs)-len(w.strMap), len(p.frms)-len(w.frameMap), len(p.nodes)-len(w.nodeMap)); err != nil {
			return err
		}
		for i := len(w.strMap); i < len(p.strs); i++ {
			w.strMap = append(w.strMap, pl.in.String(p.strs[i]))
		}
		// Every string of the part's frames was mapped just above.
		for i := len(w.frameMap); i < len(p.frms); i++ {
			f := p.frms[i]
			f.Symbol, f.DSO, f.SrcLine = w.strMap[f.Symbol], w.strMap[f.DSO], w.strMap[f.SrcLine]
			w.frameMap = append(w.frameMap, pl.in.Rec(f))
		}
		for i := len(w.nodeMap); i < len(p.nodes); i++ {
			n := &p.nodes[i]
			w.nodeMap = append(w.nodeMap, pl.in.Node(w.nodeMap[n.Parent], w.frameMap[n.Frame]))
		}
	}
	for i := len(w.evMap); i < len(p.evs); i++ {
		ev, err := pl.stats.Event(p.evs[i])
		if err != nil {
			return err
		}
		if one && int(ev) != i {
			// Events, too, are numbered in the order met.
			return fmt.Errorf("store: event %q is %d to the worker, %d to the profile", p.evs[i], i, ev)
		}
		w.evMap = append(w.evMap, ev)
	}
	pl.class.update(pl.in)

	c := &p.cols
	n := c.Len()
	if pl.samples+int64(n) > pl.opt.MaxSamples {
		return fmt.Errorf("the capture has more than %d samples, the limit per profile (--max-samples): %w", pl.opt.MaxSamples, subsecond.ErrTooLarge)
	}
	pl.samples += int64(n)
	if !one {
		for _, k := range idColumns {
			k.renumber(c, w.idMap(k.Info().Table))
		}
	}
	// Samples go to their second's chunk in runs: [from, i) waits for b.
	b, from := pl.lastBuf, 0
	for i := range n {
		pl.class.comm(c.Comm[i], pl.in)
		t := c.Time[i]
		pl.stats.Count(c.Event[i], t, c.CPU[i])
		sec := chunkSecond(t)
		if b == nil || b.second != sec || b.cols.Len()+i-from >= maxChunkSamples {
			if b != nil {
				b.cols.AppendRange(c, from, i)
			}
			var err error
			if b, err = pl.chunk(sec); err != nil {
				return err
			}
			from = i
		}
		if t != subsecond.NoTime && (!pl.started || sec > pl.maxSecond) {
			if !pl.started {
				pl.base = sec
			}
			pl.started, pl.maxSecond = true, sec
		}
	}
	if b != nil {
		b.cols.AppendRange(c, from, n)
	}
	if p.last {
		pl.mergeText(p)
	}
	return pl.sealOld()
}

// mergeText adds a block's warnings and metadata to the import's.
func (pl *pipeline) mergeText(p *part) {
	pl.nwarn += p.nwarn
	for _, w := range p.warns {
		if len(pl.warns) < 20 {
			pl.warns = append(pl.warns, subsecond.Warning{Line: w.Line + pl.lines, Message: w.Message})
		}
	}
	pl.lines += p.lines
	// A block's metadata holds what its own header lines set; each later
	// one overrides, as later lines do in one pass, except the hostname
	// and the tod offset, which the first capture and sample fix.
	m, o := &pl.meta, &p.meta
	for _, h := range o.Header {
		if len(m.Header) < 2048 {
			m.Header = append(m.Header, h)
		}
	}
	for _, f := range []struct{ dst, src *string }{{&m.OSRelease, &o.OSRelease}, {&m.PerfVersion, &o.PerfVersion},
		{&m.Arch, &o.Arch}, {&m.CPUDesc, &o.CPUDesc}, {&m.Cmdline, &o.Cmdline}, {&m.CapturedOn, &o.CapturedOn},
		{&m.Clock, &o.Clock}} {
		if *f.src != "" {
			*f.dst = *f.src
		}
	}
	if m.Hostname == "" {
		m.Hostname = o.Hostname
	}
	if o.NrCPUs != 0 {
		m.NrCPUs = o.NrCPUs
	}
	if o.RefTODNS != 0 || o.RefClockNS != 0 {
		m.RefTODNS, m.RefClockNS = o.RefTODNS, o.RefClockNS
	}
	if m.TODOffsetNS == 0 {
		m.TODOffsetNS = o.TODOffsetNS
	}
}

// chunk returns the open chunk of second sec, starting one if needed.
func (pl *pipeline) chunk(sec int64) (*chunkBuf, error) {
	b := pl.open[sec]
	if b != nil && b.cols.Len() >= maxChunkSamples {
		if err := pl.seal(b); err != nil {
			return nil, err
		}
		b = nil
	}
	if b == nil {
		// A capture's seconds hold about as many samples as each other.
		b = &chunkBuf{second: sec, seq: pl.nextSeq[sec], cols: subsecond.MakeColumns(max(1024, pl.lastChunk+pl.lastChunk/8))}
		pl.nextSeq[sec] = b.seq + 1
		pl.open[sec] = b
	}
	pl.lastBuf = b
	return b, nil
}

// sealOld seals the open chunks more than sealLag seconds behind the
// latest.
func (pl *pipeline) sealOld() error {
	if !pl.started {
		return nil
	}
	for sec, b := range pl.open {
		if sec < pl.maxSecond-sealLag {
			if err := pl.seal(b); err != nil {
				return err
			}
		}
	}
	return nil
}

func (pl *pipeline) sealAll() error {
	secs := make([]int64, 0, len(pl.open))
	for sec := range pl.open {
		secs = append(secs, sec)
	}
	slices.Sort(secs)
	for _, sec := range secs {
		if err := pl.seal(pl.open[sec]); err != nil {
			return err
		}
	}
	return nil
}

// seal hands chunk b to the encoders.
func (pl *pipeline) seal(b *chunkBuf) error {
	delete(pl.open, b.second)
	if n := pl.perSecond[b.second] + int64(b.cols.Len()); n > pl.maxPerSecond && b.second != noTimeSecond {
		return fmt.Errorf("one second of the capture (%s s on its clock) holds more than %d samples, more than one view reads, so that no view could show it (perf samples a CPU at most about 100,000 times a second): %w",
			query.DisplaySeconds(b.second*subsecond.ChunkSpan), pl.maxPerSecond, subsecond.ErrTooLarge)
	} else {
		pl.perSecond[b.second] = n
	}
	pl.lastChunk = b.cols.Len()
	if pl.lastBuf == b {
		pl.lastBuf = nil
	}
	if e := pl.encErr.Load(); e != nil {
		return *e
	}
	b.view = pl.class.view()
	b.base = pl.base
	b.nodes = pl.in.Nodes // appended to, never changed: the encoder reads these
	if !pl.warmOff {
		if pl.samples > int64(pl.warmLimit) {
			pl.warmOff, pl.warm = true, nil
		} else {
			pl.warm = append(pl.warm, b)
		}
	}
	pl.encode <- b
	return nil
}

// encodeChunks runs in an encoder goroutine, counting the chunks it
// encodes into acc for the fleet index.
func (pl *pipeline) encodeChunks(acc *indexAcc) {
	for b := range pl.encode {
		if pl.encErr.Load() != nil {
			continue
		}
		subsecond.SortColumns(&b.cols)
		acc.add(&b.cols, b.second, b.base, &b.view)
		n := b.cols.Len()
		ch := Chunk{Second: b.second, Seq: b.seq, Samples: int32(n), Summary: encodeSummary(&b.cols, 0, n, &b.view),
			Data: encodeChunk(&b.cols, 0, n, b.nodes)}
		if err := pl.spool.add(ch); err != nil {
			pl.encErr.CompareAndSwap(nil, &err)
		}
	}
}

// tableFeed hands the profile's stack nodes and frames, as the merge
// makes them, to a goroutine that codes them into segments (nodeStream,
// frameStream) on the core the parse leaves idle, so that the segments an
// import waits for at its end are the strings (on the real 27 s capture
// the nodes took 21 ms of the tables' 40 ms of coding and the frames 12,
// all of it after the last block, before they were streamed). The merge
// publishes the tables after each part it merges: slices of them, whose
// entries are never changed once made.
type tableFeed struct {
	latest atomic.Pointer[tableSnap]
	wake   chan struct{}
	done   chan [2][]Segment
	quit   atomic.Bool
}

type tableSnap struct {
	strings int
	frames  []subsecond.FrameRec
	nodes   []subsecond.StackNode
}

func snapOf(in *subsecond.Interner) *tableSnap {
	return &tableSnap{strings: len(in.Strings), frames: in.Frames, nodes: in.Nodes}
}

func startTableFeed() *tableFeed {
	f := &tableFeed{wake: make(chan struct{}, 1), done: make(chan [2][]Segment, 1)}
	go func() {
		ns, fs := newNodeStream(), newFrameStream()
		for range f.wake {
			if f.quit.Load() {
				continue
			}
			if sn := f.latest.Load(); sn != nil {
				ns.add(sn.nodes, len(sn.frames))
				fs.add(sn.strings, sn.frames, sn.nodes)
			}
		}
		if sn := f.latest.Load(); sn != nil && !f.quit.Load() {
			f.done <- [2][]Segment{fs.finish(sn.strings, sn.frames, sn.nodes), ns.finish(sn.nodes, len(sn.frames))}
			return
		}
		f.done <- [2][]Segment{}
	}()
	return f
}

// publish hands over the tables as they are now.
func (f *tableFeed) publish(in *subsecond.Interner) {
	f.latest.Store(snapOf(in))
	select {
	case f.wake <- struct{}{}:
	default: // the coder has a wake-up waiting: it reads the latest
	}
}

// finish returns the segments of the whole tables: the frames', then the
// nodes'.
func (f *tableFeed) finish(in *subsecond.Interner) (frames, nodes []Segment) {
	f.latest.Store(snapOf(in))
	close(f.wake)
	d := <-f.done
	return d[0], d[1]
}

// abandon stops the coder, for an import that failed.
func (f *tableFeed) abandon() {
	f.quit.Store(true)
	close(f.wake)
	<-f.done
}

// tablesFit fails when in's tables could not take the given numbers of
// new entries without their indexes (uint32 strings, int32 frames and
// stack nodes) wrapping round.
func tablesFit(in *subsecond.Interner, strs, frames, nodes int) error {
	if int64(len(in.Strings))+int64(strs) > math.MaxUint32 || int64(len(in.Frames))+int64(frames) > math.MaxInt32 ||
		int64(len(in.Nodes))+int64(nodes) > math.MaxInt32 {
		return fmt.Errorf("the capture has more distinct names, frames or stacks than a profile can index (%d names, %d frames, %d stack nodes): %w",
			uint64(math.MaxUint32), math.MaxInt32, math.MaxInt32, subsecond.ErrTooLarge)
	}
	return nil
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

// Warm touches the tables of the compressors an import uses, so that the
// first import of a process does not fault them in: the server calls it at
// start-up, beside opening its database. A fresh server's first upload of
// the real 5 s capture (4 MB) took 89 ms of CPU without it and 71 ms with
// it (medians of 12 fresh servers alternated, load 6); it costs about as
// much as it saves, once, at start-up.
func Warm() {
	// Text-like bytes that match seldom, so that the compressors hash
	// positions all over their tables: 512 KiB touch most of their pages.
	b := make([]byte, 512<<10)
	x := uint64(1)
	for i := range b {
		x = x*6364136223846793005 + 1442695040888963407
		b[i] = 'a' + byte(x>>59)
	}
	segmentEncoder().EncodeAll(b, nil)
	encoder().EncodeAll(b, nil)
}
