package hoststate

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
)

func TestDefaultMarkers(t *testing.T) {
	re := DefaultMarkers()
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 3 timed out 5312 ms", true},
		{"ixgbe 0000:01:00.0 eth1: Detected Tx Unit Hang", false},
		{"i40e 0000:3b:00.0 eth0: tx_timeout: VSI_seid: 390, Q 7, NTC: 0x1f4, HWB: 0x1f4, NTU: 0x1f5, TAIL: 0x1f5, INT: 0x1", false},
		{"mlx5_core 0000:3b:00.0 eth0: TX timeout on queue: 3", true},
		{"ena 0000:00:05.0 eth0: TX hasn't completed, qid 2; transmit queue 2 timed out", true},
		{"ixgbe 0000:01:00.0 eth1: Reset adapter", true},
		{"e1000e 0000:00:19.0 eno1: Reset adapter unexpectedly", true},
		{"bnxt_en 0000:5e:00.0 eth2: Resetting", true},
		{"i40e 0000:3b:00.0: TX driver issue detected, PF reset issued", true},
		{"INFO: task kworker/u192:3:12345 blocked for more than 122 seconds.", true},
		{"watchdog: BUG: soft lockup - CPU#17 stuck for 23s! [ksoftirqd/17:112]", true},
		{"Watchdog detected hard LOCKUP on cpu 18", true},
		{"Out of memory: Killed process 4242 (python3) total-vm:8123456kB", true},
		{"oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),task=python3,pid=4242,uid=1000", true},
		{"python3 invoked oom-killer: gfp_mask=0x140cca, order=0, oom_score_adj=0", false},
		{"eth0: link up", false},
		{"mlx5_core 0000:3b:00.0 eth0: Link up", false},
		{"usb 1-1: new high-speed USB device number 2 using xhci_hcd", false},
		{"EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode", false},
		{"systemd[1]: Started Session 12 of user root.", false},
		{"ACPI: PM-Timer IO Port: 0x608", false},
		{"presetting the clock", false},
	} {
		if got := re.MatchString(tc.line); got != tc.want {
			t.Errorf("DefaultMarkers().MatchString(%q) = %v; want %v", tc.line, got, tc.want)
		}
	}
}

func TestParseKmsg(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    KmsgRecord
		wantErr string
	}{
		{"6,339,5140900,-;NET: Registered protocol family 10\n", KmsgRecord{6, 339, 5140900, []byte("NET: Registered protocol family 10")}, ""},
		{"7,160,424069,-;pci_root PNP0A03:00: host bridge window [io  0x0000-0x0cf7]\n SUBSYSTEM=acpi\n DEVICE=+acpi:PNP0A03:00\n", KmsgRecord{7, 160, 424069, []byte("pci_root PNP0A03:00: host bridge window [io  0x0000-0x0cf7]")}, ""},
		{"4,1202,86400123456,-,caller=T0;cut here\n", KmsgRecord{4, 1202, 86400123456, []byte("cut here")}, ""},
		{"5,0,0,-;\n", KmsgRecord{5, 0, 0, []byte("")}, ""},
		{"6,339;no usec\n", KmsgRecord{}, `/dev/kmsg line 1: want pri,seq,usec before ';', got "6,339"`},
		{"6,x,5140900,-;bad seq\n", KmsgRecord{}, "want pri,seq,usec before ';'"},
		{"no prefix\n SUBSYSTEM=a;b\n", KmsgRecord{}, "/dev/kmsg line 1: want pri,seq,usec,flags;message"},
	} {
		got, err := ParseKmsg([]byte(tc.in))
		call := fmt.Sprintf("ParseKmsg(%q)", tc.in)
		if checkErr(t, call, err, tc.wantErr) && (got.Priority != tc.want.Priority || got.Seq != tc.want.Seq || got.Usec != tc.want.Usec || !bytes.Equal(got.Message, tc.want.Message)) {
			t.Errorf("%s = %d,%d,%d,%q; want %d,%d,%d,%q", call, got.Priority, got.Seq, got.Usec, got.Message, tc.want.Priority, tc.want.Seq, tc.want.Usec, tc.want.Message)
		}
	}
}

