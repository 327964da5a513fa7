package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/mattn/go-sqlite3"

	"github.com/subsecond/subsecond"
)

// Capture returns profile id's samples in columnar form, sorted by time
// (input order among equal times), with the strings, frames and stack tree
// exactly as the import interned them. The few most recently used captures
// are cached, and Import caches the capture it has just stored (see
// warmLimit), so the first request after an upload reads nothing from
// SQLite; the result is shared and must not be modified. An unknown id
// yields an error wrapping subsecond.ErrNotFound.
func (s *Store) Capture(ctx context.Context, id string) (*subsecond.Capture, error) {
	return s.cache.get(ctx, id, func() (*subsecond.Capture, error) { return s.loadCapture(ctx, id) })
}

// loadCapture reads a capture from the database in one read transaction.
func (s *Store) loadCapture(ctx context.Context, id string) (*subsecond.Capture, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("load capture %s: %w", id, err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("load capture %s: %w", id, err)
	}
	defer tx.Rollback()
	pk, base, p, err := loadProfile(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	periods, err := eventPeriods(ctx, tx, pk)
	if err != nil {
		return nil, fmt.Errorf("load capture %s: %w", id, err)
	}
	c := &subsecond.Capture{Profile: *p}
	n := int(p.Samples)
	c.Samples = makeColumns(n)

	// A large capture's samples are read in two halves of its time span at
	// once, the later half on a second connection: SQLite's stepping is
	// most of the cost, and it runs on both cores. The profile cannot
	// change under the second reader (a stored profile is only ever
	// deleted), which the sample count below confirms.
	mid := int64(-1 << 63)
	var later subsecond.Columns
	var laterErr error
	var wg sync.WaitGroup
	if lo, hi := p.Start-base, p.End-base; n >= parallelLoad && hi > lo {
		mid = lo + (hi-lo)/2
		wg.Go(func() {
			later = makeColumns(n/2 + n/8)
			laterErr = s.readSamplesFrom(ctx, pk, base, periods, mid, &later)
		})
	}
	// The tables are read through the driver connection directly: with
	// hundreds of thousands of rows, database/sql's per-column conversion
	// would cost more than SQLite's own work.
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*sqlite3.SQLiteConn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		if err := readTables(ctx, sc, pk, c); err != nil {
			return err
		}
		q, args := `SELECT t, cpu, pid, tid, comm, event, weight, stack FROM samples WHERE profile = ? ORDER BY t, seq`, []driver.NamedValue{{Ordinal: 1, Value: pk}}
		if mid != -1<<63 {
			q = `SELECT t, cpu, pid, tid, comm, event, weight, stack FROM samples WHERE profile = ? AND t < ? ORDER BY t, seq`
			args = append(args, driver.NamedValue{Ordinal: 2, Value: mid})
		}
		return readSamples(ctx, sc, q, args, base, periods, &c.Samples, !s.driverOnly)
	})
	wg.Wait()
	if err == nil {
		err = laterErr
	}
	if err != nil {
		return nil, fmt.Errorf("load capture %s: %w", id, err)
	}
	appendColumns(&c.Samples, &later)
	if c.Samples.Len() != n {
		return nil, fmt.Errorf("load capture %s: read %d of %d samples: %w", id, c.Samples.Len(), n, subsecond.ErrNotFound)
	}
	if err := checkRefs(c); err != nil {
		return nil, fmt.Errorf("load capture %s: %w", id, err)
	}
	return c, nil
}

// parallelLoad is the sample count from which loadCapture reads in two
// halves at once.
const parallelLoad = 50_000

// readSamplesFrom reads the samples of profile pk from relative time from
// on, on a connection and read transaction of its own.
func (s *Store) readSamplesFrom(ctx context.Context, pk, base int64, periods []uint64, from int64, cols *subsecond.Columns) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*sqlite3.SQLiteConn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		return readSamples(ctx, sc, `SELECT t, cpu, pid, tid, comm, event, weight, stack FROM samples WHERE profile = ? AND t >= ? ORDER BY t, seq`,
			[]driver.NamedValue{{Ordinal: 1, Value: pk}, {Ordinal: 2, Value: from}}, base, periods, cols, !s.driverOnly)
	})
}

func makeColumns(n int) subsecond.Columns {
	return subsecond.Columns{
		Time: make([]int64, 0, n), CPU: make([]int32, 0, n), PID: make([]int32, 0, n), TID: make([]int32, 0, n),
		Comm: make([]uint32, 0, n), Event: make([]uint16, 0, n), Weight: make([]uint64, 0, n), Stack: make([]int32, 0, n),
	}
}

