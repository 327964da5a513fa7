package query

import (
	"github.com/subsecond/subsecond"
	"reflect"
	"testing"
)

// TestCriteriaCoverFilter fails when a Filter field is neither the event
// or idleness every Match applies nor read by exactly one criterion: a
// field the criteria list missed would be ignored wherever a view takes
// the fast path of a simple filter.
func TestCriteriaCoverFilter(t *testing.T) {
	owner := map[string]string{}
	for _, name := range matchFields {
		owner[name] = "the Match itself"
	}
	for i, cr := range criteria {
		for _, name := range cr.fields {
			if prev, ok := owner[name]; ok {
				t.Errorf("Filter.%s is read by criterion %d and by %s", name, i, prev)
			}
			owner[name] = "criterion " + cr.fields[0]
		}
	}
	typ := reflect.TypeOf(Filter{})
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		if _, ok := owner[name]; !ok {
			t.Errorf("Filter.%s is in no criterion: add it to criteria (filter.go)", name)
		}
		delete(owner, name)
	}
	for name := range owner {
		t.Errorf("criteria name Filter.%s, which does not exist", name)
	}
}

// TestCriteriaActive sets each criterion's fields in turn and checks that
// the filter is then no longer simple.
func TestCriteriaActive(t *testing.T) {
	b := subsecond.NewBuilder()
	if err := b.Add(&subsecond.Sample{Comm: "kernel", Event: "cpu-clock", Frames: []subsecond.Frame{{Symbol: "kernel"}}}); err != nil {
		t.Fatal(err)
	}
	c := b.Capture(subsecond.Profile{})
	for _, cr := range criteria {
		var f Filter
		v := reflect.ValueOf(&f).Elem()
		for _, name := range cr.fields {
			switch fv := v.FieldByName(name); fv.Kind() {
			case reflect.Slice:
				fv.Set(reflect.ValueOf([]int32{0}))
			case reflect.String:
				fv.SetString("kernel") // a command name, a regular expression and an Only value
			default:
				t.Fatalf("Filter.%s: set a value of kind %s here", name, fv.Kind())
			}
		}
		m, err := f.Compile(c)
		if err != nil {
			t.Fatalf("%v: %v", cr.fields, err)
		}
		if _, _, simple := m.Simple(); simple {
			t.Errorf("Filter with %v set is simple; want a criterion", cr.fields)
		}
	}
}
