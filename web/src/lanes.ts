// The lanes of a host's series (timeline.SeriesLane) under a cores map, on
// its time axis, so that a core that lights up in the map lights up in
// mpstat's view of it at the same place: under the host page's night map
// and under a capture's cores map (capturelanes.ts), each of which says
// where a wall-clock time falls on it (LaneMap). A
// per-CPU kind (cpu.sys, irq, softirq.net_rx, …) is a CPU × time heat with
// the map's rows, a % kind scaled to 100%, a rate to the lane's largest
// value; the other kinds are lines, one per series (its label: the cgroup
// controller, the device), with the largest value labelled and a gap where
// nothing was recorded. The lanes shown are the URL's state (its picker
// writes it); each is fetched with the query the page hands over (on the
// host page the map's very range and bucket, so that column b of a lane is
// column b of the map), and a lane's column b is drawn over the x range of
// its wall-clock time on the map.

import { APIError, errorMessage, getJSON } from "./api";
import { emptyCell, heatColor, onSchemeChange, systemColor, userColor } from "./colors";
import { clear, h, setupCanvas, Tooltip } from "./dom";
import { displayDuration, fmtValue } from "./format";
import { legend } from "./grid";
import { withQuery } from "./links";
import { fmtWall } from "./nightmap";
import { PARAMS } from "./params";
import { currentParams, updateURL } from "./state";
import type { LaneSeries, SeriesLane } from "./wire";

const LINE_H = 72; // px of a line lane's plot
const HEAT_H = 160; // px a heat lane's rows fit in, at most the map's row height each
const PALETTE = 8; // line colours, .ls0 … .ls7 in hostpage.css

// DEFAULT_STATE is the state parameter's default, from the Go table.
const DEFAULT_STATE = PARAMS.find((p) => p.name === "state")?.default ?? "";

// stateKinds returns the kinds a state parameter names, in its order,
// without repeats; "none" names none.
export function stateKinds(state: string | null): string[] {
  const s = state === null || state === "" ? DEFAULT_STATE : state;
  if (s === "none") return [];
  return [...new Set(s.split(",").map((k) => k.trim()).filter((k) => k))];
}

// stateParam writes kinds as the URL's state: null for the default, "none"
// for none.
function stateParam(kinds: string[]): string | null {
  const s = kinds.join(",");
  if (s === DEFAULT_STATE) return null;
  return s || "none";
}

// LaneResult is one kind's answer: its lane, or why there is none.
interface LaneResult {
  name: string;
  lane: SeriesLane | null;
  error: string | null;
}

// Drawn is what a lane drew, for its tooltip (and the tests' hook): its
// rows (CPUs, or series), their values per column, and the x of each
// column's left edge and of the last one's right edge (px from the lanes'
// left).
interface Drawn {
  lane: SeriesLane;
  cpus: number[]; // a heat's rows
  rows: (number | null)[][]; // a heat's values per row and column
  edges: number[];
}

// LaneMap is the map the lanes lie under, as the page drew it: the
// wall-clock range and columns it shows, its rows, and where a wall-clock
// time falls on the lanes' width. Times are Unix ns; the range is
// half-open [from_ns, to_ns).
export interface LaneMap {
  from_ns: number; // the start of the map's first column
  to_ns: number;
  bucket_ns: number; // the map's column width
  cpus: number[]; // the map's rows, top first
  rowH: number; // px of the map's rows, which a heat's rows are no taller than
  left: number; // px left of the plot, where the lanes write their CPUs and values
  width: number; // px of the lanes, left included: the plot is [left, width)
  x(t: number): number; // px from the lanes' left of wall-clock time t
  time(x: number): number; // the wall-clock time at px x: x's inverse
  ticks: number[]; // times drawn faint through the line lanes, as the map's axis marks them
}