func appendColumns(dst, src *subsecond.Columns) {
	dst.Time = append(dst.Time, src.Time...)
	dst.CPU = append(dst.CPU, src.CPU...)
	dst.PID = append(dst.PID, src.PID...)
	dst.TID = append(dst.TID, src.TID...)
	dst.Comm = append(dst.Comm, src.Comm...)
	dst.Event = append(dst.Event, src.Event...)
	dst.Weight = append(dst.Weight, src.Weight...)
	dst.Stack = append(dst.Stack, src.Stack...)
}

// checkRefs verifies that every sample's comm, event and stack index a
// table entry, so that a damaged database cannot make readers index out of
// range.
func checkRefs(c *subsecond.Capture) error {
	ns, nn, ne := uint32(len(c.Strings)), int32(len(c.Nodes)), uint16(len(c.Profile.Events))
	cols := &c.Samples
	for i := range cols.Time {
		if cols.Comm[i] >= ns || cols.Stack[i] < 0 || cols.Stack[i] >= nn || cols.Event[i] >= ne {
			return fmt.Errorf("sample %d refers to a missing string, event or stack", i)
		}
	}
	return nil
}

// readSamples appends the rows of a samples query (t, cpu, pid, tid, comm,
// event, weight, stack; integer arguments only) to cols, through
// readSamplesRaw unless bulk is false or the statement's handle is out of
// reach.
func readSamples(ctx context.Context, conn *sqlite3.SQLiteConn, q string, args []driver.NamedValue, base int64, periods []uint64, cols *subsecond.Columns, bulk bool) error {
	if bulk {
		st, err := conn.Prepare(q)
		if err != nil {
			return err
		}
		defer st.Close()
		if raw := rawStmt(st); raw != nil {
			vals := make([]int64, len(args))
			for i, a := range args {
				v, ok := a.Value.(int64)
				if !ok || a.Ordinal != i+1 {
					return fmt.Errorf("samples query argument %d is not a positional integer", i+1)
				}
				vals[i] = v
			}
			if err := bindInts(raw, vals); err != nil {
				return err
			}
			return readSamplesRaw(ctx, raw, base, periods, cols)
		}
	}
	return eachRow(ctx, conn, q, args, 8, func(v []driver.Value) error {
		for _, x := range v { // eachRow lets text through, appendSample takes integers only
			if _, ok := x.(int64); !ok {
				return fmt.Errorf("samples column holds %T, want an integer", x)
			}
		}
		comm, stack := v[4].(int64), v[7].(int64)
		if comm < 0 || comm > 1<<32-1 || stack < 0 || stack > 1<<31-1 {
			return errors.New("sample refers to a missing string or stack")
		}
		appendSample(cols, base, periods, v, uint32(comm), int32(stack))
		return nil
	})
}

// readTables fills c's strings, frames and stack nodes.
func readTables(ctx context.Context, conn *sqlite3.SQLiteConn, pk int64, c *subsecond.Capture) error {
	arg := []driver.NamedValue{{Ordinal: 1, Value: pk}}
	c.Strings = []string{""}
	err := eachRow(ctx, conn, `SELECT idx, s FROM strings WHERE profile = ? ORDER BY idx`, arg, 2, func(v []driver.Value) error {
		if v[0].(int64) != int64(len(c.Strings)) {
			return fmt.Errorf("strings table has a gap at %d", len(c.Strings))
		}
		c.Strings = append(c.Strings, asString(v[1]))
		return nil
	})
	if err != nil {
		return err
	}
	nstr := uint32(len(c.Strings))
	err = eachRow(ctx, conn, `SELECT idx, symbol, dso, srcline, addr, kind, inline FROM frames WHERE profile = ? ORDER BY idx`, arg, 7, func(v []driver.Value) error {
		f := subsecond.FrameRec{Symbol: uint32(v[1].(int64)), DSO: uint32(v[2].(int64)), SrcLine: uint32(v[3].(int64)),
			Addr: uint64(v[4].(int64)), Kind: subsecond.FrameKind(v[5].(int64)), Inline: v[6].(int64) != 0}
		if v[0].(int64) != int64(len(c.Frames)) || f.Symbol >= nstr || f.DSO >= nstr || f.SrcLine >= nstr {
			return fmt.Errorf("frame %d is inconsistent", v[0].(int64))
		}
		c.Frames = append(c.Frames, f)
		return nil
	})
	if err != nil {
		return err
	}
	c.Nodes = []subsecond.StackNode{{Parent: -1, Frame: -1}}
	err = eachRow(ctx, conn, `SELECT idx, parent, frame FROM stack_nodes WHERE profile = ? ORDER BY idx`, arg, 3, func(v []driver.Value) error {
		idx, parent, frame := v[0].(int64), v[1].(int64), v[2].(int64)
		if idx != int64(len(c.Nodes)) || parent < 0 || parent >= idx || frame < 0 || frame >= int64(len(c.Frames)) {
			return fmt.Errorf("stack node %d is inconsistent", idx)
		}
		c.Nodes = append(c.Nodes, subsecond.StackNode{Parent: int32(parent), Frame: int32(frame), Depth: c.Nodes[parent].Depth + 1})
		return nil
	})
	if err != nil {
		return err
	}
	return nil
}

