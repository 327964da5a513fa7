package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/subsecond/subsecond"
)

// StateOptions configure RunState. Zero fields take the defaults in
// brackets.
type StateOptions struct {
	// Sample runs the host-state sampler until ctx ends, passing each
	// sample's series to emit, which copies them (hoststate.Sampler.Run).
	Sample func(ctx context.Context, emit func([]subsecond.Series) error) error
	// Follow follows the kernel log until ctx ends, passing each line
	// worth a marker to emit (hoststate.FollowKmsg); nil for none.
	Follow func(ctx context.Context, emit func(subsecond.Marker) error) error
	// SendSeries and SendMarkers hand what was gathered to the local
	// store or the server (required). Series the host may not add
	// (subsecond.SeriesAdded.Refused) are said in the log, not sent again.
	SendSeries  func(ctx context.Context, ss []subsecond.Series) (subsecond.SeriesAdded, error)
	SendMarkers func(ctx context.Context, ms []subsecond.Marker) error
	// Flush is how often the series gathered are sent [10 s]; a marker
	// is sent at once.
	Flush time.Duration
	// MaxPoints bounds the points kept while the sink fails [4,000,000,
	// about an hour of a 96-CPU host]: past it the oldest are dropped,
	// and the log says how many.
	MaxPoints int
	// MarkerRate and MarkerBurst bound the kernel log's markers, so that
	// a flood of matching lines (a driver resetting in a loop) neither
	// floods the store nor holds up the recorder: up to MarkerBurst at
	// once, then MarkerRate a second; the others are dropped and counted
	// in the log [10, 100].
	MarkerRate  float64
	MarkerBurst int
	Log         io.Writer // one line per event [io.Discard]
}

// stateWait bounds the last send when RunState stops: an interrupted
// recorder stops promptly, as it does with a capture's upload in flight.
const stateWait = 2 * time.Second

// RunState records the host's state beside perf's captures until ctx
// ends: the sampler's series, sent every Flush, and the kernel log's
// markers, sent as they come. A sink that fails keeps what it was given to
// be sent with the next flush (within MaxPoints); one that fails with
// ErrDenied (the server refused the credentials) is offered nothing more.
// A sampler or a kernel log that cannot be read is said once in the log
// and leaves the other running, as it leaves perf's captures: RunState
// never stops the recorder. What is left when ctx ends is sent once more,
// within 2 s.
func RunState(ctx context.Context, o StateOptions) {
	if o.Flush <= 0 {
		o.Flush = 10 * time.Second
	}
	if o.MaxPoints <= 0 {
		o.MaxPoints = 4_000_000
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.MarkerRate <= 0 {
		o.MarkerRate = 10
	}
	if o.MarkerBurst <= 0 {
		o.MarkerBurst = 100
	}
	st := &stateBuffer{o: o, index: map[subsecond.SeriesKey]int{}, tokens: float64(o.MarkerBurst)}
	var wg sync.WaitGroup
	kick := make(chan struct{}, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		err := o.Sample(ctx, func(ss []subsecond.Series) error {
			st.add(ss)
			return nil
		})
		if err != nil {
			fmt.Fprintf(o.Log, "host state: not sampled any more: %v\n", err)
		}
	}()
	if o.Follow != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := o.Follow(ctx, func(m subsecond.Marker) error {
				if st.mark(m) {
					select {
					case kick <- struct{}{}:
					default:
					}
				}
				return nil
			})
			if err != nil {
				fmt.Fprintf(o.Log, "kernel log: not followed (no markers from it): %v\n", err)
			}
		}()
	}
	tick := time.NewTicker(o.Flush)
	defer tick.Stop()
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-tick.C:
			st.send(ctx, true)
		case <-kick:
			st.send(ctx, false)
		}
	}
	wg.Wait()
	last, cancel := context.WithTimeout(context.WithoutCancel(ctx), stateWait)
	defer cancel()
	st.send(last, true)
}

