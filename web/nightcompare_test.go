package web

import (
	"slices"
	"testing"
)

// capturesScript runs nightcompare.ts's allCaptures against a fetch that
// answers the pages it is given by URL (404 for others) and records what
// was asked.
const capturesScript = `import { readFileSync } from "node:fs";
import { allCaptures } from %q;
const pages = JSON.parse(readFileSync(0, "utf8"));
const asked = [];
globalThis.fetch = async (url) => {
  asked.push(url);
  const page = pages[url];
  return new Response(page ? JSON.stringify(page) : JSON.stringify({ error: "no page " + url }), { status: page ? 200 : 404 });
};
const caps = await allCaptures("rack;7");
process.stdout.write(JSON.stringify({ ids: caps.map((c) => c.id), asked }));
`

// TestAllCapturesFollowsPages: the Compare panel reads a host's captures a
// page at a time, each as large as the server allows (per_page=1000, the
// query table's maximum), following each page's next link until a page has
// none, and keeps them in order.
func TestAllCapturesFollowsPages(t *testing.T) {
	first := "/api/hosts/rack%3B7/captures?per_page=1000"
	second := "/api/hosts/rack%3B7/captures?cursor=b&per_page=1000"
	third := "/api/hosts/rack%3B7/captures?cursor=d&per_page=1000"
	capture := func(id string) map[string]any { return map[string]any{"id": id, "start_ns": 1, "end_ns": 2} }
	pages := map[string]any{
		first:  map[string]any{"host": "rack;7", "captures": []any{capture("a"), capture("b")}, "next_cursor": "b", "next": second},
		second: map[string]any{"host": "rack;7", "captures": []any{capture("c"), capture("d")}, "next_cursor": "d", "next": third},
		third:  map[string]any{"host": "rack;7", "captures": []any{capture("e")}},
	}
	var got struct{ IDs, Asked []string }
	runScript(t, capturesScript, []string{"nightcompare.ts"}, pages, &got)
	if want := []string{"a", "b", "c", "d", "e"}; !slices.Equal(got.IDs, want) {
		t.Errorf("allCaptures = %q; want %q", got.IDs, want)
	}
	if want := []string{first, second, third}; !slices.Equal(got.Asked, want) {
		t.Errorf("allCaptures asked for %q; want %q", got.Asked, want)
	}
}