// TestKmsgStream parses testdata/kmsg.txt, records as reads of /dev/kmsg
// return them, one after another, and checks which become markers.
func TestKmsgStream(t *testing.T) {
	b, err := os.ReadFile("testdata/kmsg.txt")
	if err != nil {
		t.Fatal(err)
	}
	// A record starts on a line that does not start with a space.
	var records [][]byte
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		switch {
		case len(line) == 0:
		case line[0] == ' ' && len(records) > 0:
			records[len(records)-1] = append(records[len(records)-1], line...)
		default:
			records = append(records, append([]byte(nil), line...))
		}
	}
	re := DefaultMarkers()
	var got []string
	seq := uint64(1201)
	for _, rec := range records {
		r, err := ParseKmsg(rec)
		if err != nil {
			t.Fatalf("ParseKmsg(%q) = %v", rec, err)
		}
		if r.Seq != seq {
			t.Errorf("ParseKmsg(%q).Seq = %d; want %d", rec, r.Seq, seq)
		}
		seq++
		if re.Match(r.Message) {
			got = append(got, fmt.Sprintf("%d %s", r.Usec, r.Message))
		}
	}
	want := []string{
		"86400123460 NETDEV WATCHDOG: eth0 (mlx5_core): transmit queue 3 timed out 5312 ms",
		"86400223460 mlx5_core 0000:3b:00.0 eth0: mlx5e_tx_timeout_work:170:(pid 8123): TX timeout on queue: 3, SQ: 0x1e8, CQ: 0x4a1",
		"86401000000 ixgbe 0000:01:00.0 eth1: Reset adapter",
		"86402000000 bnxt_en 0000:5e:00.0 eth2: Resetting",
		"90000000000 INFO: task kworker/u192:3:12345 blocked for more than 122 seconds.",
		"91000000000 watchdog: BUG: soft lockup - CPU#17 stuck for 23s! [ksoftirqd/17:112]",
		"91000000001 Watchdog detected hard LOCKUP on cpu 18",
		"92000000100 oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0-1,oom_memcg=/kubepods/pod1,task_memcg=/kubepods/pod1/c1,task=python3,pid=4242,uid=1000",
		"92000000200 Memory cgroup out of memory: Killed process 4242 (python3) total-vm:8123456kB, anon-rss:4012345kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:8000kB oom_score_adj:0",
		`93500000000 subsecond-test NETDEV WATCHDOG marker 12345\x0a`,
	}
	if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
		t.Errorf("markers of testdata/kmsg.txt =\n%s\nwant\n%s", g, w)
	}
}

func TestFollowKmsgNoFile(t *testing.T) {
	err := FollowKmsg(context.Background(), "/nonexistent/kmsg", nil, func(subsecond.Marker) error { return nil })
	if !os.IsNotExist(err) && (err == nil || !strings.Contains(err.Error(), "no such file")) {
		t.Errorf("FollowKmsg(/nonexistent/kmsg) = %v; want a not-exist error", err)
	}
}

// TestFollowKmsgReal writes a line to this host's /dev/kmsg while
// FollowKmsg follows it, and waits for its marker.
func TestFollowKmsgReal(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/dev/kmsg is Linux's")
	}
	if os.Geteuid() != 0 {
		t.Skip("writing /dev/kmsg needs root")
	}
	r, err := os.Open("/dev/kmsg")
	if err != nil {
		t.Skipf("/dev/kmsg is not readable: %v", err)
	}
	r.Close()
	w, err := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("/dev/kmsg is not writable: %v", err)
	}
	defer w.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	text := fmt.Sprintf("subsecond-test NETDEV WATCHDOG marker %d", rand.Uint64())
	markers := make(chan subsecond.Marker, 100)
	done := make(chan error, 1)
	go func() {
		done <- FollowKmsg(ctx, "", DefaultMarkers(), func(m subsecond.Marker) error {
			if m.Text == text {
				markers <- m
			}
			return nil
		})
	}()
	// FollowKmsg skips what was logged before it opened /dev/kmsg, and
	// says nothing when it has: write until the line is seen. The newline
	// completes the record; without it the kernel holds the record back
	// for a continuation until the next one comes.
	start := time.Now()
	deadline := time.After(2 * time.Second)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var m subsecond.Marker
wait:
	for {
		if _, err := w.Write([]byte("<6>" + text + "\n")); err != nil {
			t.Fatalf("write /dev/kmsg: %v", err)
		}
		select {
		case m = <-markers:
			break wait
		case err := <-done:
			t.Fatalf("FollowKmsg = %v before the marker came", err)
		case <-deadline:
			t.Fatalf("no marker %q within 2 s", text)
		case <-tick.C:
		}
	}
	now := time.Now()
	if d := time.Unix(0, m.Time).Sub(now); d < -2*time.Second || d > 2*time.Second {
		t.Errorf("marker time %v is %v from now %v; want within 2 s", time.Unix(0, m.Time), d, now)
	}
	t.Logf("marker after %v, its time %v from now", now.Sub(start), time.Unix(0, m.Time).Sub(now))
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("FollowKmsg after cancel = %v; want nil", err)
		}
	case <-time.After(2 * time.Second):
		t.Errorf("FollowKmsg still running 2 s after its context ended")
	}
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"longer than ten", 10, "longer tha"},
		{"ééééé", 5, "éé"},  // 10 bytes: the third é would be split
		{"aéééé", 5, "aéé"}, // ends on a whole é
		{"日本語", 7, "日本"},    // 3-byte runes
		{strings.Repeat("x", subsecond.MaxMarkerText+5), subsecond.MaxMarkerText, strings.Repeat("x", subsecond.MaxMarkerText)},
	} {
		if got := string(cut([]byte(tc.in), tc.max)); got != tc.want {
			t.Errorf("cut(%q, %d) = %q; want %q", tc.in, tc.max, got, tc.want)
		}
	}
}
