// The host page's lists beside its map: the markers, with their "10 s
// before" links to the host's range and how much of it was not recorded,
// and the hot spots of the session shown, each with the measure that found
// it, the flame graph and differential graph of its host range, its
// capture and a button that makes it the Compare panel's target.

import { getJSON } from "./api";
import { withQuery } from "./links";
import { clear, h } from "./dom";
import { displayDuration, fmtPct } from "./format";
import type { NightCompare } from "./nightcompare";
import { fmtWall } from "./nightmap";
import { fmtWallRange, parseWallParam } from "./wallclock";
import type { MarkerView, NightReport, NightSpot } from "./wire";

// renderMarkers lists markers in ul.
export function renderMarkers(ul: HTMLElement, markers: MarkerView[]): void {
  clear(ul);
  if (markers.length === 0) ul.append(h("li", { class: "empty", text: "No markers: subsecond markers import --host … dmesg.txt" }));
  for (const m of markers) {
    const li = h("li", { attrs: { "data-testid": "night-marker" } }, h("span", { class: "when", text: fmtWall(m.time_ns) + " " }), h("span", { text: m.text }));
    if (m.url) li.append(" ", h("a", { text: "the 10 s before", attrs: { href: m.url, "data-testid": "marker-before" } }));
    const missing = m.before?.missing_ns || 0;
    if (missing > 0) li.append(" · ", h("span", { class: "missing", text: `${displayDuration(missing)} of this window were not recorded`, attrs: { "data-testid": "marker-missing" } }));
    ul.append(li);
  }
}

// NightHotspots is the list of a host's hot spots (ol#night-hotspots); it
// keeps no state of its own: load fetches and lists them for a measure.
export class NightHotspots {
  constructor(
    private ol: HTMLElement,
    private host: string,
    private compare: NightCompare,
  ) {}

  // load lists the 20 best hot spots of measure ("busy" or "system") in
  // recording session session (null: the latest).
  async load(measure: string, session: number | null): Promise<void> {
    const ol = this.ol;
    const q = new URLSearchParams({ measure, limit: "20" });
    if (session) q.set("session", String(session));
    const rep = await getJSON<NightReport>(withQuery("hostHotspotsAPI", q, this.host));
    clear(ol);
    if (rep.hotspots.length === 0) ol.append(h("li", { class: "empty", text: `No CPU stayed ${measure} long enough.` }));
    for (const s of rep.hotspots) {
      const what = s.comm ? `${s.comm}${s.top_function ? " in " + s.top_function : ""}` : "";
      const li = h(
        "li",
        { attrs: { "data-testid": "night-hotspot" } },
        h("a", { text: `cpu ${s.cpu} · ${fmtWallRange(s.start_ns, s.end_ns, s.approximate, true)}`, attrs: { href: s.flame_url } }),
        h("span", { text: ` busy ${fmtPct(s.busy)}, system ${fmtPct(s.system)}, score ${Math.round(s.score)} ` }),
        h("span", { class: "measure", text: `found on ${s.measure} time `, attrs: { "data-testid": "night-hotspot-measure" } }),
        what ? h("span", { class: "what", text: what }) : null,
        h("span", { class: "capture", text: ` · capture ${s.capture_name || s.capture} ` }),
        h("a", { text: "open", attrs: { href: s.url } }),
        s.compare_url ? " · " : null,
        s.compare_url ? h("a", { text: compareText(s), attrs: { href: s.compare_url, "data-testid": "night-compare" } }) : null,
        " · ",
        this.spotCompare(s),
      );
      if (s.marker) li.append(h("div", { class: "near", text: `${displayDuration(s.before_marker_ns || 0)} before: ${s.marker.text}` }));
      ol.append(li);
    }
  }

  // spotCompare is a hot spot's button that makes it the Compare panel's
  // target.
  private spotCompare(s: NightSpot): HTMLElement {
    const b = h("button", { class: "btn small", text: "compare…", attrs: { type: "button", "data-testid": "night-hotspot-compare" } });
    b.addEventListener("click", () => void this.compare.pickSpot(s.cpu, s.start_ns, s.end_ns));
    return b;
  }
}

// compareText names a hot spot's baseline (timeline.CompareBase): the same
// range an hour earlier, or the same place in the capture before.
function compareText(s: NightSpot): string {
  const from2 = parseWallParam(new URL(s.compare_url || "", location.href).searchParams.get("from2"));
  return s.start_ns - from2 === 3600e9 ? "compare with an hour earlier" : "compare with the capture before";
}
