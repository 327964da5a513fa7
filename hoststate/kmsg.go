package hoststate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"syscall"
	"time"

	"github.com/subsecond/subsecond"
)

// DefaultMarkerPattern matches kernel log lines worth a marker: NIC
// watchdogs, transmit timeouts and resets ("NETDEV WATCHDOG: eth0 (mlx5_core):
// transmit queue 3 timed out", "Reset adapter", "resetting"), hung tasks
// ("blocked for more than 120 seconds"), soft and hard lockups, and OOM
// kills ("Out of memory", "oom-kill:", "Killed process"; not "invoked
// oom-killer", the first line of the same kill). It ignores case.
const DefaultMarkerPattern = `(?i)NETDEV WATCHDOG|transmit queue \d+ timed out|\btx timeout|\breset adapter|\bresetting\b|\bpf reset\b|blocked for more than \d+ seconds|soft lockup|hard lockup|out of memory|\boom-kill:|killed process`

// DefaultMarkers returns DefaultMarkerPattern compiled.
func DefaultMarkers() *regexp.Regexp { return regexp.MustCompile(DefaultMarkerPattern) }

// KmsgRecord is one record of /dev/kmsg (the kernel's
// Documentation/ABI/testing/dev-kmsg): "pri,seq,usec,flags[,…];message\n"
// followed by continuation lines (" KEY=value\n") that it leaves out.
type KmsgRecord struct {
	// Priority is the syslog facility × 8 plus the level.
	Priority uint64
	// Seq is the record's sequence number; a gap means records were
	// overwritten before they were read.
	Seq uint64
	// Usec is when the record was logged, microseconds of the kernel's
	// monotonic clock since boot.
	Usec uint64
	// Message is the text, kernel-escaped (\xNN for unprintable bytes); it
	// aliases the parsed bytes.
	Message []byte
}

// ParseKmsg parses one /dev/kmsg record, as one read of /dev/kmsg returns
// it. The prefix must have at least the three numbers pri, seq and usec
// before its ';'; fields after them (flags, caller) are ignored.
func ParseKmsg(b []byte) (KmsgRecord, error) {
	var r KmsgRecord
	semi := bytes.IndexByte(b, ';')
	if nl := bytes.IndexByte(b, '\n'); semi < 0 || (nl >= 0 && nl < semi) {
		return r, invalid("/dev/kmsg", 1, "want pri,seq,usec,flags;message")
	}
	prefix, msg := b[:semi], b[semi+1:]
	for _, dst := range [...]*uint64{&r.Priority, &r.Seq, &r.Usec} {
		f := prefix
		if j := bytes.IndexByte(prefix, ','); j >= 0 {
			f, prefix = prefix[:j], prefix[j+1:]
		} else {
			prefix = nil
		}
		n, ok := parseUint(f)
		if !ok {
			return r, invalid("/dev/kmsg", 1, "want pri,seq,usec before ';', got %q", b[:semi])
		}
		*dst = n
	}
	if i := bytes.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	r.Message = msg
	return r, nil
}

// FollowKmsg reads the kernel log at path ("" for /dev/kmsg) from its end,
// so that only records logged from now on count (those stamped before it
// opened path are skipped), and calls emit with a
// marker for each record whose message match matches (every record when
// match is nil). A marker's Time is the record's monotonic time moved to
// the wall clock by the current CLOCK_REALTIME − CLOCK_MONOTONIC offset;
// its Text is the message cut to subsecond.MaxMarkerText bytes. Records
// overwritten before they were read (EPIPE) are skipped. FollowKmsg
// returns nil when ctx ends, emit's error, or the error that stopped the
// reading, such as a path that cannot be opened (not root, no /dev/kmsg in
// a container).
func FollowKmsg(ctx context.Context, path string, match *regexp.Regexp, emit func(subsecond.Marker) error) error {
	if path == "" {
		path = "/dev/kmsg"
	}
	// Non-blocking, /dev/kmsg joins Go's poller, so a read deadline can
	// interrupt a read that waits for the next record.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("follow kernel log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		return fmt.Errorf("follow kernel log: %w", err)
	}
	// SEEK_END is the kernel's best guess at the next record: it may still
	// return a few older ones, and a record is readable only once it is
	// complete (a line without its newline waits for the next record).
	// Records stamped before the open are old.
	off, err := realtimeOffset()
	if err != nil {
		return fmt.Errorf("follow kernel log: %w", err)
	}
	opened := time.Now().UnixNano() - off
	stop := context.AfterFunc(ctx, func() { f.SetReadDeadline(time.Now()) })
	defer stop()
	buf := make([]byte, 16<<10) // a read shorter than a record fails
	for {
		n, err := f.Read(buf)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, syscall.EPIPE):
			continue
		case err != nil:
			return fmt.Errorf("follow kernel log: %w", err)
		}
		r, err := ParseKmsg(buf[:n])
		if err != nil {
			continue // not a record the documentation describes: skip it
		}
		if int64(r.Usec)*1000 < opened || (match != nil && !match.Match(r.Message)) {
			continue
		}
		off, err = realtimeOffset()
		if err != nil {
			return fmt.Errorf("follow kernel log: %w", err)
		}
		m := subsecond.Marker{
			Time: off + int64(r.Usec)*1000,
			Text: string(cut(r.Message, subsecond.MaxMarkerText)),
		}
		if err := emit(m); err != nil {
			return err
		}
	}
}
