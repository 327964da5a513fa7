// The host page: a host's night as one cores × time canvas over the union of
// its captures (gaps between captures drawn as gaps, capture boundaries and
// markers marked), the hot spots across the night, the markers with their
// "10 s before" links and the CPU share of one command. Drag across the map
// to zoom in (the range goes into the URL as from/to), click a cell to open
// that capture's flame graph for the cell's CPU and time: the hand-over to
// the capture's own subsecond views.

import { errorMessage, getJSON } from "./api";
import { emptyCell, coreColor, systemColor } from "./colors";
import { $, clear, h, setupCanvas, Tooltip } from "./dom";
import { fmtMillis, fmtPct } from "./format";
import { currentParams, updateURL } from "./state";
import { NightCompare } from "./nightcompare";
import type { CommReport, MarkerList, MarkerView, NightCapture, NightGrid, NightReport, NightSpot, ViewData } from "./wire";
import { fmtClock, fmtWallRange, TZ_EVENT, withTZ, zone, zoneName } from "./wallclock";

const LABEL_W = 56; // px left of the map for CPU labels
const MARK_H = 14; // px above the map for markers and capture boundaries
const MIN_SPAN = 10e9; // the finest host range: 10 s, one-second buckets

// fmtWall writes a time of day in the page's zone (UTC, or the browser's
// with tz=local; see wallclock.ts), with the date and the zone's name when
// withDate.
function fmtWall(ns: number, withDate = true): string {
  return withDate ? `${fmtClock(ns, true)} ${zoneName(zone(), ns)}` : fmtClock(ns);
}

function iso(ns: number): string {
  return new Date(Math.round(ns / 1e6)).toISOString();
}

