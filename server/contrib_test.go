package server

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// TestContribMetrics checks contrib/prometheus against what /metrics
// serves: every metric the alert rules name is one the server exports
// (a histogram's _bucket, _sum and _count of one it exports), every label
// a selector matches on is one of that metric's, and a label matched for
// equality takes that value once the server has answered a 2xx and a 5xx.
// prometheus.yml scrapes /metrics with a bearer token and loads rule files
// that are beside it.
func TestContribMetrics(t *testing.T) {
	e := newEnv(t, Config{Metrics: true})
	e.upload(perfText(1, 5, 1), "small")
	if res, body := e.do("GET", "/api/profiles", nil); res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/profiles = %d %s", res.StatusCode, body)
	}
	e.st.Close() // a 5xx, counted
	if res, _ := e.do("GET", "/api/profiles", nil); res.StatusCode != http.StatusInternalServerError {
		t.Fatalf("GET /api/profiles with the database closed = %d; want 500", res.StatusCode)
	}
	mf := scrape(t, e)

	dir := filepath.Join("..", "contrib", "prometheus")
	rules, err := os.ReadFile(filepath.Join(dir, "subsecond-alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	family := func(name string) *dto.MetricFamily {
		if f, ok := mf[name]; ok {
			return f
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if f, ok := mf[strings.TrimSuffix(name, suffix)]; ok && strings.HasSuffix(name, suffix) && f.GetType() == dto.MetricType_HISTOGRAM {
				return f
			}
		}
		return nil
	}
	selector := regexp.MustCompile(`(subsecond_[a-z0-9_]+)(\{[^}]*\})?`)
	matcher := regexp.MustCompile(`([a-z_]+)\s*(=~|!~|!=|=)\s*"([^"]*)"`)
	named := 0
	for _, m := range selector.FindAllStringSubmatch(string(rules), -1) {
		named++
		f := family(m[1])
		if f == nil {
			t.Errorf("subsecond-alerts.yml names %s, which /metrics does not serve", m[1])
			continue
		}
		for _, lm := range matcher.FindAllStringSubmatch(m[2], -1) {
			values := map[string]bool{}
			for _, s := range f.GetMetric() {
				for _, l := range s.GetLabel() {
					if l.GetName() == lm[1] {
						values[l.GetValue()] = true
					}
				}
			}
			if lm[1] != "le" && len(values) == 0 {
				t.Errorf("subsecond-alerts.yml matches %s on label %s, which it does not have", m[1], lm[1])
			}
			if lm[2] == "=" && !values[lm[3]] {
				t.Errorf("subsecond-alerts.yml matches %s{%s=%q}; its values are %v", m[1], lm[1], lm[3], values)
			}
		}
	}
	if named < 3 {
		t.Errorf("subsecond-alerts.yml names %d metrics; want its rules' (at least 3)", named)
	}

	conf, err := os.ReadFile(filepath.Join(dir, "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"metrics_path: /metrics", "type: Bearer"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("prometheus.yml lacks %q", want)
		}
	}
	files := regexp.MustCompile(`(?m)^rule_files:\n((?:\s+- .+\n)+)`).FindSubmatch(conf)
	if files == nil {
		t.Fatal("prometheus.yml loads no rule_files")
	}
	for _, line := range strings.Split(strings.TrimSpace(string(files[1])), "\n") {
		name := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- "))
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("prometheus.yml loads rule file %s: %v", name, err)
		}
	}
}
