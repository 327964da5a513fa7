package store_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/store"
)

// Each of hostWrites' posts is large enough that a kill lands inside it:
// markerPost markers, seriesCPUs series of seriesPoints points each, or
// MaxLabels labels.
const (
	markerPost   = 10000
	seriesCPUs   = 96
	seriesPoints = 2000
	killHost     = "node-k"
)

// hostWrite makes post i of a kind: markers, series or labels, each post
// told apart from the others by its time range (markers, series) or its
// value (labels).
func hostWrite(ctx context.Context, s *store.Store, kind string, i int) error {
	base := t0 + int64(i)*1e13
	switch kind {
	case "markers":
		ms := make([]subsecond.Marker, markerPost)
		for j := range ms {
			ms[j] = subsecond.Marker{Time: base + int64(j)*1e6, Text: fmt.Sprintf("post %d marker %d", i, j)}
		}
		_, err := s.AddMarkers(ctx, killHost, ms)
		return err
	case "series":
		ss := make([]subsecond.Series, seriesCPUs)
		for c := range ss {
			ss[c] = subsecond.Series{Name: "cpu.sys", CPU: int32(c)}
			for j := range seriesPoints {
				ss[c].Points = append(ss[c].Points, subsecond.Point{Time: base + int64(j)*1e9, Value: float64(i)})
			}
		}
		_, err := s.AddSeries(ctx, killHost, ss)
		return err
	case "labels":
		ls := make([]subsecond.Label, subsecond.MaxLabels)
		for j := range ls {
			ls[j] = subsecond.Label{Key: fmt.Sprintf("k%02d", j), Value: fmt.Sprintf("post %d", i) + strings.Repeat("v", 200)}
		}
		return s.SetHostLabels(ctx, killHost, ls, nil)
	}
	return fmt.Errorf("no kind of host write %q", kind)
}

// TestHelperHostWrites is not a test on its own: TestKillMidHostWrite
// runs the test binary again with SUBSECOND_HELPER_WRITES set, and this
// function then writes posts of that kind to a host, saying when each
// begins and how long it took, until it is killed.
func TestHelperHostWrites(t *testing.T) {
	kind := os.Getenv("SUBSECOND_HELPER_WRITES")
	if kind == "" {
		return
	}
	s := store.New(helperBackend(), store.Options{})
	for i := 1; ; i++ {
		fmt.Println("begin", i)
		start := time.Now()
		if err := hostWrite(context.Background(), s, kind, i); err != nil {
			fmt.Println("failed:", err)
			os.Exit(3)
		}
		fmt.Println("done", i, time.Since(start).Nanoseconds())
	}
}

// TestKillMidHostWrite kills a process half-way through a post of
// markers, of series and of labels (at a quarter of the time its shortest
// earlier post took; a post of markers or series takes tens of milliseconds, the kill
// must come before it ends): each post is stored whole or not at all, what
// was stored before stays, and the host takes the next post.
func TestKillMidHostWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a writing child process; run without -short")
	}
	for _, kind := range []string{"markers", "series", "labels"} {
		t.Run(kind, func(t *testing.T) {
			forEach(t, store.Options{}, func(t *testing.T, e *env) {
				ctx := context.Background()
				cmd, out := startHelper(t, e, "TestHelperHostWrites", "SUBSECOND_HELPER_WRITES="+kind)
				// Three posts finish; the fourth is killed a quarter in.
				const killed = 4
				sc := bufio.NewScanner(out)
				took := time.Hour // the shortest post
				for sc.Scan() {
					f := strings.Fields(sc.Text())
					if len(f) == 3 && f[0] == "done" {
						ns, _ := strconv.ParseInt(f[2], 10, 64)
						took = min(took, time.Duration(ns))
					}
					if sc.Text() == "begin "+strconv.Itoa(killed) {
						break
					}
					if f[0] != "begin" && f[0] != "done" {
						cmd.Process.Kill()
						t.Fatalf("child said %q", sc.Text())
					}
				}
				time.Sleep(took / 4)
				rest := killHelper(t, cmd, out)
				// A post of labels takes a fraction of a millisecond: the
				// kill may come after it, which only leaves it stored.
				if kind != "labels" && strings.Contains(string(rest), "done") {
					t.Fatalf("the child finished post %d before the kill (%q; the shortest before took %s): the kill was not inside it",
						killed, rest, took)
				}

				// A PostgreSQL server rolls the killed connection's
				// transaction back on its own time: posts 1 to 3 are
				// there at once, the fourth whole or gone.
				var posts []int
				var err error
				for try := 0; try < 50; try++ {
					if posts, err = storedPosts(ctx, e.fresh(), kind, killed); err == nil {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(posts) < killed-1 || len(posts) > killed && kind != "labels" {
					t.Fatalf("posts stored after the kill: %v; want 1 to %d, and %d whole or not at all", posts, killed-1, killed)
				}
				if e.name == "sqlite" {
					var check string
					if err := e.db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
						t.Errorf("integrity_check after the kill = %q, %v", check, err)
					}
				}
				if err := hostWrite(ctx, e.s, kind, killed+1); err != nil {
					t.Fatalf("post %d after the kill: %v", killed+1, err)
				}
				if posts, err = storedPosts(ctx, e.fresh(), kind, killed+1); err != nil || posts[len(posts)-1] != killed+1 {
					t.Errorf("posts after the next one = %v, %v; want it last", posts, err)
				}
			})
		})
	}
}

