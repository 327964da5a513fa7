//go:build linux && cgo

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// TestMallocArenasBounded: SQLite read from sixteen threads at once (each
// a connection of its own, as a busy server's are) leaves the C allocator
// with at most mallocArenas arenas; glibc would give each thread one.
func TestMallocArenasBounded(t *testing.T) {
	if arenas() < 0 {
		t.Fatal("the C allocator does not say its arenas (not glibc?)")
	}
	ctx := context.Background()
	db, err := sql.Open("sqlite3", filepath.Join(t.TempDir(), "a.db")+"?"+DSNParams)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(16)
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		t.Fatal(err)
	}
	for k := range 2000 {
		if _, err := db.ExecContext(ctx, `INSERT INTO t VALUES (?, ?)`, k, fmt.Sprintf("%0200d", k)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			runtime.LockOSThread() // a thread of its own, as busy goroutines get
			defer runtime.UnlockOSThread()
			<-start
			for range 20 {
				var n int
				var sum sql.NullString
				if err := db.QueryRowContext(ctx, `SELECT count(*), max(v) FROM t WHERE v LIKE '%7%'`).Scan(&n, &sum); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := arenas(); n > mallocArenas {
		t.Errorf("the C allocator holds %d arenas after SQLite ran on 16 threads; want at most %d", n, mallocArenas)
	}
}
