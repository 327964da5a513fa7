// The host page: a host's night as one cores × time map over one recording
// session, the latest unless the session picker (session in the URL) names
// another (NightMap), the hot spots of the session shown and the markers with
// their "10 s before" links (nightlists.ts) and the CPU share of one
// command (CommShares), the lanes of the host's series under the map on
// its columns (Lanes). Drag across the map to zoom in (the range goes into
// the URL as from/to), click a cell to open that capture's flame graph for
// the cell's CPU and time. hostPage builds the widgets, loads the range the
// URL gives and reloads them when it changes.

import { errorMessage, getJSON } from "./api";
import { CommShares } from "./commshares";
import { $ } from "./dom";
import { displayDuration, fmtMillis } from "./format";
import { path, withQuery } from "./links";
import { type LaneMap, Lanes } from "./lanes";
import { wallTicks } from "./nightaxis";
import { NightHotspots, renderMarkers } from "./nightlists";
import { fmtWall, LABEL_W, NightMap, rowHeight } from "./nightmap";
import { currentParams, updateURL } from "./state";
import { fmtClock, fmtISO, TZ_EVENT, zoneName } from "./wallclock";
import type { MarkerList, MarkerView, NightGrid, SeriesLane, ViewData } from "./wire";

const MIN_SPAN = 10e9; // the finest host range: 10 s, one-second buckets

// hostPage fills the host page.
export function hostPage(vd: ViewData): void {
  const host = vd.host || "";
  const mapEl = $("#night-map");
  if (!host || !mapEl) return;
  const errBox = $("#night-error");
  const showError = (e: unknown) => {
    if (errBox) errBox.textContent = errorMessage(e);
  };
  const measureSel = $<HTMLSelectElement>("#night-measure");
  const params = currentParams();
  if (measureSel) measureSel.value = params.get("measure") === "system" ? "system" : "busy";

  let markers: MarkerView[] = [];
  let loading: AbortController | null = null;

  const map = new NightMap(mapEl, host, zoomTo, zoomOut);
  const lanesEl = $("#lanes");
  const hint = $("#lanes-hint");
  const lanes = lanesEl
    ? new Lanes<NightGrid>(lanesEl, $("#night-lanes fieldset"), {
        host,
        map: (g) => nightLaneMap(g, map.width()),
        recorded: sessionHolds(host),
        onNone: (none) => {
          if (hint) hint.hidden = !none;
        },
      })
    : null;
  const sessionSel = $<HTMLSelectElement>("#night-session");
  const markersEl = $("#night-markers");
  const hotEl = $("#night-hotspots");
  const hotspots = hotEl ? new NightHotspots(hotEl, host, map.compare) : null;

  function zoomTo(from: number, to: number): void {
    if (to - from < MIN_SPAN) {
      const mid = (from + to) / 2;
      from = mid - MIN_SPAN / 2;
      to = mid + MIN_SPAN / 2;
    }
    updateURL({ from: fmtISO(Math.floor(from / 1e9) * 1e9), to: fmtISO(Math.ceil(to / 1e9) * 1e9) }, true);
    void load();
  }

  function zoomOut(): void {
    const g = map.current;
    if (!g) return;
    const span = g.to_ns - g.from_ns;
    zoomTo(g.from_ns - span * 1.5, g.to_ns + span * 1.5);
  }

  $("#night-out")?.addEventListener("click", zoomOut);
  // The whole session shown: its own, named when the host has others.
  $("#night-all")?.addEventListener("click", () => {
    const s = sessionSel ? sessionOf(map.current) : null;
    updateURL({ from: null, to: null, session: s ? String(s) : null }, true);
    void load();
  });
  sessionSel?.addEventListener("change", () => {
    updateURL({ from: null, to: null, session: sessionSel.value }, true);
    void load();
  });
  measureSel?.addEventListener("change", () => {
    updateURL({ measure: measureSel.value === "system" ? "system" : null }, false);
    map.draw();
    void loadHotspots();
  });
  // The header's Times toggle (wallclock.ts) has put the zone in the URL.
  window.addEventListener(TZ_EVENT, () => {
    if (!mapEl.isConnected) return;
    if (sessionSel) labelSessions(sessionSel);
    map.draw();
    lanes?.draw();
    showRange(map.current);
    void loadHotspots();
    void loadMarkers();
  });
  window.addEventListener("popstate", () => void load());
  // Redrawn when the map's width changes: the window's, or a scroll bar's
  // coming as the page grows.
  let lastWidth = 0;
  new ResizeObserver(() => {
    if (mapEl.clientWidth !== lastWidth) {
      lastWidth = mapEl.clientWidth;
      map.draw();
      lanes?.draw();
    }
  }).observe(mapEl);

  async function load(): Promise<void> {
    loading?.abort();
    const ac = new AbortController();
    loading = ac;
    const p = currentParams();
    const q = new URLSearchParams();
    for (const k of ["from", "to", "bucket", "session"]) {
      const v = p.get(k);
      if (v) q.set(k, v);
    }
    const grid = getJSON<NightGrid>(withQuery("timelineAPI", q, host), ac.signal);
    // The lanes ask for the map's very range and bucket, beside it.
    void lanes?.load(q, grid);
    try {
      if (errBox) errBox.textContent = "";
      const [g, m] = await Promise.all([grid, getJSON<MarkerList>(path("markersAPI", host), ac.signal)]);
      if (TEST_HOOKS) (window as unknown as { __night: NightGrid }).__night = g;
      map.setGrid(g);
      if (sessionSel) sessionSel.value = p.get("session") || String(sessionOf(g) ?? "");
      markers = m.markers || [];
      map.setMarkers(markers);
      lanes?.setMarkers(markers);
      lanes?.draw();
      map.draw();
      showRange(g);
      if (markersEl) renderMarkers(markersEl, markers);
      void loadHotspots();
      void comms.load(g);
    } catch (e) {
      if (!ac.signal.aborted) showError(e);
    }
  }

  async function loadMarkers(): Promise<void> {
    try {
      markers = (await getJSON<MarkerList>(path("markersAPI", host))).markers || [];
      map.setMarkers(markers);
      lanes?.setMarkers(markers);
      lanes?.draw();
      if (markersEl) renderMarkers(markersEl, markers);
      map.draw();
    } catch (e) {
      showError(e);
    }
  }

  async function loadHotspots(): Promise<void> {
    if (!hotspots) return;
    const measure = currentParams().get("measure") === "system" ? "system" : "busy";
    try {
      await hotspots.load(measure, sessionOf(map.current));
    } catch (e) {
      showError(e);
    }
  }

  const comms = new CommShares($("#night-commline"), {
    host,
    input: $<HTMLInputElement>("#night-comm"),
    list: $("#night-comm-list"),
    jumps: $("#night-jumps"),
    width: () => map.width(),
    onError: showError,
  });

  if (sessionSel) labelSessions(sessionSel);
  void load();
}