// storedPosts returns which of posts 1 to n of kind the host holds, or an
// error when one is there in part.
func storedPosts(ctx context.Context, s *store.Store, kind string, n int) ([]int, error) {
	var posts []int
	switch kind {
	case "markers":
		for i := 1; i <= n; i++ {
			base := t0 + int64(i)*1e13
			ms, err := s.Markers(ctx, killHost, base, base+1e13)
			if err != nil {
				return nil, err
			}
			switch len(ms) {
			case markerPost:
				posts = append(posts, i)
			case 0:
			default:
				return nil, fmt.Errorf("post %d: %d of its %d markers stored", i, len(ms), markerPost)
			}
		}
	case "series":
		for i := 1; i <= n; i++ {
			base := t0 + int64(i)*1e13
			ss, err := s.Series(ctx, killHost, "cpu.sys", base, base+1e13)
			if err != nil {
				return nil, err
			}
			points := 0
			for _, x := range ss {
				points += len(x.Points)
			}
			switch points {
			case seriesCPUs * seriesPoints:
				posts = append(posts, i)
			case 0:
			default:
				return nil, fmt.Errorf("post %d: %d of its %d points stored", i, points, seriesCPUs*seriesPoints)
			}
		}
	case "labels":
		// Each post sets every label: the host holds the last post's
		// labels, all of them from one post.
		all, err := s.HostLabels(ctx)
		if err != nil {
			return nil, err
		}
		last, set := map[string]bool{}, 0
		for _, l := range all[killHost] {
			if strings.HasPrefix(l.Key, "k") {
				last[strings.TrimRight(l.Value, "v")] = true
				set++
			}
		}
		if len(last) != 1 || set != subsecond.MaxLabels {
			return nil, fmt.Errorf("the host holds %d of a post's %d labels, from %d posts: %v", set, subsecond.MaxLabels, len(last), last)
		}
		for v := range last {
			i, err := strconv.Atoi(strings.TrimPrefix(v, "post "))
			if err != nil {
				return nil, fmt.Errorf("label value %q", v)
			}
			for j := 1; j <= i; j++ {
				posts = append(posts, j)
			}
		}
	}
	return posts, nil
}

// helperBackend opens the database a helper process was started on (see
// startHelper), or ends the process saying why it could not.
func helperBackend() store.Backend {
	b, err := reopen(os.Getenv("SUBSECOND_HELPER_BACKEND"), os.Getenv("SUBSECOND_HELPER_DB"))
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	return b
}

// startHelper runs the test binary again as the helper test named, on e's
// database (SUBSECOND_HELPER_BACKEND and _DB, and env), and returns it
// with its standard output.
func startHelper(t *testing.T, e *env, helper string, env ...string) (*exec.Cmd, io.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+helper+"$")
	cmd.Env = append(os.Environ(), append([]string{"SUBSECOND_HELPER_BACKEND=" + e.name, "SUBSECOND_HELPER_DB=" + e.where}, env...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out
}

// killHelper kills cmd with SIGKILL and returns what it wrote after what
// was read of out, failing unless the kill is what ended it.
func killHelper(t *testing.T, cmd *exec.Cmd, out io.Reader) []byte {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(out)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child exit = %v; want killed by SIGKILL", err)
	}
	return rest
}