// hostPage fills the host page.
export function hostPage(vd: ViewData): void {
  const api = vd.api || "";
  const map = $("#night-map");
  if (!api || !map) return;
  const tip = new Tooltip();
  const errBox = $("#night-error");
  const showError = (e: unknown) => {
    if (errBox) errBox.textContent = errorMessage(e);
  };
  const measureSel = $<HTMLSelectElement>("#night-measure");
  const params = currentParams();
  if (measureSel) measureSel.value = params.get("measure") === "system" ? "system" : "busy";

  let grid: NightGrid | null = null;
  let markers: MarkerView[] = [];
  let loading: AbortController | null = null;

  const canvas = h("canvas", { attrs: { "data-testid": "night-canvas" } });
  clear(map);
  map.append(canvas);
  const compare = new NightCompare(api, map);

  const rowH = (g: NightGrid) => Math.max(2, Math.min(12, Math.floor(480 / Math.max(1, g.cpus.length))));
  const width = () => Math.max(300, map.clientWidth || 1000);
  // The map's geometry: its columns span buckets × bucket_ns from from_ns
  // (to_ns may end inside the last), over the width it was drawn at
  // (drawn), which the pointer's positions are read against until it is
  // drawn again.
  let drawn = 0;
  const span = (g: NightGrid) => g.buckets * g.bucket_ns;
  const colX = (g: NightGrid, t: number) => LABEL_W + ((t - g.from_ns) / span(g)) * ((drawn || width()) - LABEL_W);
  const timeAt = (g: NightGrid, x: number) => g.from_ns + ((x - LABEL_W) / ((drawn || width()) - LABEL_W)) * span(g);

  function draw(): void {
    const g = grid;
    if (!g) return;
    const system = currentParams().get("measure") === "system";
    const rh = rowH(g);
    const w = width();
    drawn = w;
    const hgt = MARK_H + rh * g.cpus.length + 18;
    const ctx = setupCanvas(canvas, w, hgt);
    ctx.clearRect(0, 0, w, hgt);
    const cw = (w - LABEL_W) / g.buckets;
    // The geometry, for tests and tools that read the canvas.
    Object.assign(map!.dataset, { left: String(LABEL_W), top: String(MARK_H), rowH: String(rh), cellW: String(cw), buckets: String(g.buckets), cpus: g.cpus.join(",") });
    for (let b = 0; b < g.buckets; b++) {
      const x = LABEL_W + b * cw;
      if (g.covered[b] === 0) {
        // A gap between captures: hatched, never drawn as idle time.
        ctx.fillStyle = "#e4e4e8";
        ctx.fillRect(x, MARK_H, Math.max(1, cw), rh * g.cpus.length);
        continue;
      }
      for (let r = 0; r < g.cpus.length; r++) {
        const n = g.samples[r][b];
        const busy = g.busy[r][b];
        const sys = g.system[r][b];
        ctx.fillStyle = n === 0 ? emptyCell() : system ? systemColor(sys) : coreColor(busy, busy > 0 ? sys / busy : 0);
        ctx.fillRect(x, MARK_H + r * rh, Math.max(1, cw + 0.5), rh);
      }
    }
    // Hatching over the gaps, so they read as "not recorded".
    ctx.strokeStyle = "#c4c4cc";
    ctx.lineWidth = 1;
    for (let b = 0; b < g.buckets; b++) {
      if (g.covered[b] !== 0) continue;
      const x = LABEL_W + b * cw;
      for (let y = MARK_H; y < MARK_H + rh * g.cpus.length; y += 6) {
        ctx.beginPath();
        ctx.moveTo(x, y);
        ctx.lineTo(x + Math.max(1, cw), y + 3);
        ctx.stroke();
      }
    }
    // Capture boundaries.
    ctx.strokeStyle = "rgba(40,40,60,0.55)";
    for (const c of g.captures) {
      for (const t of [c.start_ns, c.end_ns]) {
        if (t <= g.from_ns || t >= g.to_ns) continue;
        const x = Math.round(colX(g, t)) + 0.5;
        ctx.beginPath();
        ctx.moveTo(x, MARK_H - 4);
        ctx.lineTo(x, MARK_H + rh * g.cpus.length);
        ctx.stroke();
      }
    }
    // Markers: a red triangle above the map and a dashed line through it.
    ctx.fillStyle = "#c00018";
    ctx.strokeStyle = "rgba(200,0,24,0.7)";
    ctx.setLineDash([3, 3]);
    for (const m of markers) {
      if (m.time_ns < g.from_ns || m.time_ns >= g.to_ns) continue;
      const x = colX(g, m.time_ns);
      ctx.beginPath();
      ctx.moveTo(x - 5, 0);
      ctx.lineTo(x + 5, 0);
      ctx.lineTo(x, MARK_H - 3);
      ctx.fill();
      ctx.beginPath();
      ctx.moveTo(x, MARK_H);
      ctx.lineTo(x, MARK_H + rh * g.cpus.length);
      ctx.stroke();
    }
    ctx.setLineDash([]);
    // Labels: CPUs every few rows, times along the bottom.
    ctx.fillStyle = "#333";
    ctx.font = "10px sans-serif";
    ctx.textBaseline = "middle";
    const every = Math.max(1, Math.ceil(10 / rh));
    g.cpus.forEach((cpu, r) => {
      if (r % every === 0) ctx.fillText("cpu " + cpu, 2, MARK_H + r * rh + rh / 2);
    });
    ctx.textBaseline = "top";
    const ticks = 6;
    for (let i = 0; i <= ticks; i++) {
      const t = g.from_ns + ((g.to_ns - g.from_ns) * i) / ticks;
      const x = colX(g, t);
      ctx.fillText(fmtWall(t, false), Math.min(Math.max(LABEL_W, x - 30), w - 70), MARK_H + rh * g.cpus.length + 4);
    }
    compare.layout((t) => Math.min(w, Math.max(LABEL_W, colX(g, t))), MARK_H + rh * g.cpus.length + "px");
  }

  // cellAt returns the CPU row and bucket under a pointer, or null.
  function cellAt(ev: MouseEvent): { r: number; b: number; t: number } | null {
    const g = grid;
    if (!g) return null;
    const rect = canvas.getBoundingClientRect();
    const x = ev.clientX - rect.left;
    const y = ev.clientY - rect.top - MARK_H;
    const r = Math.floor(y / rowH(g));
    if (x < LABEL_W || r < 0 || r >= g.cpus.length) return null;
    const t = timeAt(g, x);
    const b = Math.floor((t - g.from_ns) / g.bucket_ns);
    if (b < 0 || b >= g.buckets) return null;
    return { r, b, t };
  }

  // captureAt returns the capture holding wall time t.
  function captureAt(t: number): NightCapture | null {
    for (const c of grid?.captures || []) if (t >= c.start_ns && t < c.end_ns) return c;
    return null;
  }

  // cellLink is the flame graph of one cell: its CPU over the part of its
  // bucket that its capture holds.
  function cellLink(r: number, b: number, t: number): string | null {
    const g = grid;
    const c = captureAt(t);
    if (!g || !c) return null;
    const lo = Math.max(g.from_ns + b * g.bucket_ns, c.start_ns);
    const hi = Math.min(g.from_ns + (b + 1) * g.bucket_ns, c.end_ns);
    const base = c.offset_ns + c.t0_ns;
    return `/p/${encodeURIComponent(c.id)}/flame?cpu=${g.cpus[r]}&start=${fmtMillis(lo - base)}&end=${fmtMillis(hi - base)}`;
  }

  // A drag zooms; with Shift it picks a range to compare (NightCompare).
  let drag: { x0: number; x1: number; y0: number; shift: boolean } | null = null;
  const sel = h("div", { class: "night-selection", attrs: { "data-testid": "night-selection" } });
  sel.hidden = true;
  map.append(sel);

  canvas.addEventListener("mousemove", (ev) => {
    const g = grid;
    if (drag) {
      drag.x1 = ev.clientX - canvas.getBoundingClientRect().left;
      const a = Math.min(drag.x0, drag.x1);
      sel.style.left = a + "px";
      sel.style.width = Math.abs(drag.x1 - drag.x0) + "px";
      sel.style.height = canvas.style.height;
      sel.classList.toggle("picking", drag.shift);
      sel.hidden = false;
      return;
    }
    const cell = cellAt(ev);
    if (!g || !cell) {
      tip.hide();
      return;
    }
    const start = g.from_ns + cell.b * g.bucket_ns;
    const c = captureAt(cell.t);
    const lines = [`cpu ${g.cpus[cell.r]} · ${fmtWall(start)} + ${fmtMillis(g.bucket_ns)} s`];
    if (g.covered[cell.b] === 0) lines.push("no capture: not recorded");
    else {
      lines.push(`busy ${fmtPct(g.busy[cell.r][cell.b])}, system ${fmtPct(g.system[cell.r][cell.b])}, ${g.samples[cell.r][cell.b]} samples`);
      if (c) lines.push(`capture ${c.name || c.id}${c.approximate ? " (time approximate)" : ""}: click for its flame graph`);
    }
    tip.show(ev, lines);
  });
  canvas.addEventListener("mouseleave", () => tip.hide());
  canvas.addEventListener("mousedown", (ev) => {
    const r = canvas.getBoundingClientRect();
    const x = ev.clientX - r.left;
    drag = { x0: x, x1: x, y0: ev.clientY - r.top, shift: ev.shiftKey };
  });
  window.addEventListener("mouseup", (ev) => {
    const d = drag;
    drag = null;
    sel.hidden = true;
    const g = grid;
    if (!d || !g) return;
    if (d.shift) {
      pick(g, d, ev);
      return;
    }
    if (Math.abs(d.x1 - d.x0) < 4) {
      // A click: hand over to the capture's own views.
      const cell = cellAt(ev);
      const link = cell && cellLink(cell.r, cell.b, cell.t);
      if (link) location.href = withTZ(link);
      return;
    }
    const a = timeAt(g, Math.max(LABEL_W, Math.min(d.x0, d.x1)));
    const b = timeAt(g, Math.min(drawn, Math.max(d.x0, d.x1)));
    zoomTo(a, b);
  });

  // pick hands a Shift+drag to the Compare panel: the buckets it crosses
  // (a Shift+click, the one under the pointer) and the CPUs of the rows it
  // crosses, all of them when it crosses every row.
  function pick(g: NightGrid, d: { x0: number; x1: number; y0: number }, ev: MouseEvent): void {
    const bucketAt = (x: number) => Math.min(g.buckets - 1, Math.max(0, Math.floor((timeAt(g, x) - g.from_ns) / g.bucket_ns)));
    const b0 = bucketAt(Math.min(d.x0, d.x1));
    const b1 = bucketAt(Math.max(d.x0, d.x1));
    const rh = rowH(g);
    const rowAt = (y: number) => Math.min(g.cpus.length - 1, Math.max(0, Math.floor((y - MARK_H) / rh)));
    const y1 = ev.clientY - canvas.getBoundingClientRect().top;
    const r0 = rowAt(Math.min(d.y0, y1));
    const r1 = rowAt(Math.max(d.y0, y1));
    const cpus = r0 === 0 && r1 === g.cpus.length - 1 ? null : g.cpus.slice(r0, r1 + 1);
    void compare.pick(g.from_ns + b0 * g.bucket_ns, g.from_ns + (b1 + 1) * g.bucket_ns, cpus);
  }

  function zoomTo(from: number, to: number): void {
    if (to - from < MIN_SPAN) {
      const mid = (from + to) / 2;
      from = mid - MIN_SPAN / 2;
      to = mid + MIN_SPAN / 2;
    }
    updateURL({ from: iso(Math.floor(from / 1e9) * 1e9), to: iso(Math.ceil(to / 1e9) * 1e9) }, true);
    void load();
  }

  $("#night-out")?.addEventListener("click", () => {
    const g = grid;
    if (!g) return;
    const span = g.to_ns - g.from_ns;
    zoomTo(g.from_ns - span * 1.5, g.to_ns + span * 1.5);
  });
  $("#night-all")?.addEventListener("click", () => {
    updateURL({ from: null, to: null }, true);
    void load();
  });
  measureSel?.addEventListener("change", () => {
    updateURL({ measure: measureSel.value === "system" ? "system" : null }, false);
    draw();
    void loadHotspots();
  });
  // The header's Times toggle (wallclock.ts) has put the zone in the URL.
  window.addEventListener(TZ_EVENT, () => {
    if (!map.isConnected) return;
    draw();
    showRange();
    void loadHotspots();
    void loadMarkers();
  });
  window.addEventListener("popstate", () => void load());
  // Redrawn when the map's width changes: the window's, or a scroll bar's
  // coming as the page grows.
  let lastWidth = 0;
  new ResizeObserver(() => {
    if (map.clientWidth !== lastWidth) {
      lastWidth = map.clientWidth;
      draw();
    }
  }).observe(map);

  function showRange(): void {
    const g = grid;
    const el = $("#night-range");
    const open = $<HTMLAnchorElement>("#night-open");
    if (!g || !el) return;
    el.textContent = `${fmtWall(g.from_ns)} – ${fmtWall(g.to_ns)} · ${fmtMillis(g.bucket_ns)} s per column`;
    // At fine zoom, inside one capture, offer its own page for the range.
    if (open) {
      const c = g.captures.find((c) => c.start_ns <= g.from_ns + g.bucket_ns && c.end_ns >= g.to_ns - g.bucket_ns);
      if (c && g.to_ns - g.from_ns <= 10 * 60e9) {
        const base = c.offset_ns + c.t0_ns;
        const lo = Math.max(g.from_ns, c.start_ns) - base;
        const hi = Math.min(g.to_ns, c.end_ns) - base;
        open.href = `/p/${encodeURIComponent(c.id)}?start=${fmtMillis(lo)}&end=${fmtMillis(hi)}`;
        open.textContent = `Open ${fmtMillis(hi - lo)} s of ${c.name || c.id} in its own views`;
        open.hidden = false;
      } else open.hidden = true;
    }
  }

  async function load(): Promise<void> {
    loading?.abort();
    const ac = new AbortController();
    loading = ac;
    const p = currentParams();
    const q = new URLSearchParams();
    for (const k of ["from", "to", "bucket"]) {
      const v = p.get(k);
      if (v) q.set(k, v);
    }
    try {
      if (errBox) errBox.textContent = "";
      const [g, m] = await Promise.all([
        getJSON<NightGrid>(`${api}/timeline?${q}`, ac.signal),
        getJSON<MarkerList>(`${api}/markers`, ac.signal),
      ]);
      grid = g;
      markers = m.markers || [];
      draw();
      showRange();
      renderMarkers();
      void loadHotspots();
      void loadComms();
    } catch (e) {
      if (!ac.signal.aborted) showError(e);
    }
  }

  function renderMarkers(): void {
    const ul = $("#night-markers");
    if (!ul) return;
    clear(ul);
    if (markers.length === 0) ul.append(h("li", { class: "empty", text: "No markers: subsecond markers import --host … dmesg.txt" }));
    for (const m of markers) {
      const li = h("li", { attrs: { "data-testid": "night-marker" } }, h("span", { class: "when", text: fmtWall(m.time_ns) + " " }), h("span", { text: m.text }));
      if (m.url) li.append(" ", h("a", { text: "the 10 s before", attrs: { href: m.url, "data-testid": "marker-before" } }));
      ul.append(li);
    }
  }

  async function loadMarkers(): Promise<void> {
    try {
      markers = (await getJSON<MarkerList>(`${api}/markers`)).markers || [];
      renderMarkers();
      draw();
    } catch (e) {
      showError(e);
    }
  }

  async function loadHotspots(): Promise<void> {
    const ol = $("#night-hotspots");
    if (!ol) return;
    const measure = currentParams().get("measure") === "system" ? "system" : "busy";
    try {
      const rep = await getJSON<NightReport>(`${api}/hotspots?measure=${measure}&limit=20`);
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
          spotCompare(s),
        );
        if (s.marker) li.append(h("div", { class: "near", text: `${fmtMillis(s.before_marker_ns || 0)} s before: ${s.marker.text}` }));
        ol.append(li);
      }
    } catch (e) {
      showError(e);
    }
  }

  // spotCompare is a hot spot's button that makes it the Compare panel's
  // target.
  function spotCompare(s: NightSpot): HTMLElement {
    const b = h("button", { class: "btn small", text: "compare…", attrs: { type: "button", "data-testid": "night-hotspot-compare" } });
    b.addEventListener("click", () => void compare.pickSpot(s.capture, s.cpu, s.start_ns, s.end_ns));
    return b;
  }

  const commInput = $<HTMLInputElement>("#night-comm");
  commInput?.addEventListener("change", () => {
    updateURL({ comm: commInput.value.trim() || null }, false);
    void loadComms();
  });

  async function loadComms(): Promise<void> {
    const g = grid;
    const lineBox = $("#night-commline");
    if (!g || !lineBox) return;
    const p = currentParams();
    const q = new URLSearchParams({ from: iso(g.from_ns), to: iso(g.to_ns), bucket: fmtMillis(g.bucket_ns), limit: "10" });
    const comm = p.get("comm") || "";
    try {
      // Without a command, the answer follows the one that jumps furthest.
      const rep = await getJSON<CommReport>(`${api}/comms?${q}${comm ? "&comm=" + encodeURIComponent(comm) : ""}`);
      if (commInput) commInput.value = rep.comm || comm;
      const dl = $("#night-comm-list");
      const ol = $("#night-jumps");
      if (dl) {
        clear(dl);
        for (const j of rep.jumps) dl.append(h("option", { attrs: { value: j.comm } }));
      }
      if (ol) {
        clear(ol);
        for (const j of rep.jumps) {
          const a = h("a", { text: j.comm, attrs: { href: "#", "data-comm": j.comm } });
          a.addEventListener("click", (ev) => {
            ev.preventDefault();
            updateURL({ comm: j.comm }, false);
            void loadComms();
          });
          ol.append(h("li", { attrs: { "data-testid": "night-jump" } }, a, ` ${fmtPct(j.peak)} at ${fmtWall(j.peak_at_ns, false)}, usually ${fmtPct(j.baseline)}`));
        }
      }
      drawCommLine(lineBox, rep);
    } catch (e) {
      showError(e);
    }
  }

  function drawCommLine(box: HTMLElement, rep: CommReport): void {
    clear(box);
    const series = rep.series || [];
    const c = h("canvas", { attrs: { "data-testid": "night-commcanvas" } });
    box.append(c);
    const w = width();
    const hgt = 90;
    const ctx = setupCanvas(c, w, hgt);
    let top = rep.baseline * 2;
    for (const v of series) if (v !== null && v > top) top = v;
    top = top || 0.01;
    const x = (b: number) => LABEL_W + ((b + 0.5) / rep.buckets) * (w - LABEL_W);
    const y = (v: number) => hgt - 12 - (v / top) * (hgt - 20);
    ctx.fillStyle = "#333";
    ctx.font = "10px sans-serif";
    ctx.fillText(fmtPct(top), 2, 12);
    ctx.fillText("0%", 2, hgt - 12);
    // The usual level.
    ctx.strokeStyle = "#888";
    ctx.setLineDash([4, 3]);
    ctx.beginPath();
    ctx.moveTo(LABEL_W, y(rep.baseline));
    ctx.lineTo(w, y(rep.baseline));
    ctx.stroke();
    ctx.setLineDash([]);
    // The share; a gap between captures breaks the line.
    ctx.strokeStyle = "#b3001b";
    ctx.lineWidth = 1.5;
    let open = false;
    ctx.beginPath();
    series.forEach((v, b) => {
      if (v === null) {
        open = false;
        return;
      }
      if (open) ctx.lineTo(x(b), y(v));
      else ctx.moveTo(x(b), y(v));
      open = true;
    });
    ctx.stroke();
    box.setAttribute("aria-label", `${rep.comm || ""}: usually ${fmtPct(rep.baseline)} of the host's CPU`);
  }

  void load();
}
