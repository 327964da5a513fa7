package store

import "github.com/subsecond/subsecond"

// Encode returns what an import of c stores besides the profile row: its
// table segments, its chunks and its encoded comm list. Backends use it to
// convert profiles stored in an older format. c's samples must be sorted
// by time, input order among equal times, as a Capture's are.
func Encode(c *subsecond.Capture) (segs []Segment, chunks []Chunk, comms []byte) {
	in := &subsecond.Interner{Strings: c.Strings, Frames: c.Frames, Nodes: c.Nodes}
	k := newClassifier()
	k.update(in)
	s := &c.Samples
	for i := range s.Comm {
		k.comm(s.Comm[i], in)
	}
	v := k.view()
	for lo := 0; lo < s.Len(); {
		sec := chunkSecond(s.Time[lo])
		hi := lo + 1
		for hi < s.Len() && hi-lo < maxChunkSamples && chunkSecond(s.Time[hi]) == sec {
			hi++
		}
		seq := int32(0)
		if n := len(chunks); n > 0 && chunks[n-1].Second == sec {
			seq = chunks[n-1].Seq + 1
		}
		chunks = append(chunks, Chunk{Second: sec, Seq: seq, Samples: int32(hi - lo),
			Summary: encodeSummary(s, lo, hi, &v), Data: encodeChunk(s, lo, hi, c.Nodes)})
		lo = hi
	}
	return packSegments(encodeSegments(in)), chunks, encodeStrings(k.comms)
}
