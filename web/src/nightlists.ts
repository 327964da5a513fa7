// The host page's lists beside its map: the markers, with their "10 s
// before" links, and the hot spots across the night, each with its flame
// graph, its capture and a button that makes it the Compare panel's target.

import { getJSON } from "./api";
import { withQuery } from "./links";
import { clear, h } from "./dom";
import { fmtMillis, fmtPct } from "./format";
import type { NightCompare } from "./nightcompare";
import { fmtWall } from "./nightmap";
import { fmtWallRange } from "./wallclock";
import type { MarkerView, NightReport, NightSpot } from "./wire";

// renderMarkers lists markers in ul.
export function renderMarkers(ul: HTMLElement, markers: MarkerView[]): void {
  clear(ul);
  if (markers.length === 0) ul.append(h("li", { class: "empty", text: "No markers: subsecond markers import --host … dmesg.txt" }));
  for (const m of markers) {
    const li = h("li", { attrs: { "data-testid": "night-marker" } }, h("span", { class: "when", text: fmtWall(m.time_ns) + " " }), h("span", { text: m.text }));
    if (m.url) li.append(" ", h("a", { text: "the 10 s before", attrs: { href: m.url, "data-testid": "marker-before" } }));
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

  // load lists the 20 best hot spots of measure ("busy" or "system").
  async load(measure: string): Promise<void> {
    const ol = this.ol;
    const rep = await getJSON<NightReport>(withQuery("hostHotspotsAPI", new URLSearchParams({ measure, limit: "20" }), this.host));
    clear(ol);
    if (rep.hotspots.length === 0) ol.append(h("li", { class: "empty", text: `No CPU stayed ${measure} long enough.` }));
    for (const s of rep.hotspots) {
      const what = s.comm ? `${s.comm}${s.top_function ? " in " + s.top_function : ""}` : "";
      const li = h(
        "li",
        { attrs: { "data-testid": "night-hotspot" } },
        h("a", { text: `cpu ${s.cpu} · ${fmtWallRange(s.start_ns, s.end_ns, s.approximate, true)}`, attrs: { href: s.flame_url } }),
        h("span", { text: ` busy ${fmtPct(s.busy)}, system ${fmtPct(s.system)}, score ${Math.round(s.score)} ` }),
        what ? h("span", { class: "what", text: what }) : null,
        h("span", { class: "capture", text: ` · capture ${s.capture_name || s.capture} ` }),
        h("a", { text: "open", attrs: { href: s.url } }),
        s.compare_url ? " · " : null,
        s.compare_url ? h("a", { text: "compare with the previous capture", attrs: { href: s.compare_url, "data-testid": "night-compare" } }) : null,
        " · ",
        this.spotCompare(s),
      );
      if (s.marker) li.append(h("div", { class: "near", text: `${fmtMillis(s.before_marker_ns || 0)} s before: ${s.marker.text}` }));
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