// nightLaneMap is where the lanes lie under the map of g drawn w px wide:
// its columns span its width right of its CPU labels.
function nightLaneMap(g: NightGrid, w: number): LaneMap {
  const span = g.buckets * g.bucket_ns;
  const sessions = new Set(g.captures.map((c) => c.session)).size > 1;
  return {
    from_ns: g.from_ns,
    to_ns: g.to_ns,
    bucket_ns: g.bucket_ns,
    cpus: g.cpus,
    rowH: rowHeight(g),
    left: LABEL_W,
    width: w,
    x: (t) => LABEL_W + ((t - g.from_ns) / span) * (w - LABEL_W),
    time: (x) => g.from_ns + ((x - LABEL_W) / (w - LABEL_W)) * span,
    ticks: wallTicks(g.from_ns, g.to_ns, w - LABEL_W, sessions).map((t) => t.ns),
  };
}

// sessionHolds returns whether the session a grid shows holds any series
// of kinds anywhere in it, caching the answer by session and kinds.
function sessionHolds(host: string): (g: NightGrid, kinds: string[]) => Promise<boolean> {
  const cache = new Map<string, boolean>();
  return async (g, kinds) => {
    const session = sessionOf(g) ?? 0;
    const key = `${session}|${kinds.join(",")}`;
    const known = cache.get(key);
    if (known !== undefined) return known;
    const q = new URLSearchParams({ session: String(session) });
    const any = await Promise.all(
      kinds.map(async (name) => {
        q.set("name", name);
        try {
          return (await getJSON<SeriesLane>(withQuery("seriesAPI", q, host))).series.length > 0;
        } catch {
          return false;
        }
      }),
    );
    const has = any.some((x) => x);
    cache.set(key, has);
    return has;
  };
}

// sessionOf returns the recording session g shows (its first capture's).
function sessionOf(g: NightGrid | null): number | null {
  return g?.captures[0]?.session ?? null;
}

// labelSessions writes the picker's sessions in the page's zone, as the
// server does in UTC: "2: 2026-11-30 03:00:00–03:03:00 UTC, 3 captures".
function labelSessions(sel: HTMLSelectElement): void {
  for (const o of sel.options) {
    const from = Number(o.dataset.from);
    const to = Number(o.dataset.to);
    const n = Number(o.dataset.captures);
    const start = fmtClock(from, true);
    let end = fmtClock(to, true);
    if (end.slice(0, 10) === start.slice(0, 10)) end = fmtClock(to);
    const approx = o.dataset.approximate === "true" ? "≈ " : "";
    o.textContent = `${o.value}: ${approx}${start}–${end} ${zoneName(undefined, from)}, ${n} capture${n === 1 ? "" : "s"}`;
  }
}

// showRange says which range the map shows and, at fine zoom inside one
// capture, offers that capture's own page for the range.
function showRange(g: NightGrid | null): void {
  const el = $("#night-range");
  const open = $<HTMLAnchorElement>("#night-open");
  if (!g || !el) return;
  el.textContent = `${fmtWall(g.from_ns)} – ${fmtWall(g.to_ns)} · ${displayDuration(g.bucket_ns)} per column`;
  if (open) {
    const c = g.captures.find((c) => c.start_ns <= g.from_ns + g.bucket_ns && c.end_ns >= g.to_ns - g.bucket_ns);
    if (c && g.to_ns - g.from_ns <= 10 * 60e9) {
      const base = c.offset_ns + c.t0_ns;
      const lo = Math.max(g.from_ns, c.start_ns) - base;
      const hi = Math.min(g.to_ns, c.end_ns) - base;
      open.href = withQuery("profilePage", new URLSearchParams({ start: fmtMillis(lo), end: fmtMillis(hi) }), c.id);
      open.textContent = `Open ${displayDuration(hi - lo)} of ${c.name || c.id} in its own views`;
      open.hidden = false;
    } else open.hidden = true;
  }
}