// LanesOptions tie the lanes to a page whose map's data is a G (the host
// page's NightGrid, a capture's cores).
export interface LanesOptions<G> {
  host: string; // the host whose series are shown
  // map returns where the map drawn over g lies now; null when it is not
  // drawn.
  map(g: G): LaneMap | null;
  // recorded reports whether any series of kinds were recorded around g
  // (the host page: in its session): then kinds with nothing in the range
  // say so one by one; otherwise, with nothing of any kind in the range,
  // the lanes give way to the page's hint (onNone). Without it, nothing
  // in the range is none.
  recorded?(g: G, kinds: string[]): Promise<boolean>;
  // onNone hears, after each load, whether the lanes gave way for want of
  // series.
  onNone?(none: boolean): void;
}

// Lanes draws the lanes into box and keeps the picker's checkboxes and the
// URL's state in step. Its state: the query and map data they follow, the
// answers drawn, the markers marked.
export class Lanes<G> {
  // due is the last query and map data, which the lanes follow.
  private due: { q: URLSearchParams; data: Promise<G> } | null = null;
  private data: G | null = null;
  private results: LaneResult[] = [];
  private markers: { time_ns: number }[] = [];
  private loading: AbortController | null = null;
  private tip = new Tooltip();

  constructor(
    private box: HTMLElement,
    private picker: HTMLElement | null,
    private opt: LanesOptions<G>,
  ) {
    this.syncPicker();
    picker?.addEventListener("change", (ev) => {
      const input = ev.target as HTMLInputElement;
      if (input.name !== "lane") return;
      // The URL's order for the kinds kept, a kind checked last.
      const kinds = stateKinds(currentParams().get("state")).filter((k) => k !== input.value);
      if (input.checked) kinds.push(input.value);
      updateURL({ state: stateParam(kinds) }, false);
      void this.refresh();
    });
    onSchemeChange(() => this.draw());
  }

  // syncPicker checks the kinds the URL's state names.
  private syncPicker(): void {
    const kinds = stateKinds(currentParams().get("state"));
    for (const i of this.picker?.querySelectorAll<HTMLInputElement>("input[name=lane]") ?? []) i.checked = kinds.includes(i.value);
  }

  // setMarkers marks m from the next draw.
  setMarkers(m: { time_ns: number }[]): void {
    this.markers = m;
  }

  // load fetches the lanes of the URL's state over query q (from, to,
  // bucket, session), beside the map's own fetch of its data, and draws
  // them over the map that data gives, unless a later load has begun. A
  // failed fetch of data draws nothing: the map says why.
  async load(q: URLSearchParams, data: Promise<G>): Promise<void> {
    this.due = { q: new URLSearchParams(q), data };
    this.loading?.abort();
    const ac = new AbortController();
    this.loading = ac;
    this.syncPicker();
    const one = async (name: string): Promise<LaneResult> => {
      const lq = new URLSearchParams(q);
      lq.set("name", name);
      try {
        return { name, lane: await getJSON<SeriesLane>(withQuery("seriesAPI", lq, this.opt.host), ac.signal), error: null };
      } catch (e) {
        // A server that keeps no series answers 404: nothing recorded.
        return { name, lane: null, error: e instanceof APIError && e.status === 404 ? null : errorMessage(e) };
      }
    };
    const pending = Promise.all(stateKinds(currentParams().get("state")).map(one));
    let d: G;
    try {
      d = await data;
    } catch {
      return;
    }
    const results = await pending;
    if (ac !== this.loading) return;
    const empty = results.length > 0 && results.every((r) => !r.error && (!r.lane || r.lane.series.length === 0));
    const none = empty && !(await this.opt.recorded?.(d, results.map((r) => r.name)));
    if (ac !== this.loading) return;
    this.data = d;
    // Without any series, no lanes at all: the page says how to record
    // them, or shows nothing.
    this.results = none ? [] : results;
    this.opt.onNone?.(none);
    this.draw();
  }

  // refresh loads the lanes again over the last query and map data.
  async refresh(): Promise<void> {
    if (this.due) await this.load(this.due.q, this.due.data);
  }

