package store

/*
#include <stdint.h>

// The SQLite library is the one github.com/mattn/go-sqlite3 links into the
// binary; only the few functions used here are declared.
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
int sqlite3_bind_int64(sqlite3_stmt*, int, long long);
int sqlite3_step(sqlite3_stmt*);
int sqlite3_reset(sqlite3_stmt*);
sqlite3 *sqlite3_db_handle(sqlite3_stmt*);
const char *sqlite3_errmsg(sqlite3*);

enum { bulkOK = 0, bulkDone = 101 };

// bulk_insert stores rows rows of cols integers each, row-major in v,
// through many (per rows per statement) and then one (a single row). It
// returns SQLite's result code, 0 on success.
static int bulk_insert(sqlite3_stmt *many, int per, sqlite3_stmt *one, const int64_t *v, int rows, int cols) {
	int r = 0;
	while (r < rows) {
		sqlite3_stmt *st = rows - r >= per ? many : one;
		int n = (st == many ? per : 1) * cols;
		for (int i = 0; i < n; i++) {
			int rc = sqlite3_bind_int64(st, i + 1, v[i]);
			if (rc != bulkOK) {
				return rc;
			}
		}
		int rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc != bulkDone) {
			return rc;
		}
		v += n;
		r += n / cols;
	}
	return bulkOK;
}

int sqlite3_column_type(sqlite3_stmt*, int);
long long sqlite3_column_int64(sqlite3_stmt*, int);

enum { bulkRow = 100, bulkBadValue = -1, bulkInteger = 1 };

// read_samples steps st, a query of the samples columns t, cpu, pid, tid,
// comm, event, weight, stack, and appends up to max rows to the columns,
// converted as appendSample converts them (weights are as stored). It sets
// *got to the number of rows read and returns bulkRow when max rows were
// read, bulkDone at the end of the rows, bulkBadValue (with *got at the
// offending row) for a value that is not an integer or a comm or stack out
// of range, or SQLite's error code.
static int read_samples(sqlite3_stmt *st, int64_t *t, int32_t *cpu, int32_t *pid, int32_t *tid, uint32_t *comm,
		uint16_t *ev, uint64_t *w, int32_t *stack, int max, int *got) {
	int i = 0;
	*got = 0;
	while (i < max) {
		int rc = sqlite3_step(st);
		if (rc != bulkRow) {
			*got = i;
			return rc;
		}
		for (int c = 0; c < 8; c++) {
			if (sqlite3_column_type(st, c) != bulkInteger) {
				*got = i;
				return bulkBadValue;
			}
		}
		long long cm = sqlite3_column_int64(st, 4), sk = sqlite3_column_int64(st, 7);
		if (cm < 0 || cm > 4294967295LL || sk < 0 || sk > 2147483647LL) {
			*got = i;
			return bulkBadValue;
		}
		t[i] = sqlite3_column_int64(st, 0);
		cpu[i] = (int32_t)sqlite3_column_int64(st, 1);
		pid[i] = (int32_t)sqlite3_column_int64(st, 2);
		tid[i] = (int32_t)sqlite3_column_int64(st, 3);
		comm[i] = (uint32_t)cm;
		ev[i] = (uint16_t)sqlite3_column_int64(st, 5);
		w[i] = (uint64_t)sqlite3_column_int64(st, 6);
		stack[i] = (int32_t)sk;
		i++;
	}
	*got = i;
	return bulkRow;
}
*/
import "C"

import (
	"context"
	"database/sql/driver"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"github.com/subsecond/subsecond"
)

// bulkInserter stores rows of integers with one cgo call per batch,
// binding straight from the batch's []int64. Through database/sql/driver,
// every value is boxed into an interface and bound by a cgo call of its
// own: for the 564k samples × 9 columns of the 96-CPU capture that was
// 5M calls and about 0.3 s of CPU, a tenth of the import.
//
// It runs the inserter's own prepared statements, whose SQLite handles
// go-sqlite3 does not export; rawStmt reads them by reflection, and
// newBulkInserter returns nil when that fails (another driver version),
// leaving the inserter's driver path in charge.
type bulkInserter struct {
	table     string
	cols, per int
	many, one *C.sqlite3_stmt
}

func newBulkInserter(in *inserter) *bulkInserter {
	if len(in.closers) != 2 {
		return nil
	}
	one, many := rawStmt(in.closers[0]), rawStmt(in.closers[1])
	if one == nil || many == nil {
		return nil
	}
	return &bulkInserter{table: in.table, cols: in.cols, per: in.per, one: (*C.sqlite3_stmt)(one), many: (*C.sqlite3_stmt)(many)}
}

// rawStmt returns the sqlite3_stmt handle of a go-sqlite3 statement (its
// field s), or nil.
func rawStmt(st driver.Stmt) unsafe.Pointer {
	v := reflect.ValueOf(st)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := v.Elem().FieldByName("s")
	if !f.IsValid() || f.Kind() != reflect.Pointer || !strings.HasSuffix(f.Type().Elem().Name(), "sqlite3_stmt") || f.IsNil() {
		return nil
	}
	return f.UnsafePointer()
}

