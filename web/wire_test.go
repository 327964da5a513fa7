package web

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/flame"
	"github.com/subsecond/subsecond/fleet"
	"github.com/subsecond/subsecond/heatmap"
	"github.com/subsecond/subsecond/internal/golden"
	"github.com/subsecond/subsecond/timeline"
)

var update = flag.Bool("update", false, "rewrite web/src/wire.ts from the Go types")

// wireTypes are the JSON shapes the pages read, by the name the script
// gives them, in the order wire.ts declares them: the view data each page
// embeds and the API's answers (docs/contracts.md). Every struct a field
// holds must be among them.
var wireTypes = []struct {
	name string
	v    any
	doc  string
}{
	{"ViewData", ViewData{}, "the view data each page embeds as JSON (the view-data script)."},
	{"ProfileSummary", ProfileSummary{}, "the part of a profile the page's script needs; T0 is the whole second holding the first sample."},
	{"EventCount", subsecond.EventCount{}, "one event of a capture and its samples."},
	{"WallJSON", subsecond.WallClock{}, "a profile's wall-clock anchor: a sample at time t on the capture's clock was taken at Unix time t + offset_ns."},
	{"Profile", subsecond.Profile{}, "a stored profile, as GET /api/profiles/ID and its PATCH answer."},
	{"Metadata", subsecond.Metadata{}, "what a capture's header says about the machine and the recording."},
	{"Warning", subsecond.Warning{}, "a record the parser skipped."},
	{"HeatmapJSON", heatmap.Grid{}, "the offset heatmap: counts[col][row]; row 0 starts each column."},
	{"CoresJSON", heatmap.Cores{}, "the cores × time map: samples[cpu][bucket]; busy and system in 0..1, system being the part of busy whose leaf frame is in the kernel."},
	{"FlameJSON", flame.Graph{}, "a flame tree in depth-first pre-order; node 0 is the root (flame.Graph.WriteJSON)."},
	{"FunctionTable", flame.FunctionTable{}, "the function table of a graph (format=functions)."},
	{"FunctionChange", flame.Function{}, "one row of a graph's function table: counts on each side, changes in percentage points of each side's total, and the z-score of the change in total share."},
	{"SamplesJSON", flame.Samples{}, "the stack chart's samples of a range: in time order, times in ns after start_ns, each with the node of the same range's flame graph its stack ends at."},
	{"HotspotList", HotspotList{}, "the profile hot-spots endpoint's answer: the report and the sentence saying what its episodes are."},
	{"HotspotReport", subsecond.HotspotReport{}, "a capture's hot spots (docs/hotspots.md), as `subsecond hotspots --format json` prints them."},
	{"Hotspot", subsecond.Hotspot{}, "one busy episode: a CPU (-1 for the whole host) busy for [start_ns, end_ns)."},
	{"HotCell", subsecond.HotCell{}, "one of the hottest heatmap cells."},
	{"NightGrid", timeline.Grid{}, "a host's night as cores × time, over wall-clock Unix nanoseconds [from_ns, to_ns)."},
	{"NightCapture", timeline.Capture{}, "a capture's place on its host's night: [start_ns, end_ns) in wall-clock Unix nanoseconds; a sample at wall time w is at w - offset_ns on the capture's clock, whose T0 is t0_ns."},
	{"CaptureList", timeline.CaptureList{}, "a host's captures."},
	{"SessionList", timeline.SessionList{}, "a host's recording sessions, in time order (timeline.SessionGap)."},
	{"NightSession", timeline.Session{}, "one recording session of a host: [start_ns, end_ns) in wall-clock Unix nanoseconds, numbered from 1."},
	{"MarkerList", timeline.MarkerList{}, "a host's markers, in time order."},
	{"MarkerView", timeline.MarkerView{}, "a marker with the host's range of the 10 s before it, across captures, and the link to its flame graph."},
	{"Marker", subsecond.Marker{}, "an event on a host's wall clock (Unix ns), such as a dmesg line."},
	{"NightPeriod", timeline.Period{}, "a wall-clock range [from_ns, to_ns) of a host's night, across captures; missing_ns of it were not recorded."},
	{"NightReport", timeline.Report{}, "a host's hot spots across its night."},
	{"NightSpot", timeline.Spot{}, "one hot spot of a host's night, in wall-clock Unix nanoseconds, with the links to its views."},
	{"CommReport", timeline.CommReport{}, "the CPU share of one command across a host's night, and the commands whose share jumps furthest."},
	{"CommJump", timeline.Jump{}, "a command whose share of the host's CPU jumps above its usual level."},
	{"SeriesLane", timeline.SeriesLane{}, "one kind of a host's series (per-CPU time, cgroups, interrupts) over [from_ns, to_ns) in buckets of bucket_ns: the host page's lane under its cores map."},
	{"LaneSeries", timeline.LaneSeries{}, "one series of a lane: its CPU (-1: the host) and label, and the mean of its points in each bucket, null where nothing was recorded."},
	{"HostLabel", subsecond.Label{}, "a key=value label of a host."},
	{"FleetMap", FleetMap{}, "the fleet's hosts × time grid over wall-clock Unix nanoseconds [from_ns, to_ns), with the label keys the hosts carry."},
	{"FleetRow", FleetRow{}, "one host of the fleet's map."},
	{"FleetSearch", FleetSearch{}, "the hosts ranked by the share of the names a search selects."},
	{"FleetHit", FleetHit{}, "one host of a fleet search, with its sparkline."},
	{"FleetGroups", FleetGroups{}, "the names whose share differs between the groups of a label."},
	{"FleetGroupSize", fleet.GroupSize{}, "one value of a label and how many hosts carry it."},
	{"FleetDifference", FleetDifference{}, "one finding of the group contrast."},
	{"FleetUptime", FleetUptime{}, "the names whose share follows the hosts' uptime."},
	{"FleetRise", FleetRise{}, "one finding of the uptime contrast."},
}