  // draw draws the answers shown where the map lies now.
  draw(): void {
    const g = this.data === null ? null : this.opt.map(this.data);
    if (!g) return;
    clear(this.box);
    this.tip.hide();
    const hooks: Record<string, Drawn> = {};
    for (const r of this.results) {
      const root = h("div", { class: "lane", attrs: { "data-testid": "lane", "data-kind": r.name } });
      this.box.append(root);
      if (r.error) {
        root.append(h("p", { class: "error", text: `${r.name}: ${r.error}` }));
        continue;
      }
      const l = r.lane;
      if (!l || l.series.length === 0) {
        root.append(h("p", { class: "lane-none", attrs: { "data-testid": "lane-none" }, text: `no ${r.name} recorded in this range` }));
        continue;
      }
      Object.assign(root.dataset, { fromNs: String(l.from_ns), bucketNs: String(l.bucket_ns), buckets: String(columns(l)), aligned: String(l.from_ns === g.from_ns && l.bucket_ns === g.bucket_ns) });
      const drawn = l.per_cpu ? this.heat(root, g, l) : this.lines(root, g, l);
      hooks[r.name] = drawn;
    }
    if (TEST_HOOKS) (window as unknown as { __lanes: Record<string, Drawn> }).__lanes = hooks;
  }

  // head writes a lane's title, what it is and its legend.
  private head(root: HTMLElement, l: SeriesLane, ...extra: HTMLElement[]): void {
    root.append(h("div", { class: "lane-head" }, h("span", { class: "lane-name", text: l.name }), h("span", { class: "lane-help", text: `${unitName(l.unit)} · ${l.help}` }), ...extra));
  }

