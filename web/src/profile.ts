// The profile page: the offset heatmap and the cores map for the filters in
// the URL, the hot-spots list, and selection that opens a flame graph.

import { errorMessage, getJSON } from "./api";
import { onSchemeChange, type Scale } from "./colors";
import { autoBucket, CoresView, measureOf } from "./cores";
import { $, clear, h } from "./dom";
import { cpuList, fmtOffset, fmtPct, parseDuration, parseOffset } from "./format";
import { HeatmapView } from "./heatmap";
import { fetchJSON, navigate, prefetchJSON } from "./nav";
import { currentParams, FILTER_PARAMS, flameAPI, handOff, heatmapAPI, now, pick, recordTiming, rememberBack, takeHandOff, updateURL } from "./state";
import type { CoresJSON, HeatmapJSON, HotspotList, ViewData } from "./wire";
import { Clock, parseWallParam, TZ_EVENT, wallSpan } from "./wallclock";

// HOT_PARAMS are the URL parameters the hot spots read: the filters, what
// they measure (docs/hotspots.md) and the range of a page opened on one.
// The cores map's bucket is left out: the page picks it to fit the screen,
// and the server's first list used the default.
const HOT_PARAMS = [...FILTER_PARAMS, "measure", "threshold", "min", "start", "end"];

export function profilePage(vd: ViewData, boot: () => void): void {
  const prof = vd.profile;
  const api = vd.api || (prof ? `/api/profiles/${encodeURIComponent(prof.id)}` : "");
  if (!prof || !api) return;
  const origin = prof.t0_ns;
  const clock = new Clock(origin, prof.wall);
  const flameBase = `/p/${encodeURIComponent(prof.id)}/flame`;
  const uploadMark = takeHandOff("upload");
  const sentMark = takeHandOff("upload-sent");
  const storedMark = takeHandOff("upload-stored");

  // open shows the flame graph of a selection, fetching its JSON while the
  // page itself loads.
  const open = (extra: Record<string, string>) => {
    const q = pick(currentParams(), FILTER_PARAMS);
    for (const [k, v] of Object.entries(extra)) q.set(k, v);
    handOff("select");
    prefetchJSON(flameAPI(api, q, false));
    const target = flameBase + "?" + q.toString();
    rememberBack(target, here());
    void navigate(target, boot);
  };
  // A hot spot's link leads back here too.
  $("ol[data-testid=hotspots]")?.addEventListener("click", (ev) => {
    const a = ev.target instanceof Element ? ev.target.closest("a") : null;
    if (a) rememberBack(a.href, here());
  });

  const scaleOf = (p: URLSearchParams): Scale => (p.get("scale") === "log" ? "log" : "linear");
  const heatEl = $("#heatmap");
  const coresEl = $("#cores");
  const heat = heatEl
    ? new HeatmapView(heatEl, {
        originNs: origin,
        clock,
        scale: scaleOf(currentParams()),
        onSelect: (s) => open({ start: fmtOffset(s.startNs), end: fmtOffset(s.endNs) }),
        onRows: (rows) => {
          const field = form?.elements.namedItem("rows");
          if (field instanceof HTMLInputElement && form) {
            field.value = String(rows);
            form.requestSubmit();
          }
        },
      })
    : null;
  // The hot spots have their own fetch, so that switching the measure
  // refreshes them alone.
  let hotCtl: AbortController | null = null;
  const refreshHotspots = (p: URLSearchParams, initial: boolean): Promise<void> => {
    if (hotCtl) hotCtl.abort();
    hotCtl = new AbortController();
    return loadHotspots(api, flameBase, clock, p, hotCtl.signal, initial);
  };
  const cores = coresEl
    ? new CoresView(coresEl, {
        originNs: origin,
        clock,
        onSelect: (s) => open({ start: fmtOffset(s.startNs), end: fmtOffset(s.endNs), cpu: cpuList(s.cpus) }),
        onMeasure: () => void refreshHotspots(currentParams(), false),
      })
    : null;

  const form = $<HTMLFormElement>("form#filters");
  // Without a bucket in the URL, fit the cores map to the screen, and say so
  // in the URL so that the link reproduces this picture.
  if (coresEl && !currentParams().get("bucket")) {
    const bucket = autoBucket(prof.end_ns - prof.t0_ns, coresEl.clientWidth - 60);
    updateURL({ bucket }, false);
    const field = form?.elements.namedItem("bucket");
    if (field instanceof HTMLInputElement) field.value = bucket;
  }
  let ctl: AbortController | null = null;
  let initial = true;
  // linked returns the range the page's URL gives (start, end, or from, to
  // on the wall clock; a host's night links here so) as offsets from T0,
  // which the maps show as their selection; null when it gives none.
  const linked = (p: URLSearchParams): [number, number] | null => {
    const wall = (name: string) => (prof.wall ? parseWallParam(p.get(name)) - prof.wall.offset_ns - origin : NaN);
    const offset = (name: string, wallName: string) => {
      const v = p.get(name);
      if (!v) return wall(wallName);
      const n = parseOffset(v);
      return Number.isNaN(n) ? parseDuration(v) : n;
    };
    const s = offset("start", "from");
    const e = offset("end", "to");
    if (Number.isNaN(s) && Number.isNaN(e)) return null;
    return [Number.isNaN(s) ? 0 : s, Number.isNaN(e) ? prof.end_ns - origin + 1 : e];
  };

  const load = async () => {
    const p = currentParams();
    if (ctl) ctl.abort();
    ctl = new AbortController();
    const signal = ctl.signal;
    const t0 = performance.now();
    document.body.dataset.rendered = "0";
    const cq = pick(p, [...FILTER_PARAMS, "bucket"]);
    const range = linked(p);
    const jobs: Promise<void>[] = [];
    cores?.setMeasure(measureOf(p));
    if (heat) {
      heat.setScale(scaleOf(p));
      jobs.push(
        // After an upload, the upload page has fetched it already.
        fetchJSON<HeatmapJSON>(heatmapAPI(api, p), signal).then(
          (d) => {
            if (signal.aborted) return;
            if (d.total === 0) heat.showMessage(noSamples(p), "empty");
            else {
              heat.setData(d);
              if (range) heat.mark(...range);
            }
            recordTiming("heatmap", performance.now() - t0);
            if (uploadMark !== null) {
              recordTiming("upload-to-heatmap", now() - uploadMark);
              // Where the time went: the server parses the body as it reads it,
              // then finishes the import before it answers.
              if (sentMark !== null) recordTiming("upload-send", sentMark - uploadMark);
              if (sentMark !== null && storedMark !== null) recordTiming("upload-ingest", storedMark - sentMark);
            }
          },
          (e) => {
            if (!signal.aborted) heat.showMessage(errorMessage(e));
          },
        ),
      );
    }
    if (cores) {
      jobs.push(
        getJSON<CoresJSON>(`${api}/cpus?${cq}`, signal).then(
          (d) => {
            // A filter that no CPU's samples pass: no rows to draw.
            if (!d.cpus || d.cpus.length === 0) cores.showMessage(noSamples(p), "empty");
            else {
              cores.setData({ ...d, cpus: d.cpus });
              if (range) cores.mark(...range);
            }
            recordTiming("cores", performance.now() - t0);
          },
          (e) => {
            if (!signal.aborted) cores.showMessage(errorMessage(e));
          },
        ),
      );
    }
    jobs.push(refreshHotspots(p, initial));
    initial = false;
    await Promise.all(jobs);
    if (!signal.aborted) document.body.dataset.rendered = "1";
  };

  if (form) {
    const apply = (push: boolean) => {
      const p = new URLSearchParams();
      const fd = new FormData(form);
      for (const [k, v] of fd.entries()) {
        if (typeof v === "string" && v.trim() !== "") p.set(k, v.trim());
      }
      // Keep URL state that the form does not hold.
      const cur = currentParams();
      for (const [k, v] of cur.entries()) if (!form.elements.namedItem(k) && !p.has(k)) p.set(k, v);
      const qs = p.toString();
      const url = location.pathname + (qs ? "?" + qs : "");
      const state = { page: "profile" };
      if (push) history.pushState(state, "", url);
      else history.replaceState(state, "", url);
      void load();
    };
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      apply(true);
    });
    form.addEventListener("change", (ev) => {
      const t = ev.target as HTMLElement;
      if (t instanceof HTMLSelectElement || (t instanceof HTMLInputElement && (t.type === "checkbox" || t.type === "radio"))) {
        apply(true);
      }
    });
    window.addEventListener("popstate", () => {
      if (!form.isConnected) return;
      syncForm(form, currentParams());
      void load();
    });
  }

  // The maps' scales follow the system's light or dark setting.
  onSchemeChange(() => {
    if (heatEl && !heatEl.isConnected) return;
    heat?.render();
    cores?.restyle();
  });
  // The Times toggle redraws the axes in the zone asked for.
  window.addEventListener(TZ_EVENT, () => {
    if (heatEl && !heatEl.isConnected) return;
    heat?.render();
    cores?.render();
  });
  let resizeTimer = 0;
  window.addEventListener("resize", () => {
    if (heatEl && !heatEl.isConnected) return;
    clearTimeout(resizeTimer);
    resizeTimer = window.setTimeout(() => {
      heat?.render();
      cores?.render();
    }, 120);
  });
  void load();
}