// nullable names the slices, by TS type and field, that the server can leave
// nil, sent as null; every other slice is always an array.
var nullable = map[string]bool{
	"CoresJSON.cpus": true, // no CPU's samples pass the filters
}

// wireConstants are values the script shares with the server.
var wireConstants = []struct {
	name string
	v    any
	doc  string
}{
	{"SIGNIFICANT_Z", flame.SignificantZ, "the |z| from which a change counts as significant (flame.SignificantZ); below it a differential graph draws a frame neutral."},
	{"TINT_INTENSITY", flame.TintIntensity, "the colour intensity of a change whose |z| just reaches SIGNIFICANT_Z (flame.TintIntensity)."},
	{"FULL_Z", flame.FullZ, "the |z| from which a change is drawn in full colour (flame.FullZ)."},
	{"PERCENT_FLOOR", percentFloor, "the smallest percentage fmtPct writes; a smaller share above 0 reads \"<PERCENT_FLOOR%\" (web.Percent)."},
	{"PERCENT_WIDE", percentWide, "the percentage from which fmtPct writes PERCENT_WIDE_DIGITS decimals, PERCENT_DIGITS below it."},
	{"PERCENT_DIGITS", percentDigits, "fmtPct's decimals below PERCENT_WIDE."},
	{"PERCENT_WIDE_DIGITS", percentWideDigits, "fmtPct's decimals from PERCENT_WIDE."},
}

// TestWireTS checks that web/src/wire.ts, the script's types of the JSON
// the server sends and the constants it shares with the server, is what the
// Go types and constants give; -update rewrites it.
func TestWireTS(t *testing.T) {
	golden.Check(t, "src/wire.ts", wireTS(t), *update, "go test ./web -run TestWireTS -update")
}

func wireTS(t *testing.T) []byte {
	t.Helper()
	names := map[reflect.Type]string{}
	for _, w := range wireTypes {
		names[reflect.TypeOf(w.v)] = w.name
	}
	var b bytes.Buffer
	b.WriteString(`// Code generated by "go test ./web -run TestWireTS -update" from the Go
// types of the JSON the server sends and the constants the script shares
// with it (web/wire_test.go); DO NOT EDIT.
//
// Times are integer nanoseconds; every range is half-open [start, end).
`)
	for _, c := range wireConstants {
		v, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "\n%sexport const %s = %s;\n", comment(c.name+" is "+c.doc), c.name, v)
	}
	for _, w := range wireTypes {
		typ := reflect.TypeOf(w.v)
		g := tsGen{t: t, names: names, name: w.name}
		b.WriteString("\n" + comment(fmt.Sprintf("%s is %s.%s: %s", w.name, pkgName(typ), typ.Name(), w.doc)))
		fmt.Fprintf(&b, "export interface %s%s {\n", w.name, g.extends(typ))
		g.fields(&b, typ)
		b.WriteString("}\n")
	}
	return b.Bytes()
}

