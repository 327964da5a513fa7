// The profile page's hot-spots list. The server renders the list for the
// first view unless it marked the list pending (the hot spots took longer
// than it waits); it is fetched again when the filters or the measure
// change, with the line saying what the episodes are and the note naming
// the cores a filter hides.

import { errorMessage, getJSON } from "./api";
import { clear, h } from "./dom";
import { displayRange, fmtOffset, fmtPct } from "./format";
import { withQuery } from "./links";
import { FILTER_PARAMS, pick } from "./state";
import { type Clock, wallSpan } from "./wallclock";
import type { HotspotList } from "./wire";

// HOT_PARAMS are the URL parameters the hot spots read: the filters, what
// they measure (docs/hotspots.md) and the range of a page opened on one.
// The cores map's bucket is left out: the page picks it to fit the screen,
// and the server's first list used the default.
const HOT_PARAMS = [...FILTER_PARAMS, "measure", "threshold", "min", "start", "end"];

export interface HotspotsOptions {
  id: string; // the profile's id
  clock: Clock;
  onFollow: (href: string) => void; // a hot spot's link is followed
}

// Hotspots is the list <ol data-testid="hotspots">. Its state is the fetch
// under way, which a newer one aborts.
export class Hotspots {
  private ctl: AbortController | null = null;

  constructor(
    private ol: HTMLElement,
    private opt: HotspotsOptions,
  ) {
    ol.addEventListener("click", (ev) => {
      const a = ev.target instanceof Element ? ev.target.closest("a") : null;
      if (a) opt.onFollow(a.href);
    });
  }

  // refresh fetches the list for the query p; on the initial load only when
  // the server left it pending.
  refresh(p: URLSearchParams, initial: boolean): Promise<void> {
    if (this.ctl) this.ctl.abort();
    this.ctl = new AbortController();
    return this.load(p, this.ctl.signal, initial);
  }

  private async load(p: URLSearchParams, signal: AbortSignal, initial: boolean): Promise<void> {
    const { id, clock } = this.opt;
    const origin = clock.t0;
    const ol = this.ol;
    if (initial && !("pending" in ol.dataset)) return;
    delete ol.dataset.pending;
    // The server's note about the first view's list no longer applies.
    ol.parentElement?.querySelector(":scope > p.empty")?.remove();
    try {
      const body = await getJSON<HotspotList>(withQuery("hotspotsAPI", pick(p, HOT_PARAMS), id), signal);
      const list = body.hotspots || [];
      const what = body.what;
      const whatEl = ol.parentElement?.querySelector<HTMLElement>(":scope > [data-testid=hotspots-what]");
      if (whatEl) whatEl.textContent = what;
      ol.parentElement?.querySelector(":scope > [data-testid=hotspots-note]")?.remove();
      if (body.note) {
        ol.before(h("p", { class: "note", attrs: { role: "note", "data-testid": "hotspots-note" }, text: body.note + "." }));
      }
      clear(ol);
      if (list.length === 0) ol.append(h("li", { class: "empty", text: `No CPU stayed ${what} with these filters.` }));
      for (const hs of list) {
        const s = hs.start_ns - origin;
        const e = hs.end_ns - origin;
        let href = "";
        if (hs.url) {
          try {
            const u = new URL(hs.url, location.href);
            if (u.origin === location.origin) href = u.pathname + u.search;
          } catch {
            /* build it below */
          }
        }
        if (!href) {
          const q = pick(p, FILTER_PARAMS);
          q.set("start", fmtOffset(s));
          q.set("end", fmtOffset(e));
          if (hs.cpu >= 0) q.set("cpu", String(hs.cpu));
          href = withQuery("flamePage", q, id);
        }
        const what = (hs.cpu >= 0 ? `CPU ${hs.cpu}, ` : "") + displayRange(s, e);
        // Spaced as the server's markup is, so the text reads the same.
        const parts = [
          h("a", { attrs: { href }, text: what }),
          clock.known ? wallSpan(clock.at(s), clock.at(e), clock.approximate, "hotspot-wall") : null,
          hs.busy > 0 ? h("span", { class: "busy", text: `${fmtPct(hs.busy)} busy` }) : null,
          hs.busy > 0 ? h("span", { class: "sys", text: `(${fmtPct(hs.system)} system)` }) : null,
          hs.comm ? h("span", { class: "comm", text: hs.comm }) : null,
          hs.comm && hs.comm_share ? h("span", { class: "share", text: `(${fmtPct(hs.comm_share)})` }) : null,
          hs.top_function ? h("code", { class: "func", text: hs.top_function }) : null,
        ].filter((e) => e !== null);
        const li = h("li");
        parts.forEach((e, i) => li.append(...(i ? [" ", e] : [e])));
        ol.append(li);
      }
    } catch (e) {
      if (!signal.aborted) {
        clear(ol);
        ol.append(h("li", { class: "error", text: "Hot spots unavailable: " + errorMessage(e) }));
      }
    }
  }
}
