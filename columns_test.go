package subsecond_test

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/subsecond/subsecond"
)

// TestColumnList checks that the column list covers Columns: each slice is
// the column of exactly one row, names are distinct, and a row's Since is
// at least its predecessor's, so that a chunk's later parts are the later
// columns.
func TestColumnList(t *testing.T) {
	var c subsecond.Columns
	typ := reflect.TypeOf(c)
	rows := map[uintptr]string{} // field offset → the row's name
	names := map[string]bool{}
	since := 1
	for _, k := range subsecond.SampleColumns() {
		info := k.Info()
		if names[info.Name] {
			t.Errorf("column %q listed twice", info.Name)
		}
		names[info.Name] = true
		if info.Since < since {
			t.Errorf("column %q: Since %d after a column of Since %d", info.Name, info.Since, since)
		}
		since = info.Since
		off := ofColumn(t, k, &c)
		if prev, ok := rows[off]; ok {
			t.Errorf("columns %q and %q are the same slice", prev, info.Name)
		}
		rows[off] = info.Name
	}
	for i := range typ.NumField() {
		f := typ.Field(i)
		if _, ok := rows[f.Offset]; !ok {
			t.Errorf("Columns.%s has no row in the column list", f.Name)
		}
	}
	if len(rows) != typ.NumField() {
		t.Errorf("%d rows for %d fields of Columns", len(rows), typ.NumField())
	}
}

// ofColumn returns the offset in Columns of k's slice, as its Of gives it.
func ofColumn(t *testing.T, k subsecond.Column, c *subsecond.Columns) uintptr {
	of := reflect.ValueOf(k).Elem().FieldByName("Of")
	if !of.IsValid() {
		t.Fatalf("column %q: %T has no Of", k.Info().Name, k)
	}
	return of.Call([]reflect.Value{reflect.ValueOf(c)})[0].Pointer() - uintptr(unsafe.Pointer(c))
}

// TestColumnsOperations checks the operations on whole Columns against
// each other on a Builder's samples.
func TestColumnsOperations(t *testing.T) {
	b := subsecond.NewBuilder()
	for i, tm := range []int64{30, 10, 20, 10} {
		s := &subsecond.Sample{Comm: "c", PID: int32(i), TID: int32(i), CPU: int32(i), Time: tm, Event: "cpu-clock",
			Frames: []subsecond.Frame{{Symbol: "f"}}}
		if err := b.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	c := b.Capture(subsecond.Profile{}).Samples
	if got, want := c.Time, []int64{10, 10, 20, 30}; !reflect.DeepEqual(got, want) {
		t.Fatalf("sorted Time = %v; want %v", got, want)
	}
	if got, want := c.PID, []int32{1, 3, 2, 0}; !reflect.DeepEqual(got, want) {
		t.Errorf("sorted PID = %v; want %v (stable, every column permuted alike)", got, want)
	}
	if got := c.Weight; !reflect.DeepEqual(got, []uint64{1, 1, 1, 1}) {
		t.Errorf("Weight = %v; want 1 for samples without a period", got)
	}
	d := subsecond.MakeColumns(0)
	d.AppendRange(&c, 1, 3)
	if w := c.Slice(1, 3, 3); !reflect.DeepEqual(d, w) {
		t.Errorf("AppendRange(1, 3) = %+v; Slice(1, 3) = %+v", d, w)
	}
	d.CopyAt(0, &subsecond.Columns{Time: []int64{5}, CPU: []int32{5}, PID: []int32{5}, TID: []int32{5},
		Comm: []uint32{0}, Event: []uint16{0}, Weight: []uint64{5}, Stack: []int32{0}})
	if d.Time[0] != 5 || d.Weight[0] != 5 || d.Time[1] != 20 {
		t.Errorf("after CopyAt: %+v", d)
	}
	d.Resize(1)
	if d.Len() != 1 || len(d.Stack) != 1 || d.Bytes() <= 0 {
		t.Errorf("after Resize(1): %+v, %d bytes", d, d.Bytes())
	}
	e := subsecond.Columns{Time: []int64{1, 2}}
	e.Fill()
	if len(e.Stack) != 2 || e.Weight[1] != 0 {
		t.Errorf("after Fill: %+v", e)
	}
}
