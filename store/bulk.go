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
*/
import "C"

import (
	"database/sql/driver"
	"fmt"
	"reflect"
	"strings"
	"unsafe"
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
