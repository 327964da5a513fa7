// The host page's map: a host's night as one cores × time canvas over the
// union of its captures, gaps between captures drawn as gaps, capture
// boundaries and markers marked. A drag zooms in (onZoom), a Shift+drag
// picks a range for the Compare panel, and a click opens that capture's
// flame graph for the cell's CPU and time: the hand-over to the capture's
// own subsecond views.

import { coreColor, emptyCell, systemColor } from "./colors";
import { clear, h, setupCanvas, Tooltip } from "./dom";
import { fmtMillis, fmtPct } from "./format";
import { withQuery } from "./links";
import { NightCompare } from "./nightcompare";
import { currentParams } from "./state";
import { fmtClock, withTZ, zone, zoneName } from "./wallclock";
import type { NightCapture, NightGrid } from "./wire";

export const LABEL_W = 56; // px left of the map for CPU labels
const MARK_H = 14; // px above the map for markers and capture boundaries

// fmtWall writes a time of day in the page's zone (UTC, or the browser's
// with tz=local; see wallclock.ts), with the date and the zone's name when
// withDate.
export function fmtWall(ns: number, withDate = true): string {
  return withDate ? `${fmtClock(ns, true)} ${zoneName(zone(), ns)}` : fmtClock(ns);
}

// NightMap draws a NightGrid into the element map, with the Compare panel
// (compare) laid out under it. Its state: the grid and markers drawn, the
// width they were drawn at, and the drag under way.
export class NightMap {
  readonly compare: NightCompare;
  private grid: NightGrid | null = null;
  private markers: { time_ns: number }[] = [];
  // The map's geometry: its columns span buckets × bucket_ns from from_ns
  // (to_ns may end inside the last), over the width it was drawn at
  // (drawn), which the pointer's positions are read against until it is
  // drawn again.
  private drawn = 0;
  // A drag zooms; with Shift it picks a range to compare (NightCompare).
  private drag: { x0: number; x1: number; y0: number; shift: boolean } | null = null;
  private canvas = h("canvas", { attrs: { "data-testid": "night-canvas" } });
  private sel = h("div", { class: "night-selection", attrs: { "data-testid": "night-selection" } });
  private tip = new Tooltip();

  constructor(
    private map: HTMLElement,
    host: string, // the host shown
    private onZoom: (from: number, to: number) => void, // a drag across [from, to), wall-clock Unix ns
  ) {
    const { canvas, sel, tip } = this;
    clear(map);
    map.append(canvas);
    this.compare = new NightCompare(host, map);
    sel.hidden = true;
    map.append(sel);
    canvas.addEventListener("mousemove", (ev) => this.hover(ev));
    canvas.addEventListener("mouseleave", () => tip.hide());
    canvas.addEventListener("mousedown", (ev) => {
      const r = canvas.getBoundingClientRect();
      const x = ev.clientX - r.left;
      this.drag = { x0: x, x1: x, y0: ev.clientY - r.top, shift: ev.shiftKey };
    });
    window.addEventListener("mouseup", (ev) => this.release(ev));
  }

  // current returns the grid drawn, or null before the first.
  get current(): NightGrid | null {
    return this.grid;
  }

  setGrid(g: NightGrid): void {
    this.grid = g;
  }

  setMarkers(m: { time_ns: number }[]): void {
    this.markers = m;
  }

  // width is the map's width in css pixels, at least 300.
  width(): number {
    return Math.max(300, this.map.clientWidth || 1000);
  }

  private rowH(g: NightGrid): number {
    return Math.max(2, Math.min(12, Math.floor(480 / Math.max(1, g.cpus.length))));
  }

  private span(g: NightGrid): number {
    return g.buckets * g.bucket_ns;
  }

  private colX(g: NightGrid, t: number): number {
    return LABEL_W + ((t - g.from_ns) / this.span(g)) * ((this.drawn || this.width()) - LABEL_W);
  }

  private timeAt(g: NightGrid, x: number): number {
    return g.from_ns + ((x - LABEL_W) / ((this.drawn || this.width()) - LABEL_W)) * this.span(g);
  }

  draw(): void {
    const g = this.grid;
    if (!g) return;
    const { canvas, map } = this;
    const system = currentParams().get("measure") === "system";
    const rh = this.rowH(g);
    const w = this.width();
    this.drawn = w;
    const hgt = MARK_H + rh * g.cpus.length + 18;
    const ctx = setupCanvas(canvas, w, hgt);
    ctx.clearRect(0, 0, w, hgt);
    const cw = (w - LABEL_W) / g.buckets;
    // The geometry, for tests and tools that read the canvas.
    Object.assign(map.dataset, { left: String(LABEL_W), top: String(MARK_H), rowH: String(rh), cellW: String(cw), buckets: String(g.buckets), cpus: g.cpus.join(",") });
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
        const x = Math.round(this.colX(g, t)) + 0.5;
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
    for (const m of this.markers) {
      if (m.time_ns < g.from_ns || m.time_ns >= g.to_ns) continue;
      const x = this.colX(g, m.time_ns);
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
      const x = this.colX(g, t);
      ctx.fillText(fmtWall(t, false), Math.min(Math.max(LABEL_W, x - 30), w - 70), MARK_H + rh * g.cpus.length + 4);
    }
    this.compare.layout((t) => Math.min(w, Math.max(LABEL_W, this.colX(g, t))), MARK_H + rh * g.cpus.length + "px");
  }