  // heat draws a per-CPU lane as the map does: a row per CPU in the map's
  // order (CPUs the map lacks after them), a cell per column; a kind with
  // several series per CPU (irq, a line each) sums them.
  private heat(root: HTMLElement, g: LaneMap, l: SeriesLane): Drawn {
    const n = columns(l);
    const byCPU = new Map<number, LaneSeries[]>();
    for (const s of l.series) {
      if (s.cpu < 0) continue; // the host as a whole: the map has no row for it
      byCPU.set(s.cpu, [...(byCPU.get(s.cpu) ?? []), s]);
    }
    const cpus = [...g.cpus, ...[...byCPU.keys()].filter((c) => !g.cpus.includes(c)).sort((a, b) => a - b)];
    const rows = cpus.map((c) => {
      const ss = byCPU.get(c) ?? [];
      return Array.from({ length: n }, (_, b) => {
        let sum: number | null = null;
        for (const s of ss) {
          const v = s.values[b];
          if (v !== null && v !== undefined) sum = (sum ?? 0) + v;
        }
        return sum;
      });
    });
    let top = 0;
    for (const row of rows) for (const v of row) if (v !== null && v > top) top = v;
    const pct = l.unit === "%";
    const scale = pct ? 100 : top || 1;
    const color = heatScale(l.name);
    this.head(root, l, legend(color, pct ? "0%" : "0", pct ? "100%" : fmtValue(top, l.unit), pct ? l.name : `${l.name}, of the lane's most`));

    const w = g.width;
    const rh = Math.max(2, Math.min(12, g.rowH, Math.floor(HEAT_H / Math.max(1, cpus.length))));
    const hgt = rh * cpus.length;
    const plot = h("div", { class: "lane-plot", attrs: { role: "img", "data-testid": "lane-plot" } });
    const c = h("canvas", { attrs: { "data-testid": "lane-canvas", "aria-hidden": "true" } });
    const yaxis = h("div", { class: "night-yaxis", attrs: { "aria-hidden": "true" } });
    plot.append(c, yaxis);
    root.append(plot);
    const ctx = setupCanvas(c, w, hgt);
    const edges = columnEdges(g, l);
    Object.assign(plot.dataset, { left: String(g.left), rowH: String(rh), cpus: cpus.join(",") });
    let hot = { v: -1, r: 0, b: 0 };
    // Only the plot: a map scrolled sideways leaves columns left of it.
    ctx.save();
    ctx.beginPath();
    ctx.rect(g.left, 0, Math.max(0, w - g.left), hgt);
    ctx.clip();
    for (let b = 0; b < n; b++) {
      const xa = edges[b];
      const cw = edges[b + 1] - xa;
      const shown = xa < w && xa + cw > g.left;
      rows.forEach((row, r) => {
        const v = row[b];
        if (v !== null && v > hot.v) hot = { v, r, b };
        if (!shown) return;
        ctx.fillStyle = v === null ? emptyCell() : color(v / scale);
        ctx.fillRect(xa, r * rh, Math.max(1, cw + 0.5), rh);
      });
    }
    this.drawMarkers(ctx, g, hgt);
    ctx.restore();
    const every = Math.max(1, Math.ceil(12 / rh));
    cpus.forEach((cpu, r) => {
      if (r % every !== 0) return;
      const el = h("span", { text: String(cpu) });
      el.style.top = Math.max(0, r * rh + rh / 2 - 6) + "px";
      yaxis.append(el);
    });
    plot.setAttribute(
      "aria-label",
      `${l.name} (${unitName(l.unit)}) per CPU, ${cpus.length} CPUs: ` +
        (hot.v < 0 ? "nothing recorded" : `highest ${fmtValue(hot.v, l.unit)} on CPU ${cpus[hot.r]} at ${fmtWall(l.from_ns + hot.b * l.bucket_ns)}`),
    );
    const drawn = { lane: l, cpus, rows, edges };
    c.addEventListener("mousemove", (ev) => {
      const rect = c.getBoundingClientRect();
      const r = Math.floor((ev.clientY - rect.top) / rh);
      const b = this.column(g, l, ev.clientX - rect.left);
      if (r < 0 || r >= cpus.length || b === null) return this.tip.hide();
      const v = rows[r][b];
      const lines = [`cpu ${cpus[r]} · ${this.when(l, b)}`, v === null ? `${l.name}: not recorded` : `${l.name} ${fmtValue(v, l.unit)}`];
      const ss = byCPU.get(cpus[r]) ?? [];
      if (ss.length > 1 && v !== null) {
        // Which lines the sum holds, largest first.
        const parts = ss.filter((s) => s.values[b] !== null).sort((p, q) => (q.values[b] ?? 0) - (p.values[b] ?? 0));
        for (const s of parts.slice(0, 4)) lines.push(`${s.label || "—"} ${fmtValue(s.values[b] ?? 0, l.unit)}`);
        if (parts.length > 4) lines.push(`and ${parts.length - 4} more`);
      }
      this.tip.show(ev, lines);
    });
    c.addEventListener("mouseleave", () => this.tip.hide());
    return drawn;
  }