// insert stores rows, which hold whole rows of b.cols values.
func (b *bulkInserter) insert(rows []int64) error {
	n := len(rows) / b.cols
	if n == 0 {
		return nil
	}
	rc := C.bulk_insert(b.many, C.int(b.per), b.one, (*C.int64_t)(unsafe.Pointer(&rows[0])), C.int(n), C.int(b.cols))
	if rc != C.bulkOK {
		return fmt.Errorf("insert %s: %s (code %d)", b.table, C.GoString(C.sqlite3_errmsg(C.sqlite3_db_handle(b.one))), int(rc))
	}
	return nil
}

// readChunk is the number of rows readSamplesRaw reads per cgo call,
// between which it checks for cancellation.
const readChunk = 1 << 16

// readSamplesRaw appends the rows of a prepared samples query (see
// read_samples) to cols, restoring absolute times and implied weights as
// appendSample does. It reads 64k rows per cgo call: through
// database/sql/driver each row is a cgo call and eight boxed values.
func readSamplesRaw(ctx context.Context, st unsafe.Pointer, base int64, periods []uint64, cols *subsecond.Columns) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		from := cols.Len()
		grow(cols, readChunk)
		var got C.int
		rc := C.read_samples((*C.sqlite3_stmt)(st), (*C.int64_t)(unsafe.Pointer(&cols.Time[from])),
			(*C.int32_t)(unsafe.Pointer(&cols.CPU[from])), (*C.int32_t)(unsafe.Pointer(&cols.PID[from])),
			(*C.int32_t)(unsafe.Pointer(&cols.TID[from])), (*C.uint32_t)(unsafe.Pointer(&cols.Comm[from])),
			(*C.uint16_t)(unsafe.Pointer(&cols.Event[from])), (*C.uint64_t)(unsafe.Pointer(&cols.Weight[from])),
			(*C.int32_t)(unsafe.Pointer(&cols.Stack[from])), readChunk, &got)
		n := from + int(got)
		restore(cols, from, n, base, periods)
		switch rc {
		case C.bulkRow:
			continue
		case C.bulkDone:
			return nil
		case C.bulkBadValue:
			return fmt.Errorf("samples row %d holds a non-integer or out-of-range value", n)
		}
		return fmt.Errorf("read samples: %s (code %d)", C.GoString(C.sqlite3_errmsg(C.sqlite3_db_handle((*C.sqlite3_stmt)(st)))), int(rc))
	}
}

// grow extends every column of cols by n entries, and restore cuts them
// back to the rows actually read.
func grow(cols *subsecond.Columns, n int) {
	l := cols.Len() + n
	cols.Time = slices.Grow(cols.Time, n)[:l]
	cols.CPU = slices.Grow(cols.CPU, n)[:l]
	cols.PID = slices.Grow(cols.PID, n)[:l]
	cols.TID = slices.Grow(cols.TID, n)[:l]
	cols.Comm = slices.Grow(cols.Comm, n)[:l]
	cols.Event = slices.Grow(cols.Event, n)[:l]
	cols.Weight = slices.Grow(cols.Weight, n)[:l]
	cols.Stack = slices.Grow(cols.Stack, n)[:l]
}

// restore keeps the first n rows of cols and turns rows [from, n) from
// their stored form into a Capture's: absolute times, implied weights.
func restore(cols *subsecond.Columns, from, n int, base int64, periods []uint64) {
	cols.Time, cols.CPU, cols.PID, cols.TID = cols.Time[:n], cols.CPU[:n], cols.PID[:n], cols.TID[:n]
	cols.Comm, cols.Event, cols.Weight, cols.Stack = cols.Comm[:n], cols.Event[:n], cols.Weight[:n], cols.Stack[:n]
	for i := from; i < n; i++ {
		if cols.Time[i] != subsecond.NoTime {
			cols.Time[i] += base
		}
		if cols.Weight[i] == 0 {
			if ev := int(cols.Event[i]); ev < len(periods) {
				cols.Weight[i] = periods[ev]
			}
			if cols.Weight[i] == 0 {
				cols.Weight[i] = 1
			}
		}
	}
}

// bindInts binds vals to the parameters 1, 2, … of st.
func bindInts(st unsafe.Pointer, vals []int64) error {
	for i, v := range vals {
		if rc := C.sqlite3_bind_int64((*C.sqlite3_stmt)(st), C.int(i+1), C.longlong(v)); rc != C.bulkOK {
			return fmt.Errorf("bind parameter %d: %s (code %d)", i+1, C.GoString(C.sqlite3_errmsg(C.sqlite3_db_handle((*C.sqlite3_stmt)(st)))), int(rc))
		}
	}
	return nil
}
