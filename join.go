package subsecond

// Part is a window of a capture that Join puts into another: its samples
// [Lo, Hi), their times moved by Shift nanoseconds (a capture's
// WallClock.Offset, to put them on the wall clock).
type Part struct {
	C      *Capture
	Lo, Hi int
	Shift  int64
}

// Join returns one capture of the samples of parts, in time order, their
// times moved by each part's Shift: a host's wall-clock range across the
// captures that recorded it. Strings, frames, stack nodes and events are
// interned anew, so that the same function or command in two parts is one
// entry; only what the windows use is copied. Its Profile is p with the
// figures of the joined samples filled in (events, samples, first and
// last time, CPUs, frequency); p's Host and Wall are kept as given.
func Join(p Profile, parts []Part) *Capture {
	in := NewInterner()
	st := NewStats()
	n := 0
	for _, pt := range parts {
		n += pt.Hi - pt.Lo
	}
	cols := MakeColumns(n)
	for _, pt := range parts {
		at := cols.Len()
		cols.AppendRange(&pt.C.Samples, pt.Lo, pt.Hi)
		m := newJoinMap(pt.C, in)
		for _, k := range sampleColumns {
			switch k := k.(type) {
			case *Col[uint32]:
				if k.Table == StringTable {
					s := (*k.Of(&cols))[at:]
					for i, v := range s {
						s[i] = m.string(v)
					}
				}
			case *Col[int32]:
				if k.Table == NodeTable {
					s := (*k.Of(&cols))[at:]
					for i, v := range s {
						s[i] = m.node(v)
					}
				}
			}
		}
		evs := make([]uint16, len(pt.C.Profile.Events))
		for i, e := range pt.C.Profile.Events {
			// A part has at most MaxEvents events, and so do the parts'
			// captures together in any night Subsecond stores.
			evs[i], _ = st.Event(e.Name)
		}
		t, ev, cpu := cols.Time[at:], cols.Event[at:], cols.CPU[at:]
		for i := range t {
			t[i] += pt.Shift
			ev[i] = evs[ev[i]]
			st.Count(ev[i], t[i], cpu[i])
		}
	}
	SortColumns(&cols)
	host, wall := p.Host, p.Wall
	st.Fill(&p)
	p.Host, p.Wall = host, wall
	return &Capture{Profile: p, Strings: in.Strings, Frames: in.Frames, Nodes: in.Nodes, Samples: cols}
}

// joinMap renumbers one capture's strings, frames and stack nodes into an
// Interner, each on first use.
type joinMap struct {
	c      *Capture
	in     *Interner
	str    []uint32 // new index + 1; 0 when not yet mapped
	frames []int32  // the same
	nodes  []int32  // the same
	chain  []int32
}

func newJoinMap(c *Capture, in *Interner) *joinMap {
	return &joinMap{c: c, in: in, str: make([]uint32, len(c.Strings)), frames: make([]int32, len(c.Frames)), nodes: make([]int32, len(c.Nodes))}
}

func (m *joinMap) string(i uint32) uint32 {
	if m.str[i] == 0 {
		m.str[i] = m.in.String(m.c.Strings[i]) + 1
	}
	return m.str[i] - 1
}

func (m *joinMap) frame(i int32) int32 {
	if m.frames[i] == 0 {
		r := m.c.Frames[i]
		f := Frame{Symbol: m.c.Strings[r.Symbol], DSO: m.c.Strings[r.DSO], SrcLine: m.c.Strings[r.SrcLine],
			Addr: r.Addr, Kind: r.Kind, Inline: r.Inline}
		m.frames[i] = m.in.Frame(&f) + 1
	}
	return m.frames[i] - 1
}

// node maps stack node n, and the callers it has not mapped yet.
func (m *joinMap) node(n int32) int32 {
	if n <= 0 {
		return 0
	}
	if m.nodes[n] != 0 {
		return m.nodes[n] - 1
	}
	m.chain = m.chain[:0]
	for k := n; k > 0 && m.nodes[k] == 0; k = m.c.Nodes[k].Parent {
		m.chain = append(m.chain, k)
	}
	for i := len(m.chain) - 1; i >= 0; i-- {
		k := m.chain[i]
		parent := int32(0)
		if p := m.c.Nodes[k].Parent; p > 0 {
			parent = m.nodes[p] - 1
		}
		m.nodes[k] = m.in.Node(parent, m.frame(m.c.Nodes[k].Frame)) + 1
	}
	return m.nodes[n] - 1
}
