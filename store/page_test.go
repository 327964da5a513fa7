package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
)

// eventCapture returns a capture of one sample of each of n events on one CPU,
// and then extra more samples of the last, distinct per seed.
func eventCapture(seed, n, extra int) string {
	var b strings.Builder
	for i := range n + extra {
		fmt.Fprintf(&b, "a 1 [000] %d.%06d: 1 e%d_%d: \n\tffff f (k)\n\n", seed+1, i, seed, min(i, n-1))
	}
	return b.String()
}

// TestPage: the profile list comes a page at a time, newest first, each
// page naming the next's cursor, and its entries carry a summary of their
// events (how many, and the one with most samples) instead of every name;
// a profile alone has them all. Before, every list held every event of
// every profile: 50 captures of 65,535 event names made it 105 MB.
func TestPage(t *testing.T) {
	forEach(t, store.Options{}, func(t *testing.T, e *env) {
		ctx := context.Background()
		var ids []string
		for i := range 7 {
			p, _, err := e.s.Import(ctx, strings.NewReader(eventCapture(i, 300, i)), store.ImportOptions{Name: fmt.Sprint("c", i)})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, p.ID)
		}
		slices.Reverse(ids) // newest first

		var got []string
		after := ""
		for pages := 0; ; pages++ {
			list, next, err := e.s.Page(ctx, 3, after)
			if err != nil {
				t.Fatalf("Page(3, %q): %v", after, err)
			}
			if len(list) > 3 || pages > 3 {
				t.Fatalf("Page(3, %q) = %d profiles, page %d", after, len(list), pages)
			}
			for _, p := range list {
				got = append(got, p.ID)
				seed := 6 - slices.Index(ids, p.ID)
				top := subsecond.EventCount{Name: fmt.Sprintf("e%d_299", seed), Samples: int64(1 + seed)}
				if seed == 0 {
					top.Name = "e0_0"
				}
				if p.EventCount != 300 || len(p.Events) != 1 || p.Events[0] != top {
					t.Errorf("list entry %s: %d events, %v; want 300 events and only the top one, %v", p.Name, p.EventCount, p.Events, top)
				}
			}
			if next == "" {
				break
			}
			if next != list[len(list)-1].ID {
				t.Errorf("next = %q; want the page's last ID %q", next, list[len(list)-1].ID)
			}
			after = next
		}
		if !slices.Equal(got, ids) {
			t.Errorf("pages list %v; want every profile once, newest first: %v", got, ids)
		}
		all, err := e.s.List(ctx)
		if err != nil || len(all) != 7 || all[0].ID != ids[0] || len(all[0].Events) != 1 {
			t.Errorf("List() = %d profiles, %v; want all 7 summarised", len(all), err)
		}
		p, err := e.s.Profile(ctx, ids[0])
		if err != nil || len(p.Events) != 300 || p.EventCount != 300 || p.Events[299] != (subsecond.EventCount{Name: "e6_299", Samples: 7}) {
			t.Errorf("Profile() = %v; want all 300 events", err)
		}
		for _, bad := range []string{"nosuchprofileaaaaaaaaaaaaa", "../x"} {
			if _, _, err := e.s.Page(ctx, 3, bad); !errors.Is(err, subsecond.ErrNotFound) {
				t.Errorf("Page(3, %q) = %v; want ErrNotFound", bad, err)
			}
		}
	})
}
