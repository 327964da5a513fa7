package query_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/internal/golden"
	"github.com/subsecond/subsecond/query"
)

var update = flag.Bool("update", false, "rewrite web/src/params.ts from the Go table")

// TestParams checks every row of the table: a unique name, help, a type its
// field holds, choices only for choices, a default that parses and lies in
// range, and a group and views.
func TestParams(t *testing.T) {
	seen := map[string]bool{}
	def := query.Default()
	for _, p := range query.Params() {
		if seen[p.Name] || p.Name == "" || p.Help == "" || p.Group == "" || p.Views == 0 {
			t.Errorf("param %+v: want a unique name, help, a group and views", p)
		}
		seen[p.Name] = true
		// A switch's help says what it does: "--idle: include idle
		// samples", "idle=1: 1 to include idle samples".
		if p.Type == query.TypeBool && (strings.HasPrefix(p.Usage(), "1") || strings.Contains(p.Usage(), "1 to") || p.URLHelp() != "1 to "+p.Help) {
			t.Errorf("%s: usage %q, URL help %q; want the switch's usage without a value and the URL's with 1", p.Name, p.Usage(), p.URLHelp())
		}
		if (p.Type == query.TypeChoice) != (len(p.Choices) > 0) {
			t.Errorf("%s: type %s with choices %v", p.Name, p.Type, p.Choices)
		}
		if (p.Type == query.TypeInt || p.Type == query.TypeDuration) && p.Min > p.Max {
			t.Errorf("%s: range %d–%d", p.Name, p.Min, p.Max)
		}
		if got := p.Get(&def); p.Default != "" && got != p.Default {
			t.Errorf("%s: default query holds %q; want the table's default %q", p.Name, got, p.Default)
		}
		// Every value Get writes parses back to itself.
		q, err := query.Parse(url.Values{p.Name: {p.Get(&def)}})
		if err != nil || p.Get(q) != p.Get(&def) {
			t.Errorf("%s: Parse(%s=%q) = %q, %v", p.Name, p.Name, p.Get(&def), p.Get(q), err)
		}
	}
	if n := reflect.TypeFor[query.Filter]().NumField(); len(query.FilterParams()) != n {
		t.Errorf("%d filter params; want the %d fields of Filter", len(query.FilterParams()), n)
	}
	var cores []string
	for _, p := range query.ParamsFor(query.ViewCores) {
		if p.Group != query.GroupFilter {
			cores = append(cores, p.Name)
		}
	}
	if strings.Join(cores, ",") != "bucket,measure" {
		t.Errorf("ParamsFor(ViewCores) beyond filters = %v; want bucket, measure", cores)
	}
}