  // lines draws a lane of host-wide series as lines on the map's x axis,
  // one per series, each point at the middle of its column, a stretch
  // without points a gap.
  private lines(root: HTMLElement, g: LaneMap, l: SeriesLane): Drawn {
    let top = 0;
    let peak = { s: 0, b: 0 };
    l.series.forEach((s, i) => {
      s.values.forEach((v, b) => {
        if (v !== null && v > top) {
          top = v;
          peak = { s: i, b };
        }
      });
    });
    const keys = h("span", { class: "lane-keys" });
    l.series.forEach((s, i) => {
      keys.append(h("span", { class: `lane-key ls${i % PALETTE}`, attrs: { "data-testid": "lane-key" } }, h("span", { class: "swatch" }), `${seriesName(s)} · max ${fmtValue(s.max, l.unit)}`));
    });
    this.head(root, l, keys);

    const w = g.width;
    const hgt = LINE_H;
    const yTop = top || 1;
    const px = (b: number) => g.x(l.from_ns + (b + 0.5) * l.bucket_ns);
    const py = (v: number) => hgt - 3 - (v / yTop) * (hgt - 16);
    const plot = h("div", { class: "lane-plot", attrs: { role: "img", "data-testid": "lane-plot" } });
    const svg = svgEl("svg", { width: String(w), height: String(hgt), viewBox: `0 0 ${w} ${hgt}`, "aria-hidden": "true", "data-testid": "lane-svg" });
    // The plot is an inner svg over [left, w) in the outer's coordinates,
    // which clips what a map scrolled sideways leaves left of it.
    const pw = Math.max(0, w - g.left);
    const inner = svgEl("svg", { x: String(g.left), y: "0", width: String(pw), height: String(hgt), viewBox: `${g.left} 0 ${pw} ${hgt}` });
    svg.append(inner);
    const yaxis = h("div", { class: "night-yaxis", attrs: { "aria-hidden": "true" } });
    plot.append(svg, yaxis);
    root.append(plot);
    // The map's ticks, faint, and the markers.
    for (const t of g.ticks) {
      const xx = Math.round(g.x(t)) + 0.5;
      inner.append(svgEl("line", { class: "lane-grid", x1: String(xx), x2: String(xx), y1: "0", y2: String(hgt) }));
    }
    inner.append(svgEl("line", { class: "lane-base", x1: String(g.left), x2: String(w), y1: String(py(0) + 0.5), y2: String(py(0) + 0.5) }));
    for (const m of this.markers) {
      if (m.time_ns < g.from_ns || m.time_ns >= g.to_ns) continue;
      const xx = g.x(m.time_ns);
      inner.append(svgEl("line", { class: "lane-marker", x1: String(xx), x2: String(xx), y1: "0", y2: String(hgt) }));
    }
    l.series.forEach((s, i) => {
      // A series sampled more sparsely than the columns (sar every 10 s)
      // is joined across its usual spacing; a longer stretch without a
      // point is a gap: nothing was recorded then.
      const at: number[] = [];
      s.values.forEach((v, b) => {
        if (v !== null && v !== undefined) at.push(b);
      });
      const join = 2 * usualStep(at);
      let d = "";
      at.forEach((b, j) => {
        const open = j > 0 && b - at[j - 1] <= join;
        const lone = !open && (j + 1 >= at.length || at[j + 1] - b > join);
        d += `${open ? "L" : "M"}${px(b).toFixed(1)} ${py(s.values[b]!).toFixed(1)}${lone ? "h1" : ""}`;
      });
      inner.append(svgEl("path", { class: `lane-line ls${i % PALETTE}`, d, "data-label": s.label ?? "" }));
    });
    // The largest value, labelled at its point, kept inside the plot.
    if (top > 0) {
      const xx = px(peak.b);
      inner.append(svgEl("circle", { class: `lane-peak ls${peak.s % PALETTE}`, cx: xx.toFixed(1), cy: py(top).toFixed(1), r: "2.5" }));
      const text = svgEl("text", { class: "lane-max", "data-testid": "lane-max", y: "10", x: xx.toFixed(1) });
      text.textContent = fmtValue(top, l.unit);
      const anchor = xx > w - 60 ? "end" : xx < g.left + 60 ? "start" : "middle";
      text.setAttribute("text-anchor", anchor);
      text.setAttribute("x", (anchor === "end" ? xx - 4 : anchor === "start" ? xx + 4 : xx).toFixed(1));
      inner.append(text);
    }
    for (const [v, t] of [
      [yTop, fmtValue(top, l.unit)],
      [0, fmtValue(0, l.unit)],
    ] as const) {
      const el = h("span", { text: t });
      el.style.top = Math.min(hgt - 12, Math.max(0, py(v) - 6)) + "px";
      yaxis.append(el);
    }
    plot.setAttribute("aria-label", `${l.name} (${unitName(l.unit)}): ` + l.series.map((s) => describeLine(s, l)).join("; "));
    svg.addEventListener("mousemove", (ev) => {
      const b = this.column(g, l, ev.clientX - svg.getBoundingClientRect().left);
      if (b === null) return this.tip.hide();
      const lines = [this.when(l, b)];
      for (const s of l.series.slice(0, 8)) {
        const v = s.values[b];
        lines.push(`${seriesName(s)} ${v === null || v === undefined ? "not recorded" : fmtValue(v, l.unit)}`);
      }
      if (l.series.length > 8) lines.push(`and ${l.series.length - 8} more`);
      this.tip.show(ev, lines);
    });
    svg.addEventListener("mouseleave", () => this.tip.hide());
    return { lane: l, cpus: [], rows: l.series.map((s) => s.values), edges: columnEdges(g, l) };
  }