// tsGen writes the fields of one interface.
type tsGen struct {
	t     *testing.T
	names map[reflect.Type]string
	name  string
}

// embedded returns the struct that field f embeds, whose fields
// encoding/json writes in place, or nil.
func embedded(f reflect.StructField) reflect.Type {
	if !f.Anonymous || f.Tag.Get("json") != "" {
		return nil
	}
	t := f.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	return t
}

// extends returns the interfaces typ extends: the wire types it embeds.
func (g tsGen) extends(typ reflect.Type) string {
	var out []string
	for i := range typ.NumField() {
		if e := embedded(typ.Field(i)); e != nil {
			if n, ok := g.names[e]; ok {
				out = append(out, n)
			}
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " extends " + strings.Join(out, ", ")
}

// fields writes typ's JSON fields as encoding/json names them, those of
// embedded structs that are not wire types in place, each with its Go
// comment.
func (g tsGen) fields(b *bytes.Buffer, typ reflect.Type) {
	comments := fieldComments(g.t, typ)
	for i := range typ.NumField() {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		if e := embedded(f); e != nil {
			if _, ok := g.names[e]; !ok {
				g.fields(b, e)
			}
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		optional := strings.Contains(","+opts+",", ",omitempty,")
		ft := f.Type
		null := ft.Kind() == reflect.Map || ft.Kind() == reflect.Slice && nullable[g.name+"."+name]
		if ft.Kind() == reflect.Pointer {
			// A nil pointer is null, or absent with omitempty.
			ft, null = ft.Elem(), !optional
		}
		ts := g.tsType(ft)
		if null {
			ts += " | null"
		}
		q := ""
		if optional {
			q = "?"
		}
		line := fmt.Sprintf("  %s%s: %s;", name, q, ts)
		if c := comments[f.Name]; c != "" {
			line += " // " + c
		}
		b.WriteString(line + "\n")
	}
}

// tsType returns the TypeScript type of Go type typ's JSON.
func (g tsGen) tsType(typ reflect.Type) string {
	if typ == reflect.TypeOf(time.Time{}) {
		return "string"
	}
	switch typ.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Pointer:
		return "(" + g.tsType(typ.Elem()) + " | null)"
	case reflect.Slice:
		e := g.tsType(typ.Elem())
		if strings.HasSuffix(e, ")") || !strings.ContainsAny(e, " |") {
			return e + "[]"
		}
		return "(" + e + ")[]"
	case reflect.Map:
		return "Record<" + g.tsType(typ.Key()) + ", " + g.tsType(typ.Elem()) + ">"
	case reflect.Struct:
		if n, ok := g.names[typ]; ok {
			return n
		}
		g.t.Fatalf("%s: %v is not among wireTypes", g.name, typ)
	}
	g.t.Fatalf("%s: no TypeScript type for %v", g.name, typ)
	return ""
}

// comment returns text as // comment lines of at most 80 columns.
func comment(text string) string {
	var b strings.Builder
	line := "//"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > 80 && line != "//" {
			b.WriteString(line + "\n")
			line = "//"
		}
		line += " " + w
	}
	return b.String() + line + "\n"
}

// pkgName returns the name by which the pages' comments know typ's
// package: "subsecond", "flame", "web".
func pkgName(typ reflect.Type) string {
	return filepath.Base(typ.PkgPath())
}

// fieldComments returns the line comments of struct typ's fields, by field
// name, read from its package's source.
func fieldComments(t *testing.T, typ reflect.Type) map[string]string {
	t.Helper()
	const module = "github.com/subsecond/subsecond"
	dir := filepath.Join("..", strings.TrimPrefix(strings.TrimPrefix(typ.PkgPath(), module), "/"))
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range pkgs {
		for _, f := range p.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok || ts.Name.Name != typ.Name() {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					return false
				}
				for _, fl := range st.Fields.List {
					if fl.Comment == nil {
						continue
					}
					c := strings.Join(strings.Fields(fl.Comment.Text()), " ")
					for _, id := range fl.Names {
						out[id.Name] = c
					}
				}
				return false
			})
		}
	}
	return out
}