// here is the current page's path and query.
function here(): string {
  return location.pathname + location.search;
}

// noSamples says that the filters in p leave nothing to draw, naming them.
function noSamples(p: URLSearchParams): string {
  const f = [...pick(p, FILTER_PARAMS)].map(([k, v]) => `${k}=${v}`).join(" ");
  return f ? `No samples match ${f}.` : "No samples to show.";
}

// syncForm sets the filter form's fields from the URL (after back/forward).
function syncForm(form: HTMLFormElement, p: URLSearchParams): void {
  for (const el of Array.from(form.elements)) {
    if (el instanceof HTMLInputElement || el instanceof HTMLSelectElement) {
      if (!el.name) continue;
      const v = p.get(el.name) ?? "";
      if (el instanceof HTMLInputElement && (el.type === "checkbox" || el.type === "radio")) el.checked = v === el.value;
      else el.value = v;
    }
  }
}

// loadHotspots refreshes the hot-spots list for the current filters and
// measure. The server renders the list for the first view unless it marked
// the list pending (the hot spots took longer than it waits); it is fetched
// again when the filters or the measure change, with the line saying what
// the episodes are and the note naming the cores a filter hides.
async function loadHotspots(api: string, flameBase: string, clock: Clock, p: URLSearchParams, signal: AbortSignal, initial: boolean): Promise<void> {
  const origin = clock.t0;
  const ol = $("ol[data-testid=hotspots]");
  if (!ol || (initial && !("pending" in ol.dataset))) return;
  delete ol.dataset.pending;
  // The server's note about the first view's list no longer applies.
  ol.parentElement?.querySelector(":scope > p.empty")?.remove();
  try {
    const body = await getJSON<HotspotList>(`${api}/hotspots?${pick(p, HOT_PARAMS)}`, signal);
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
        href = `${flameBase}?${q}`;
      }
      const what = (hs.cpu >= 0 ? `CPU ${hs.cpu}, ` : "") + `${fmtOffset(s)}–${fmtOffset(e)} s`;
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