// stateBuffer gathers series and markers between sends.
type stateBuffer struct {
	o       StateOptions
	mu      sync.Mutex
	series  []subsecond.Series
	index   map[subsecond.SeriesKey]int
	points  int
	dropped int
	marks   []subsecond.Marker
	// tokens and filled are the markers' token bucket; flood counts the
	// markers dropped since the log last said so.
	tokens  float64
	filled  time.Time
	flood   int
	failing bool // the last send failed: said once until one succeeds
	refused int  // the most series one send had refused, said in the log
	denied  bool // the sink refused the credentials: nothing more is sent
	sending sync.Mutex
}

// add copies ss's points into the buffer, dropping the oldest past
// MaxPoints.
func (b *stateBuffer) add(ss []subsecond.Series) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range ss {
		k := ss[i].Key()
		j, ok := b.index[k]
		if !ok {
			j = len(b.series)
			b.index[k] = j
			b.series = append(b.series, subsecond.Series{Name: k.Name, CPU: k.CPU, Label: k.Label})
		}
		b.series[j].Points = append(b.series[j].Points, ss[i].Points...)
		b.points += len(ss[i].Points)
	}
	for b.points > b.o.MaxPoints {
		// Drop the oldest point of every series: the buffer keeps the
		// same span of each.
		for j := range b.series {
			if len(b.series[j].Points) > 0 {
				b.series[j].Points = b.series[j].Points[1:]
				b.points--
				b.dropped++
			}
		}
	}
}

// mark keeps m to be sent, unless the kernel log floods (see
// StateOptions.MarkerRate); it reports whether m was kept.
func (b *stateBuffer) mark(m subsecond.Marker) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if !b.filled.IsZero() {
		b.tokens = min(float64(b.o.MarkerBurst), b.tokens+now.Sub(b.filled).Seconds()*b.o.MarkerRate)
	}
	b.filled = now
	if b.tokens < 1 {
		b.flood++
		return false
	}
	b.tokens--
	b.marks = append(b.marks, m)
	return true
}

// send sends the markers gathered and, with series set, the series; what
// fails to go stays for the next send.
func (b *stateBuffer) send(ctx context.Context, series bool) {
	b.sending.Lock()
	defer b.sending.Unlock()
	if b.denied {
		return
	}
	b.mu.Lock()
	ms := b.marks
	b.marks = nil
	var ss []subsecond.Series
	if series && b.points > 0 {
		ss = b.series
		b.series, b.index, b.points = nil, map[subsecond.SeriesKey]int{}, 0
	}
	dropped, flood := b.dropped, b.flood
	b.dropped, b.flood = 0, 0
	b.mu.Unlock()
	if dropped > 0 {
		fmt.Fprintf(b.o.Log, "host state: %d points dropped, oldest first, while the sink failed\n", dropped)
	}
	if flood > 0 {
		fmt.Fprintf(b.o.Log, "kernel log: %d matching lines not made markers: more than %d at once or %g a second\n", flood, b.o.MarkerBurst, b.o.MarkerRate)
	}
	var err error
	if len(ms) > 0 {
		if err = b.o.SendMarkers(ctx, ms); err != nil {
			b.mu.Lock()
			b.marks = append(ms, b.marks...)
			b.mu.Unlock()
		}
	}
	if len(ss) > 0 {
		a, e := b.o.SendSeries(ctx, ss)
		if a.Refused > b.refused {
			b.refused = a.Refused
			fmt.Fprintf(b.o.Log, "host state: %s\n", a.Refusal("this host"))
		}
		if e != nil {
			err = e
			b.mu.Lock()
			newer := b.series
			b.series, b.index, b.points = nil, map[subsecond.SeriesKey]int{}, 0
			b.mu.Unlock()
			b.add(ss)
			b.add(newer)
		}
	}
	if errors.Is(err, ErrDenied) {
		// The captures' sender says why; this says what it means here.
		fmt.Fprintln(b.o.Log, "host state: the server refused the credentials; no series or markers will be sent in this run")
		b.denied = true
		return
	}
	if err != nil && !b.failing {
		fmt.Fprintf(b.o.Log, "host state: not sent, kept for the next try: %v\n", err)
	}
	if err == nil && b.failing && (len(ms) > 0 || len(ss) > 0) {
		fmt.Fprintln(b.o.Log, "host state: sent again")
	}
	b.failing = err != nil
}
