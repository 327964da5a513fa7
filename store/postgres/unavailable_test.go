package postgres

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestUnavailable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "unix", Err: &net.AddrError{Err: "connection refused"}}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"crash shutdown", &pgconn.PgError{Code: "57P02"}, true},
		{"cannot connect now", &pgconn.PgError{Code: "57P03"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"wrapped", fmt.Errorf("list: %w", &pgconn.PgError{Code: "57P01"}), true},
		{"dial refused", refused, true},
		{"connection refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"stale connection", fmt.Errorf("failed to receive message: %w", io.ErrUnexpectedEOF), true},
		{"bad conn", driver.ErrBadConn, true},
		{"closed conn", errors.New("conn closed"), true},
		{"disk full", &pgconn.PgError{Code: "53100"}, false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"syntax", &pgconn.PgError{Code: "42601"}, false},
		{"cancelled", fmt.Errorf("query: %w", context.Canceled), false},
		{"deadline", context.DeadlineExceeded, false},
		{"other", errors.New("profile x metadata: bad json"), false},
		{"nil", nil, false},
	} {
		if got := unavailable(tt.err); got != tt.want {
			t.Errorf("unavailable(%s: %v) = %v; want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
