package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
)

// TestReady checks that a freshly migrated database is ready and that a
// schema newer than this build's is reported as unavailable.
func TestReady(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			b, db, _ := be.open(t)
			s := store.New(b, store.Options{})
			ctx := context.Background()
			if err := s.Ready(ctx); err != nil {
				t.Fatalf("Ready() = %v; want nil", err)
			}
			if _, err := db.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, true)`); err != nil {
				t.Fatal(err)
			}
			err := s.Ready(ctx)
			if !errors.Is(err, subsecond.ErrUnavailable) || !errors.Is(err, subsecond.ErrSchema) || !strings.Contains(err.Error(), "9999") {
				t.Errorf("Ready() with a newer schema = %v; want ErrUnavailable and ErrSchema naming version 9999", err)
			}
		})
	}
}

// outage is a backend whose reads fail with an error it reports as an
// outage.
type outage struct{ store.Backend }

var errGone = errors.New("server closed the connection unexpectedly")

func (outage) List(context.Context, store.ListOptions) ([]subsecond.Profile, error) {
	return nil, errGone
}
func (outage) Unavailable(err error) bool { return errors.Is(err, errGone) }

// TestOutageClassified checks that the store wraps the errors its backend
// calls an outage with subsecond.ErrUnavailable, and leaves others alone.
func TestOutageClassified(t *testing.T) {
	b, _, _ := openSQLite(t)
	s := store.New(outage{b}, store.Options{})
	ctx := context.Background()
	if _, err := s.List(ctx); !errors.Is(err, subsecond.ErrUnavailable) || !errors.Is(err, errGone) {
		t.Errorf("List() = %v; want ErrUnavailable wrapping the backend's error", err)
	}
	if _, err := s.Profile(ctx, "aaaaaaaaaaaaaaaaaaaaaaaaaa"); !errors.Is(err, subsecond.ErrNotFound) || errors.Is(err, subsecond.ErrUnavailable) {
		t.Errorf("Profile(unknown) = %v; want ErrNotFound alone", err)
	}
}