  // cellAt returns the CPU row and bucket under a pointer, or null.
  private cellAt(ev: MouseEvent): { r: number; b: number; t: number } | null {
    const g = this.grid;
    if (!g) return null;
    const rect = this.canvas.getBoundingClientRect();
    const x = ev.clientX - rect.left;
    const y = ev.clientY - rect.top - MARK_H;
    const r = Math.floor(y / this.rowH(g));
    if (x < LABEL_W || r < 0 || r >= g.cpus.length) return null;
    const t = this.timeAt(g, x);
    const b = Math.floor((t - g.from_ns) / g.bucket_ns);
    if (b < 0 || b >= g.buckets) return null;
    return { r, b, t };
  }

  // captureAt returns the capture holding wall time t.
  private captureAt(t: number): NightCapture | null {
    for (const c of this.grid?.captures || []) if (t >= c.start_ns && t < c.end_ns) return c;
    return null;
  }

  // cellLink is the flame graph of one cell: its CPU over the part of its
  // bucket that its capture holds.
  private cellLink(r: number, b: number, t: number): string | null {
    const g = this.grid;
    const c = this.captureAt(t);
    if (!g || !c) return null;
    const lo = Math.max(g.from_ns + b * g.bucket_ns, c.start_ns);
    const hi = Math.min(g.from_ns + (b + 1) * g.bucket_ns, c.end_ns);
    const base = c.offset_ns + c.t0_ns;
    const q = new URLSearchParams({ cpu: String(g.cpus[r]), start: fmtMillis(lo - base), end: fmtMillis(hi - base) });
    return withQuery("flamePage", q, c.id);
  }

  // hover follows a drag, or shows the cell under the pointer.
  private hover(ev: MouseEvent): void {
    const { canvas, sel, tip, drag } = this;
    const g = this.grid;
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
    const cell = this.cellAt(ev);
    if (!g || !cell) {
      tip.hide();
      return;
    }
    const start = g.from_ns + cell.b * g.bucket_ns;
    const c = this.captureAt(cell.t);
    const lines = [`cpu ${g.cpus[cell.r]} · ${fmtWall(start)} + ${fmtMillis(g.bucket_ns)} s`];
    if (g.covered[cell.b] === 0) lines.push("no capture: not recorded");
    else {
      lines.push(`busy ${fmtPct(g.busy[cell.r][cell.b])}, system ${fmtPct(g.system[cell.r][cell.b])}, ${g.samples[cell.r][cell.b]} samples`);
      if (c) lines.push(`capture ${c.name || c.id}${c.approximate ? " (time approximate)" : ""}: click for its flame graph`);
    }
    tip.show(ev, lines);
  }

  // release ends a drag: a click opens the cell's flame graph, a Shift+drag
  // picks, any other drag zooms.
  private release(ev: MouseEvent): void {
    const d = this.drag;
    this.drag = null;
    this.sel.hidden = true;
    const g = this.grid;
    if (!d || !g) return;
    if (d.shift) {
      this.pick(g, d, ev);
      return;
    }
    if (Math.abs(d.x1 - d.x0) < 4) {
      // A click: hand over to the capture's own views.
      const cell = this.cellAt(ev);
      const link = cell && this.cellLink(cell.r, cell.b, cell.t);
      if (link) location.href = withTZ(link);
      return;
    }
    const a = this.timeAt(g, Math.max(LABEL_W, Math.min(d.x0, d.x1)));
    const b = this.timeAt(g, Math.min(this.drawn, Math.max(d.x0, d.x1)));
    this.onZoom(a, b);
  }

  // pick hands a Shift+drag to the Compare panel: the buckets it crosses
  // (a Shift+click, the one under the pointer) and the CPUs of the rows it
  // crosses, all of them when it crosses every row.
  private pick(g: NightGrid, d: { x0: number; x1: number; y0: number }, ev: MouseEvent): void {
    const bucketAt = (x: number) => Math.min(g.buckets - 1, Math.max(0, Math.floor((this.timeAt(g, x) - g.from_ns) / g.bucket_ns)));
    const b0 = bucketAt(Math.min(d.x0, d.x1));
    const b1 = bucketAt(Math.max(d.x0, d.x1));
    const rh = this.rowH(g);
    const rowAt = (y: number) => Math.min(g.cpus.length - 1, Math.max(0, Math.floor((y - MARK_H) / rh)));
    const y1 = ev.clientY - this.canvas.getBoundingClientRect().top;
    const r0 = rowAt(Math.min(d.y0, y1));
    const r1 = rowAt(Math.max(d.y0, y1));
    const cpus = r0 === 0 && r1 === g.cpus.length - 1 ? null : g.cpus.slice(r0, r1 + 1);
    void this.compare.pick(g.from_ns + b0 * g.bucket_ns, g.from_ns + (b1 + 1) * g.bucket_ns, cpus);
  }
}
