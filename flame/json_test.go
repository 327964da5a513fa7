package flame

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
)

// jsonStrings are names that stress the escaper: JSON and HTML
// metacharacters, control characters, the line separators JavaScript
// refuses, invalid UTF-8 and multi-byte runes.
var jsonStrings = []string{
	"", "all", `a"b\c`, "<script>&amp;</script>", "tab\there\nnewline\r\b\f\x00\x01\x1f\x7f",
	"\u2028\u2029", "bad \xff\xfe utf8 \xc3", "truncated \xe2\x82", "ünïcödé 日本 🔥", "[unknown]", "a;b",
}

// checkJSONString compares appendJSONString with json.Marshal on s.
func checkJSONString(t *testing.T, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
		t.Errorf("appendJSONString(%q) = %s; want %s", s, got, want)
	}
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range jsonStrings {
		checkJSONString(t, s)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonStrings {
		f.Add(s)
	}
	f.Fuzz(checkJSONString)
}

// TestWriteJSONMatchesEncodingJSON checks the hand-written encoder against
// encoding/json writing the same fields, for a plain and a differential
// graph large enough to be written in several chunks.
func TestWriteJSONMatchesEncodingJSON(t *testing.T) {
	b := subsecond.NewBuilder()
	for i := 0; i < 3000; i++ {
		fr := []subsecond.Frame{
			{Symbol: jsonStrings[i%len(jsonStrings)] + strconv.Itoa(i%997), DSO: "/lib/" + jsonStrings[(i/7)%len(jsonStrings)], Kind: subsecond.KindUser},
			{Symbol: "mid" + string(rune('a'+i%13)), DSO: "[kernel.kallsyms]", Kind: subsecond.KindKernel},
			{Symbol: "main", DSO: "/bin/x", Kind: subsecond.KindUser},
		}
		b.Add(&subsecond.Sample{Comm: jsonStrings[i%5], PID: int32(i % 3), TID: 1, CPU: int32(i % 4), Time: int64(i) * 1e6, Event: "cpu-clock", Frames: fr})
	}
	c := b.Capture(subsecond.Profile{})
	whole := subsecond.Range{Start: 0, End: 3e9}
	plain, err := Build(c, query.Filter{Idle: true}, whole)
	if err != nil {
		t.Fatal(err)
	}
	diff, err := Diff(c, query.Filter{Idle: true}, subsecond.Range{Start: 1e6, End: 1e9}, subsecond.Range{Start: 1e9, End: 3e9})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*Graph{plain, diff} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		var err error
		if g.BaseN != nil {
			err = enc.Encode(struct {
				*Graph
				BaseTotal int64 `json:"base_total"`
			}{g, g.BaseTotal})
		} else {
			err = enc.Encode(g)
		}
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := g.WriteJSON(&got); err != nil {
			t.Fatal(err)
		}
		if got.Len() < 2*jsonChunk {
			t.Fatalf("test graph's JSON is %d bytes; want several chunks", got.Len())
		}
		var gv, wv any
		if err := json.Unmarshal(got.Bytes(), &gv); err != nil {
			t.Fatalf("WriteJSON output is not JSON: %v", err)
		}
		if err := json.Unmarshal(want.Bytes(), &wv); err != nil {
			t.Fatal(err)
		}
		gb, _ := json.Marshal(gv)
		wb, _ := json.Marshal(wv)
		if !bytes.Equal(gb, wb) {
			t.Errorf("WriteJSON differs from encoding/json:\n got %.300s\nwant %.300s", got.String(), want.String())
		}
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errShort
}

var errShort = &json.UnsupportedValueError{Str: "short write"}

func TestWriteJSONReportsWriteError(t *testing.T) {
	g := &Graph{Strings: []string{"all"}, Kinds: kindNames, Name: []int32{0}}
	w := &failWriter{}
	if err := g.WriteJSON(w); err != errShort {
		t.Errorf("WriteJSON to a failing writer = %v; want its error", err)
	}
}

func TestAppendInt(t *testing.T) {
	vals := []int64{0, 1, 9, 10, 42, 99, 100, 101, 999, 1000, 123456789, -1, -10, -1000, 1<<63 - 1, -1 << 63, -1<<63 + 1}
	for p := int64(1); p < 1e18; p *= 10 {
		vals = append(vals, p-1, p, p+1, -p, 7*p+3)
	}
	for _, v := range vals {
		if got, want := string(appendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Errorf("appendInt(%d) = %q; want %q", v, got, want)
		}
	}
}