// eventPeriods returns each event's usual period, which a samples row's
// weight of 0 stands for.
func eventPeriods(ctx context.Context, tx *sql.Tx, pk int64) ([]uint64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT period FROM events WHERE profile = ? ORDER BY idx`, pk)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var periods []uint64
	for rows.Next() {
		var p int64
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		periods = append(periods, uint64(p))
	}
	return periods, rows.Err()
}

// appendSample appends one samples row (t, cpu, pid, tid, comm, event,
// weight, stack) to cols, restoring absolute times and implied weights.
func appendSample(cols *subsecond.Columns, base int64, periods []uint64, v []driver.Value, comm uint32, stack int32) {
	t := v[0].(int64)
	if t != subsecond.NoTime {
		t += base
	}
	cols.Time = append(cols.Time, t)
	cols.CPU = append(cols.CPU, int32(v[1].(int64)))
	cols.PID = append(cols.PID, int32(v[2].(int64)))
	cols.TID = append(cols.TID, int32(v[3].(int64)))
	cols.Comm = append(cols.Comm, comm)
	cols.Event = append(cols.Event, uint16(v[5].(int64)))
	w := uint64(v[6].(int64))
	if ev := int(v[5].(int64)); w == 0 && ev >= 0 && ev < len(periods) {
		w = periods[ev]
	}
	if w == 0 {
		w = 1
	}
	cols.Weight = append(cols.Weight, w)
	cols.Stack = append(cols.Stack, stack)
}

func asString(v driver.Value) string {
	switch s := v.(type) {
	case string:
		return s
	case []byte:
		return string(s)
	}
	return ""
}

// eachRow runs query on the driver connection and calls fn with each row's
// ncol values, checking that every value is an integer except text columns
// fn reads with asString.
func eachRow(ctx context.Context, conn *sqlite3.SQLiteConn, query string, args []driver.NamedValue, ncol int, fn func([]driver.Value) error) error {
	rows, err := conn.QueryContext(ctx, query, args)
	if err != nil {
		return err
	}
	defer rows.Close()
	v := make([]driver.Value, ncol)
	for {
		err := rows.Next(v)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		for i, x := range v {
			if _, ok := x.(int64); !ok {
				if _, ok := x.(string); !ok {
					return fmt.Errorf("column %d holds %T, want an integer", i, x)
				}
			}
		}
		if err := fn(v); err != nil {
			return err
		}
	}
}

// Window returns the samples of profile id whose time lies in r (half-open,
// absolute nanoseconds), on the given CPUs (all when cpus is empty), sorted
// by time. It reads the rows from SQLite, touching only the window's rows
// thanks to the samples table's (profile, t, seq) clustering. Comm and Stack
// index the tables of the profile's Capture.
func (s *Store) Window(ctx context.Context, id string, r subsecond.Range, cpus []int32) (subsecond.Columns, error) {
	var cols subsecond.Columns
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return cols, fmt.Errorf("window of %s: %w", id, err)
	}
	defer tx.Rollback()
	if !validID(id) {
		return cols, fmt.Errorf("window of %q: %w", id, subsecond.ErrNotFound)
	}
	var pk, base int64
	err = tx.QueryRowContext(ctx, `SELECT pk, time_base FROM profiles WHERE id = ?`, id).Scan(&pk, &base)
	if errors.Is(err, sql.ErrNoRows) {
		return cols, fmt.Errorf("window of %s: %w", id, subsecond.ErrNotFound)
	}
	if err != nil {
		return cols, fmt.Errorf("window of %s: %w", id, err)
	}
	if r.Empty() {
		return cols, nil
	}
	periods, err := eventPeriods(ctx, tx, pk)
	if err != nil {
		return cols, fmt.Errorf("window of %s: %w", id, err)
	}
	q, args := windowQuery(pk, base, r, cpus)
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return cols, fmt.Errorf("window of %s: %w", id, err)
	}
	defer rows.Close()
	v := make([]driver.Value, 8)
	var x [8]int64
	for rows.Next() {
		if err := rows.Scan(&x[0], &x[1], &x[2], &x[3], &x[4], &x[5], &x[6], &x[7]); err != nil {
			return cols, fmt.Errorf("window of %s: %w", id, err)
		}
		for i := range x {
			v[i] = x[i]
		}
		appendSample(&cols, base, periods, v, uint32(x[4]), int32(x[7]))
	}
	if err := rows.Err(); err != nil {
		return cols, fmt.Errorf("window of %s: %w", id, err)
	}
	return cols, nil
}

// windowQuery builds the samples query of Window. Times are converted to
// offsets from base, clamped so that the subtraction cannot overflow.
func windowQuery(pk, base int64, r subsecond.Range, cpus []int32) (string, []any) {
	rel := func(t int64) int64 {
		switch {
		case base > 0 && t < subsecond.NoTime+base+1:
			return subsecond.NoTime + 1
		case base < 0 && t > -1-(-1<<63)+base:
			return 1<<63 - 1
		}
		return t - base
	}
	var b strings.Builder
	b.WriteString(`SELECT t, cpu, pid, tid, comm, event, weight, stack FROM samples WHERE profile = ? AND t >= ? AND t < ?`)
	args := []any{pk, rel(r.Start), rel(r.End)}
	if len(cpus) > 0 {
		b.WriteString(` AND cpu IN (`)
		for i, c := range cpus {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('?')
			args = append(args, int64(c))
		}
		b.WriteByte(')')
	}
	b.WriteString(` ORDER BY t, seq`)
	return b.String(), args
}

// captureCache keeps the most recently used captures. Concurrent requests
// for the same capture share one load.
type captureCache struct {
	mu      sync.Mutex
	max     int
	entries []*cacheEntry // most recently used first
}

type cacheEntry struct {
	id    string
	ready chan struct{}
	c     *subsecond.Capture
	err   error
}

func newCaptureCache(max int) *captureCache { return &captureCache{max: max} }

// get returns the cached capture id, loading it with load if absent.
func (cc *captureCache) get(ctx context.Context, id string, load func() (*subsecond.Capture, error)) (*subsecond.Capture, error) {
	cc.mu.Lock()
	var e *cacheEntry
	for i, x := range cc.entries {
		if x.id == id {
			e = x
			copy(cc.entries[1:i+1], cc.entries[:i])
			cc.entries[0] = e
			break
		}
	}
	if e != nil {
		cc.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e.err != nil && ctx.Err() == nil && (errors.Is(e.err, context.Canceled) || errors.Is(e.err, context.DeadlineExceeded)) {
			return cc.get(ctx, id, load) // the caller that loaded it gave up; load it again
		}
		if e.err != nil {
			return nil, e.err
		}
		return e.c, nil
	}
	e = &cacheEntry{id: id, ready: make(chan struct{})}
	cc.entries = append([]*cacheEntry{e}, cc.entries...)
	if len(cc.entries) > cc.max {
		cc.entries = cc.entries[:cc.max]
	}
	cc.mu.Unlock()

	e.c, e.err = load()
	close(e.ready)
	if e.err != nil {
		cc.drop(e)
	}
	return e.c, e.err
}

// put caches c as capture id, most recently used.
func (cc *captureCache) put(id string, c *subsecond.Capture) {
	e := &cacheEntry{id: id, ready: make(chan struct{}), c: c}
	close(e.ready)
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.entries = slices.DeleteFunc(cc.entries, func(x *cacheEntry) bool { return x.id == id })
	cc.entries = append([]*cacheEntry{e}, cc.entries...)
	if len(cc.entries) > cc.max {
		cc.entries = cc.entries[:cc.max]
	}
}

// remove forgets capture id.
func (cc *captureCache) remove(id string) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for i, x := range cc.entries {
		if x.id == id {
			cc.entries = append(cc.entries[:i], cc.entries[i+1:]...)
			return
		}
	}
}

// drop forgets entry e if it is still cached.
func (cc *captureCache) drop(e *cacheEntry) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for i, x := range cc.entries {
		if x == e {
			cc.entries = append(cc.entries[:i], cc.entries[i+1:]...)
			return
		}
	}
}