  // drawMarkers draws the markers through a heat, as through the map.
  private drawMarkers(ctx: CanvasRenderingContext2D, g: LaneMap, hgt: number): void {
    ctx.strokeStyle = "rgba(200,0,24,0.7)";
    ctx.setLineDash([3, 3]);
    for (const m of this.markers) {
      if (m.time_ns < g.from_ns || m.time_ns >= g.to_ns) continue;
      const xx = g.x(m.time_ns);
      ctx.beginPath();
      ctx.moveTo(xx, 0);
      ctx.lineTo(xx, hgt);
      ctx.stroke();
    }
    ctx.setLineDash([]);
  }

  // column returns the lane's column under x, or null.
  private column(g: LaneMap, l: SeriesLane, x: number): number | null {
    if (x < g.left || x >= g.width) return null;
    const b = Math.floor((g.time(x) - l.from_ns) / l.bucket_ns);
    return b >= 0 && b < columns(l) ? b : null;
  }

  // when writes column b's time range in the page's zone.
  private when(l: SeriesLane, b: number): string {
    const start = l.from_ns + b * l.bucket_ns;
    return `${fmtWall(start)} – ${fmtWall(start + l.bucket_ns, false)} (${displayDuration(l.bucket_ns)})`;
  }
}

// columns returns how many columns a lane has: as many as its values.
function columns(l: SeriesLane): number {
  return l.series[0]?.values.length ?? Math.ceil((l.to_ns - l.from_ns) / l.bucket_ns);
}

// columnEdges returns the x on g of each of l's columns' left edges and of
// the last one's right edge: where its wall-clock times fall on the map.
function columnEdges(g: LaneMap, l: SeriesLane): number[] {
  return Array.from({ length: columns(l) + 1 }, (_, b) => g.x(l.from_ns + b * l.bucket_ns));
}

// usualStep returns the median distance between columns at, 1 when
// there are fewer than two.
function usualStep(at: number[]): number {
  if (at.length < 2) return 1;
  const steps = at.slice(1).map((b, j) => b - at[j]).sort((a, b) => a - b);
  return steps[steps.length >> 1];
}

// heatScale returns the colours of a per-CPU kind's heat: user time in the
// map's user blue, kernel time and interrupts in its system red, the rest
// (idle, iowait, steal) in the heatmaps' scale.
function heatScale(name: string): (t: number) => string {
  if (name === "cpu.usr" || name === "cpu.nice") return userColor;
  if (name === "cpu.iowait" || name === "cpu.steal" || name === "cpu.idle") return heatColor;
  return systemColor;
}

// unitName says a unit in words.
function unitName(unit: string): string {
  switch (unit) {
    case "%":
      return "% of a CPU";
    case "/s":
      return "per second";
    case "bytes":
      return "bytes";
  }
  return "count";
}

function seriesName(s: LaneSeries): string {
  return s.label || (s.cpu >= 0 ? `cpu ${s.cpu}` : "host");
}

// describeLine says what a line does for a screen reader: where it starts
// and ends, and its largest value.
function describeLine(s: LaneSeries, l: SeriesLane): string {
  const vals = s.values.filter((v): v is number => v !== null && v !== undefined);
  if (vals.length === 0) return `${seriesName(s)}: nothing recorded`;
  const at = s.values.indexOf(s.max);
  return `${seriesName(s)} from ${fmtValue(vals[0], l.unit)} to ${fmtValue(vals[vals.length - 1], l.unit)}, max ${fmtValue(s.max, l.unit)} at ${fmtWall(l.from_ns + at * l.bucket_ns, false)}`;
}

// svgEl makes an SVG element with attributes; text goes in by textContent.
function svgEl<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string>): SVGElementTagNameMap[K] {
  const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}
