package sqlite

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mattn/go-sqlite3"
)

func TestUnavailable(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"busy", sqlite3.Error{Code: sqlite3.ErrBusy}, true},
		{"locked", fmt.Errorf("list: %w", sqlite3.Error{Code: sqlite3.ErrLocked}), true},
		{"full", sqlite3.Error{Code: sqlite3.ErrFull}, false},
		{"constraint", sqlite3.Error{Code: sqlite3.ErrConstraint}, false},
		{"other", errors.New("bad"), false},
		{"nil", nil, false},
	} {
		if got := unavailable(tt.err); got != tt.want {
			t.Errorf("unavailable(%s: %v) = %v; want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