func TestParse(t *testing.T) {
	q, err := query.Parse(url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	// No bucket: each view picks its own (0.1 s for a capture, about 1,000
	// columns for a host).
	want := query.Query{Rows: query.DefaultRows, Col: query.DefaultCol,
		Measure: "busy", Threshold: query.DefaultThreshold, Min: query.DefaultMin, Limit: 50, Cells: 10, Near: query.DefaultNear,
		MaxSamples: query.DefaultMaxSamples, Before: query.DefaultBefore, Controls: query.DefaultControls, Seed: 1, Series: "cpu.sys", SeriesCPU: -1,
		Buckets: query.DefaultFleetBuckets, Permutations: query.DefaultPermutations, PerPage: query.DefaultPerPage,
		Page: query.Page{Scale: "linear", View: "flame", Shape: "target", Lanes: "cpu", TZ: "utc", State: query.DefaultState,
			CompareWith: "previous", CompareEarlier: 10 * 60e9}}
	if !reflect.DeepEqual(*q, want) {
		t.Errorf("Parse() = %+v; want the defaults %+v", *q, want)
	}

	v := url.Values{
		"cpu": {"0,3-5"}, "pid": {"10"}, "tid": {"11,12"}, "comm": {"java"}, "comm_regex": {"^ja"},
		"event": {"cycles"}, "function": {"^mem_"}, "only": {"kernel"}, "idle": {"1"},
		"start": {"2"}, "end": {"3.5s"}, "start2": {"-1500ms"}, "end2": {"1m"}, "base": {"abc"},
		"rows": {"20"}, "col": {"500ms"}, "bucket": {"0.25"}, "measure": {"system"},
		"threshold": {"0.75"}, "min": {"1500ms"}, "limit": {"0"}, "cells": {"3"}, "max_samples": {"5000"},
		"scale": {"log"}, "search": {"mem_"}, "match_case": {"1"}, "zoom": {"a;b"}, "view": {"icicle"}, "shape": {"base"}, "lanes": {"thread"},
		"near": {"2m"}, "tz": {"local"}, "from": {"2026-11-30T03:12:05.5Z"}, "to": {"1796008400"},
		"compare_from": {"2026-11-30T03:01:10.000000001Z"}, "compare_to": {"2026-11-30T03:01:20Z"}, "compare_cpu": {"2"},
		"compare_with": {"pick"}, "compare_earlier": {"2m"}, "compare_from2": {"1796007800"}, "compare_to2": {"1796007810.5"},
		"match": {"NETDEV|reset"}, "before": {"5s"}, "controls": {"0"}, "seed": {"7"}, "name": {"cgroups"}, "state": {"cgroup.dying, cpu.sys,cgroup.dying"},
		"series_label": {"memory"}, "label": {"zone=us-east-1a", "rack=r 7 <é>"}, "group": {"zone"}, "stack": {"^tcp_sendmsg;"},
		"buckets": {"60"}, "permutations": {"2000"},
		"unknown": {"ignored"},
	}
	q, err = query.Parse(v)
	if err != nil {
		t.Fatal(err)
	}
	want = query.Query{
		Filter: query.Filter{CPUs: []int32{0, 3, 4, 5}, PIDs: []int32{10}, TIDs: []int32{11, 12}, Comm: "java",
			CommRegex: "^ja", Event: "cycles", Function: "^mem_", Only: "kernel", Idle: true},
		Start: query.Bound{NS: 2e9, Set: true}, End: query.Bound{NS: 35e8, Set: true},
		Start2: query.Bound{NS: -15e8, Set: true}, End2: query.Bound{NS: 60e9, Set: true}, Base: "abc",
		From: query.WallTime{NS: time.Date(2026, 11, 30, 3, 12, 5, 5e8, time.UTC).UnixNano(), Set: true}, To: query.WallTime{NS: 1796008400e9, Set: true},
		Rows: 20, Col: 500e6, Bucket: 250e6, Measure: "system",
		Threshold: 0.75, Min: 15e8, Limit: 0, Cells: 3, Near: 120e9, MaxSamples: 5000,
		Match: "NETDEV|reset", Before: 5e9, Controls: 0, Seed: 7, Series: "cgroups", SeriesLabel: "memory", SeriesCPU: -1,
		Labels: []subsecond.Label{{Key: "zone", Value: "us-east-1a"}, {Key: "rack", Value: "r 7 <é>"}}, Group: "zone", Stack: "^tcp_sendmsg;",
		Buckets: 60, Permutations: 2000, PerPage: query.DefaultPerPage,
		Page: query.Page{Scale: "log", Search: "mem_", MatchCase: true, Zoom: "a;b", View: "icicle", Shape: "base", Lanes: "thread", TZ: "local",
			State:       "cgroup.dying, cpu.sys,cgroup.dying",
			CompareFrom: query.WallTime{NS: time.Date(2026, 11, 30, 3, 1, 10, 1, time.UTC).UnixNano(), Set: true},
			CompareTo:   query.WallTime{NS: time.Date(2026, 11, 30, 3, 1, 20, 0, time.UTC).UnixNano(), Set: true},
			CompareCPUs: []int32{2}, CompareWith: "pick", CompareEarlier: 120e9,
			CompareFrom2: query.WallTime{NS: 1796007800e9, Set: true}, CompareTo2: query.WallTime{NS: 17960078105e8, Set: true},
		},
	}
	if !reflect.DeepEqual(*q, want) {
		t.Errorf("Parse(%v) =\n%+v; want\n%+v", v, *q, want)
	}
	back, err := query.Parse(q.Values())
	if err != nil || !reflect.DeepEqual(back, q) {
		t.Errorf("Parse(q.Values()) = %+v, %v; want %+v", back, err, q)
	}
	if kinds, err := q.Page.StateKinds(); err != nil || strings.Join(kinds, ",") != "cgroup.dying,cpu.sys" {
		t.Errorf("StateKinds() = %v, %v; want cgroup.dying, cpu.sys", kinds, err)
	}
	for _, bad := range []string{"cpu.sys,bogus", ","} {
		if _, err := query.Parse(url.Values{"state": {bad}}); err == nil || !strings.Contains(err.Error(), "not a kind of host series") {
			t.Errorf("Parse(state=%s) = %v; want an error naming the kinds", bad, err)
		}
	}
	if q, err := query.Parse(url.Values{"state": {"none"}}); err != nil {
		t.Errorf("Parse(state=none) = %v", err)
	} else if kinds, _ := q.Page.StateKinds(); kinds != nil {
		t.Errorf("StateKinds(none) = %v; want none", kinds)
	}
	if f, err := query.ParseFilter(q.Filter.Values()); err != nil || !reflect.DeepEqual(f, q.Filter) {
		t.Errorf("ParseFilter(f.Values()) = %+v, %v; want %+v", f, err, q.Filter)
	}
	if got := q.ValuesFor(query.ViewCores).Encode(); got != "bucket=0.25&comm=java&comm_regex=%5Eja&cpu=0%2C3-5&event=cycles&function=%5Emem_&idle=1&measure=system&only=kernel&pid=10&tid=11-12" {
		t.Errorf("ValuesFor(ViewCores) = %s; want the filters, bucket and measure", got)
	}

	// Durations read the same in seconds and with units, everywhere.
	for _, s := range []string{"2", "2s", "2000ms", "2.0", "0.0333333333m"} {
		q, err := query.Parse(url.Values{"min": {s}, "col": {s}, "bucket": {s}, "start": {s}})
		if s == "0.0333333333m" {
			if err != nil || q.Min != 1999999998 {
				t.Errorf("Parse(min=%s) = %d, %v; want 1999999998 ns", s, q.Min, err)
			}
			continue
		}
		if err != nil || q.Min != 2e9 || q.Col != 2e9 || q.Bucket != 2e9 || q.Start.NS != 2e9 {
			t.Errorf("Parse(min, col, bucket, start = %s) = %+v, %v; want 2 s each", s, q, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ param, value, msg string }{
		{"cpu", "a", `cpu: "a" is not an id or range like 3-5`},
		{"pid", "3-1", `pid: "3-1" is not a range like 3-5`},
		{"tid", "x", `tid: "x" is not an id or range like 3-5`},
		{"comm_regex", "(", `comm_regex: "(" is not a regular expression: missing closing )`},
		{"function", "[a", `function: "[a" is not a regular expression: missing closing ]`},
		{"only", "both", `only: "both" is not kernel or user`},
		{"idle", "yes", `idle: "yes" is not 1 or 0`},
		{"start", "soon", `start: "soon" is not a duration such as 2, 2s or 1500ms`},
		{"end", "1e3", `end: "1e3" is not a duration such as 2, 2s or 1500ms`},
		{"end", "1..2", `end: "1..2" is not a number of seconds like 1.25`},
		{"rows", "0", `rows: 0 is outside 1 to 1000`},
		{"rows", "x", `rows: "x" is not a whole number from 1 to 1000`},
		{"col", "11", `col: 11 s is outside 0.1 s to 10 s`},
		{"col", "50ms", `col: 0.05 s is outside 0.1 s to 10 s`},
		{"bucket", "0", `bucket: 0 s is outside 0.001 s to 86400 s`},
		{"near", "0.5", `near: 0.5 s is outside 1 s to 86400 s`},
		{"tz", "CET", `tz: "CET" is not utc, local or offset`},
		{"measure", "sys", `measure: "sys" is not busy or system`},
		{"threshold", "1.5", `threshold: "1.5" is not a fraction in (0, 1], such as 0.9`},
		{"min", "0", `min: 0 s is outside 0.001 s to 86400 s`},
		{"min", "-1s", `min: -1 s is outside 0.001 s to 86400 s`},
		{"limit", "-1", `limit: -1 is outside 0 to 100000`},
		{"scale", "cubic", `scale: "cubic" is not linear or log`},
		{"label", "zone", `label: "zone" is not a label key=value`},
		{"label", "Zone=a", `label: "Zone=a": the key "Zone" does not start with a lower-case letter`},
		{"label", "zone=", `label: "zone=": the value of zone is empty`},
		{"label", "zone=a\x01", `label: "zone=a\x01": the value of zone holds a control character`},
		{"group", "a b", `group: the key "a b" holds a character other than a-z, 0-9, '_', '.' and '-'`},
		{"stack", "(", `stack: "(" is not a regular expression: missing closing )`},
		{"buckets", "0", `buckets: 0 is outside 1 to 2000`},
		{"permutations", "10", `permutations: 10 is outside 1000 to 100000`},
	} {
		_, err := query.Parse(url.Values{tc.param: {tc.value}})
		var pe *query.ParamError
		if !errors.Is(err, subsecond.ErrInvalid) || !errors.As(err, &pe) || pe.Name != tc.param || err.Error() != tc.msg {
			t.Errorf("Parse(%s=%q) error = %v; want %q wrapping ErrInvalid", tc.param, tc.value, err, tc.msg)
		}
	}
}

// TestLabels checks the repeated label parameter: every value kept in
// order, a key given twice and more than subsecond.MaxLabels refused.
func TestLabels(t *testing.T) {
	q, err := query.Parse(url.Values{"label": {"b=2", "", "a=x=y"}})
	if err != nil || len(q.Labels) != 2 || q.Labels[0].String() != "b=2" || q.Labels[1] != (subsecond.Label{Key: "a", Value: "x=y"}) {
		t.Fatalf("Parse(label=b=2&label=a=x=y) = %+v, %v; want b=2, a=x=y", q, err)
	}
	if got := q.Values()["label"]; len(got) != 2 || got[0] != "b=2" || got[1] != "a=x=y" {
		t.Errorf("Values()[label] = %q; want both labels", got)
	}
	if _, err := query.Parse(url.Values{"label": {"a=1", "a=2"}}); err == nil || err.Error() != "label: a is given twice; a host has one value of a key" {
		t.Errorf("Parse(label=a=1&label=a=2) = %v; want the key given twice", err)
	}
	var many []string
	for i := range subsecond.MaxLabels + 1 {
		many = append(many, fmt.Sprintf("k%d=v", i))
	}
	if _, err := query.Parse(url.Values{"label": many}); err == nil || !strings.Contains(err.Error(), "label: more than 32 labels") {
		t.Errorf("Parse(33 labels) = %v; want more than 32", err)
	}
	if _, err := query.ParseLabels("set", []string{"k"}); err == nil || !strings.HasPrefix(err.Error(), "set: ") {
		t.Errorf("ParseLabels(set, k) = %v; want an error naming set", err)
	}
}

// TestFleetMatch checks that the fleet's search parameters mean what they
// mean in a filter: comm is the exact name, the others regular
// expressions; one at a time.
func TestFleetMatch(t *testing.T) {
	for _, tc := range []struct {
		v     url.Values
		kind  subsecond.NameKind
		re    string
		error string
	}{
		{url.Values{}, 0, "", ""},
		{url.Values{"function": {"^tcp_"}}, subsecond.NameFunction, "^tcp_", ""},
		{url.Values{"comm": {"kworker/0:1+events"}}, subsecond.NameComm, `^kworker/0:1\+events$`, ""},
		{url.Values{"comm_regex": {"^kworker"}}, subsecond.NameComm, "^kworker", ""},
		{url.Values{"stack": {"a;b"}}, subsecond.NameEdge, "a;b", ""},
		{url.Values{"function": {"a"}, "stack": {"b"}}, 0, "", "stack: the fleet searches one of function, comm, comm_regex and stack at a time; function is given too"},
	} {
		q, err := query.Parse(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		kind, re, err := q.FleetMatch()
		got := ""
		if re != nil {
			got = re.String()
		}
		if kind != tc.kind || got != tc.re || fmt.Sprint(err) != tc.error && !(err == nil && tc.error == "") {
			t.Errorf("FleetMatch(%v) = %v, %q, %v; want %v, %q, %q", tc.v, kind, got, err, tc.kind, tc.re, tc.error)
		}
	}
}

func TestResolve(t *testing.T) {
	p := &subsecond.Profile{Start: 5086_050_000_000, End: 5089_040_000_000} // T0 = 5086 s
	for _, tc := range []struct {
		v      url.Values
		r, r2  subsecond.Range
		errMsg string
	}{
		{url.Values{}, subsecond.Range{Start: 5086e9, End: p.End + 1}, subsecond.Range{Start: 5086e9, End: p.End + 1}, ""},
		{url.Values{"start": {"1"}, "end": {"2500ms"}, "start2": {"0"}, "end2": {"1"}},
			subsecond.Range{Start: 5087e9, End: 50885e8}, subsecond.Range{Start: 5086e9, End: 5087e9}, ""},
		{url.Values{"start": {"2"}, "end": {"1"}}, subsecond.Range{}, subsecond.Range{}, "end: the range [2, 1) s is empty; end must be after start"},
		{url.Values{"start2": {"4"}}, subsecond.Range{}, subsecond.Range{}, "start2: 4 s is past the end of the capture (3.04 s)"},
		{url.Values{"start2": {"2"}, "end2": {"1"}}, subsecond.Range{}, subsecond.Range{}, "end2: the range [2, 1) s is empty; end2 must be after start2"},
		{url.Values{"start": {"-5"}, "end": {"99"}}, subsecond.Range{Start: 5086e9, End: p.End + 1}, subsecond.Range{Start: 5086e9, End: p.End + 1}, ""},
		{url.Values{"start": {"4"}, "end": {"5"}}, subsecond.Range{}, subsecond.Range{}, "start: 4 s is past the end of the capture (3.04 s)"},
		{url.Values{"start": {"-9"}, "end": {"-2s"}}, subsecond.Range{}, subsecond.Range{}, "end: -2 s is before the capture starts (0 s)"},
	} {
		q, err := query.Parse(tc.v)
		if err != nil {
			t.Fatal(err)
		}
		err = q.Resolve(p)
		if tc.errMsg != "" {
			if err == nil || err.Error() != tc.errMsg || !errors.Is(err, subsecond.ErrInvalid) {
				t.Errorf("Resolve(%v) error = %v; want %q", tc.v, err, tc.errMsg)
			}
			continue
		}
		if err != nil || q.Range != tc.r || q.Range2 != tc.r2 {
			t.Errorf("Resolve(%v) = %+v, %+v, %v; want %+v, %+v", tc.v, q.Range, q.Range2, err, tc.r, tc.r2)
		}
	}
}

func TestCheckParam(t *testing.T) {
	if err := query.CheckParam("col", int64(time.Second)); err != nil {
		t.Errorf("CheckParam(col, 1 s) = %v", err)
	}
	if err := query.CheckParam("rows", 1001); err == nil || err.Error() != "rows: 1001 is outside 1 to 1000" {
		t.Errorf("CheckParam(rows, 1001) = %v; want the error Parse gives", err)
	}
}

// TestParamsTS checks that web/src/params.ts, the front end's list of
// parameters, is the Go table; -update rewrites it.
func TestParamsTS(t *testing.T) {
	golden.Check(t, "../web/src/params.ts", paramsTS(t), *update, "go test ./query -run TestParamsTS -update")
}

func paramsTS(t *testing.T) []byte {
	t.Helper()
	type param struct {
		Name    string   `json:"name"`
		Type    string   `json:"type"`
		Unit    string   `json:"unit"`
		Min     int64    `json:"min"`
		Max     int64    `json:"max"`
		Default string   `json:"default"`
		Choices []string `json:"choices"`
		Help    string   `json:"help"`
		Group   string   `json:"group"`
		Views   []string `json:"views"`
	}
	var b bytes.Buffer
	b.WriteString(`// Code generated by "go test ./query -run TestParamsTS -update" from the table of
// query parameters in query/query.go; DO NOT EDIT.

// Param is one query parameter: URL parameter and CLI flag. Durations and
// offsets are written in seconds or with a unit (2, 2s, 1500ms); min and max
// of a duration are nanoseconds.
export interface Param {
  name: string;
  type: "idlist" | "string" | "regexp" | "choice" | "bool" | "int" | "fraction" | "duration" | "offset" | "walltime" | "labels";
  unit: string;
  min: number;
  max: number;
  default: string;
  choices: string[];
  help: string;
  group: "filter" | "range" | "heatmap" | "cores" | "hotspots" | "explain" | "series" | "fleet" | "list" | "page";
  views: string[];
}

export const PARAMS: Param[] = [
`)
	for _, p := range query.Params() {
		tp := param{Name: p.Name, Type: string(p.Type), Unit: p.Unit, Min: p.Min, Max: p.Max, Default: p.Default,
			Choices: p.Choices, Help: p.URLHelp(), Group: string(p.Group), Views: []string{}}
		if tp.Choices == nil {
			tp.Choices = []string{}
		}
		tp.Views = append(tp.Views, p.Views.Names()...)
		line, err := json.Marshal(tp)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "  %s,\n", line)
	}
	b.WriteString("];\n")
	return b.Bytes()
}

// TestParamsDoc checks the table of parameters in docs/contracts.md against
// the Go table; -update rewrites it.
func TestParamsDoc(t *testing.T) {
	const path, begin, end = "../docs/contracts.md", "<!-- params:begin -->\n", "<!-- params:end -->"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s lacks the %q … %q block", path, begin, end)
	}
	var b bytes.Buffer
	b.WriteString("| name | group | type | values | default | meaning |\n|---|---|---|---|---|---|\n")
	for _, p := range query.Params() {
		def := p.Default
		if def != "" && p.Unit != "" {
			def += " " + p.Unit
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", p.Name, p.Group, p.Type, p.Range(), def, p.URLHelp())
	}
	want := append(append(append([]byte{}, doc[:i+len(begin)]...), b.Bytes()...), doc[j:]...)
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(doc, want) {
		t.Errorf("the parameter table in %s differs from the Go table; run go test ./query -run TestParamsDoc -update", path)
	}
}

func TestFilterDescribe(t *testing.T) {
	for _, tc := range []struct {
		f    query.Filter
		want string
	}{
		{query.Filter{}, ""},
		{query.Filter{CPUs: []int32{5}}, "CPU 5"},
		{query.Filter{CPUs: []int32{0, 1, 2, 3, 7}, PIDs: []int32{300}, Comm: "gc", CommRegex: "web.*", Event: "cycles",
			Function: "mark", Only: "user", Idle: true},
			"CPUs 0-3,7 · pid 300 · comm gc · comm ~ web.* · event cycles · function mark · user frames only · idle included"},
	} {
		if got := strings.Join(tc.f.Describe(), " · "); got != tc.want {
			t.Errorf("%+v.Describe() = %q; want %q", tc.f, got, tc.want)
		}
	}
}

// TestMessage: the words of ErrInvalid and ErrTooLarge that wrapping
// appends are dropped, as the text names the parameter or the limit; other
// sentinels keep theirs.
func TestMessage(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("hotspots: %w", query.Invalidf("cpu", "the capture has no CPU 96")), "hotspots: cpu: the capture has no CPU 96"},
		{fmt.Errorf("import: the capture has more than 5 samples, the limit per profile (--max-samples): %w", subsecond.ErrTooLarge),
			"import: the capture has more than 5 samples, the limit per profile (--max-samples)"},
		{fmt.Errorf("profile %q: %w", "x", subsecond.ErrNotFound), `profile "x": not found`},
		{errors.New("too large"), "too large"},
	} {
		if got := query.Message(tc.err); got != tc.want {
			t.Errorf("Message(%v) = %q; want %q", tc.err, got, tc.want)
		}
	}
}

// TestLongRegexp: a regular-expression parameter longer than MaxRegexp
// is refused before it is compiled; other text is not bounded so (a zoom
// path of a deep stack is long).
func TestLongRegexp(t *testing.T) {
	long := strings.Repeat("a|", query.MaxRegexp/2+1)
	for _, name := range []string{"match", "function", "comm_regex", "cgroup"} {
		_, err := query.Parse(url.Values{name: {long}})
		var pe *query.ParamError
		if !errors.As(err, &pe) || pe.Name != name || !strings.Contains(err.Error(), "longer than the 1024") {
			t.Errorf("Parse(%s of %d bytes) = %v; want a ParamError naming the limit", name, len(long), err)
		}
	}
	if _, err := query.Parse(url.Values{"match": {strings.Repeat("a", query.MaxRegexp)}, "zoom": {long}}); err != nil {
		t.Errorf("Parse(match of %d bytes, a long zoom) = %v; want them taken", query.MaxRegexp, err)
	}
}
