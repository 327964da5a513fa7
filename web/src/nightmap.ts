// The host page's map: a host's night as one cores × time canvas over the
// range shown (one recording session unless zoomed), gaps between captures
// drawn as gaps, capture and session boundaries and markers marked, its
// axes written as text beside it (nightaxis.ts). A drag zooms in (onZoom),
// a Shift+drag picks a range for the Compare panel, and a click opens that
// capture's flame graph for the cell's CPU and time: the hand-over to the
// capture's own subsecond views. From the keyboard, as on a capture's
// maps: the arrows move a cursor cell, Shift+arrows select a range of
// columns, Enter opens the cursor's cell (or zooms to the selection), + and
// − zoom in around the cursor and out, Esc drops the selection.

import { coreColor, emptyCell, systemColor } from "./colors";
import { clear, h, setupCanvas, Tooltip } from "./dom";
import { displayDuration, fmtMillis, fmtPct } from "./format";
import { withQuery } from "./links";
import { drawAxis, wallTicks } from "./nightaxis";
import { NightCompare } from "./nightcompare";
import { currentParams } from "./state";
import { fmtClock, withTZ, zone, zoneName } from "./wallclock";
import type { NightCapture, NightGrid } from "./wire";

export const LABEL_W = 56; // px left of the map for CPU labels
const MARK_H = 14; // px above the map for markers and capture boundaries
const TICK_H = 4; // px below the map for the time axis's ticks

// fmtWall writes a time of day in the page's zone (UTC, or the browser's
// with tz=local; see wallclock.ts), with the date and the zone's name when
// withDate.
export function fmtWall(ns: number, withDate = true): string {
  return withDate ? `${fmtClock(ns, true)} ${zoneName(zone(), ns)}` : fmtClock(ns);
}

// rowHeight returns the px of a row of the map of g.
export function rowHeight(g: NightGrid): number {
  return Math.max(2, Math.min(12, Math.floor(480 / Math.max(1, g.cpus.length))));
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
  private canvas = h("canvas", { attrs: { "data-testid": "night-canvas", "aria-hidden": "true" } });
  private sel = h("div", { class: "night-selection", attrs: { "data-testid": "night-selection" } });
  private yaxis = h("div", { class: "night-yaxis", attrs: { "data-testid": "night-yaxis", "aria-hidden": "true" } });
  private xaxis = h("div", { class: "night-xaxis", attrs: { "data-testid": "night-xaxis", "aria-hidden": "true" } });
  // The keyboard's cursor cell and what it says of it; a Shift+arrow
  // selection runs from anchor to the cursor's column.
  private cursor: { r: number; b: number } | null = null;
  private anchor: number | null = null;
  private said = h("p", { class: "night-cursor", attrs: { "data-testid": "night-cursor", "aria-live": "polite" } });
  private tip = new Tooltip();

  constructor(
    private map: HTMLElement,
    host: string, // the host shown
    private onZoom: (from: number, to: number) => void, // a drag across [from, to), wall-clock Unix ns
    private onZoomOut: () => void, // the − key
  ) {
    const { canvas, sel, tip } = this;
    clear(map);
    map.append(canvas, this.yaxis);
    this.compare = new NightCompare(host, map);
    sel.hidden = true;
    map.append(sel, this.xaxis);
    map.after(this.said);
    canvas.addEventListener("mousemove", (ev) => this.hover(ev));
    canvas.addEventListener("mouseleave", () => tip.hide());
    canvas.addEventListener("mousedown", (ev) => {
      const r = canvas.getBoundingClientRect();
      const x = ev.clientX - r.left;
      // The cell's tooltip would outlive the range it describes.
      tip.hide();
      this.drag = { x0: x, x1: x, y0: ev.clientY - r.top, shift: ev.shiftKey };
    });
    window.addEventListener("mouseup", (ev) => this.release(ev));
    map.addEventListener("keydown", (ev) => this.key(ev));
    map.addEventListener("focus", () => {
      this.cursor ??= { r: 0, b: 0 };
      this.moved();
    });
    map.addEventListener("blur", () => {
      this.said.textContent = "";
      this.draw();
    });
  }

  // current returns the grid drawn, or null before the first.
  get current(): NightGrid | null {
    return this.grid;
  }

  // setGrid shows g from the next draw; the keyboard's cursor keeps its
  // CPU row and moves to the column holding its time, and the tooltip of
  // the range before is gone.
  setGrid(g: NightGrid): void {
    const old = this.grid;
    if (this.cursor && old) {
      const t = old.from_ns + (this.cursor.b + 0.5) * old.bucket_ns;
      this.cursor = { r: Math.min(this.cursor.r, g.cpus.length - 1), b: Math.min(g.buckets - 1, Math.max(0, Math.floor((t - g.from_ns) / g.bucket_ns))) };
    }
    this.anchor = null;
    this.grid = g;
    this.tip.hide();
    this.sel.hidden = true;
  }

  setMarkers(m: { time_ns: number }[]): void {
    this.markers = m;
  }

  // width is the map's width in css pixels, at least 300.
  width(): number {
    return Math.max(300, this.map.clientWidth || 1000);
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
    const rh = rowHeight(g);
    const w = this.width();
    this.drawn = w;
    const hgt = MARK_H + rh * g.cpus.length + TICK_H;
    const ctx = setupCanvas(canvas, w, hgt);
    ctx.clearRect(0, 0, w, hgt);
    const cw = (w - LABEL_W) / g.buckets;
    // The geometry, for tests and tools that read the canvas.
    Object.assign(map.dataset, { left: String(LABEL_W), top: String(MARK_H), rowH: String(rh), cellW: String(cw), buckets: String(g.buckets), cpus: g.cpus.join(","), fromNs: String(g.from_ns), bucketNs: String(g.bucket_ns) });
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
    // Sessions: where one begins, a solid line through the map.
    const bottom = MARK_H + rh * g.cpus.length;
    ctx.strokeStyle = getComputedStyle(map).getPropertyValue("--fg2").trim() || "#4b5361";
    ctx.lineWidth = 2;
    g.captures.forEach((c, i) => {
      if (i === 0 || c.session === g.captures[i - 1].session || c.start_ns <= g.from_ns) return;
      const x = Math.round(this.colX(g, c.start_ns));
      ctx.beginPath();
      ctx.moveTo(x, 0);
      ctx.lineTo(x, bottom);
      ctx.stroke();
    });
    ctx.lineWidth = 1;
    // The time axis: ticks on round times of the page's zone, dated when
    // the range crosses midnight or a session boundary; the labels, and
    // the CPUs', are text in the page.
    const sessions = new Set(g.captures.map((c) => c.session)).size > 1;
    const ticks = wallTicks(g.from_ns, g.to_ns, w - LABEL_W, sessions);
    for (const t of ticks) {
      const x = Math.round(this.colX(g, t.ns)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(x, bottom);
      ctx.lineTo(x, bottom + TICK_H);
      ctx.stroke();
    }
    this.xaxis.style.width = w + "px";
    drawAxis(this.xaxis, ticks, (t) => this.colX(g, t));
    clear(this.yaxis);
    this.yaxis.append(h("span", { class: "axis-title", text: "CPU" }));
    const every = Math.max(1, Math.ceil(12 / rh));
    g.cpus.forEach((cpu, r) => {
      if (r % every !== 0) return;
      const el = h("span", { text: String(cpu) });
      el.style.top = Math.max(MARK_H, MARK_H + r * rh + rh / 2 - 6) + "px";
      this.yaxis.append(el);
    });
    this.drawCursor(ctx, g, rh, cw);
    if (this.cursor && document.activeElement === map) this.say(g, this.cursor);
    this.compare.layout((t) => Math.min(w, Math.max(LABEL_W, this.colX(g, t))), MARK_H + rh * g.cpus.length + "px");
  }

  // drawCursor outlines the keyboard's cell, and its selection, while the
  // map has the focus.
  private drawCursor(ctx: CanvasRenderingContext2D, g: NightGrid, rh: number, cw: number): void {
    const c = this.cursor;
    if (!c || document.activeElement !== this.map) return;
    ctx.strokeStyle = getComputedStyle(this.map).getPropertyValue("--focus").trim() || "#1f5fbf";
    ctx.lineWidth = 2;
    if (this.anchor !== null) {
      const [b0, b1] = [Math.min(this.anchor, c.b), Math.max(this.anchor, c.b)];
      ctx.strokeRect(LABEL_W + b0 * cw, MARK_H, (b1 - b0 + 1) * cw, rh * g.cpus.length);
    }
    ctx.strokeRect(LABEL_W + c.b * cw - 1, MARK_H + c.r * rh - 1, Math.max(2, cw) + 2, rh + 2);
  }

  // key follows the keyboard (see the file's comment).
  private key(ev: KeyboardEvent): void {
    const g = this.grid;
    if (!g || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const c = this.cursor ?? { r: 0, b: 0 };
    let { r, b } = c;
    const page = Math.max(1, Math.round(g.buckets / 10));
    switch (ev.key) {
      case "ArrowLeft":
        b--;
        break;
      case "ArrowRight":
        b++;
        break;
      case "ArrowUp":
        r--;
        break;
      case "ArrowDown":
        r++;
        break;
      case "PageUp":
        b -= page;
        break;
      case "PageDown":
        b += page;
        break;
      case "Home":
        b = 0;
        break;
      case "End":
        b = g.buckets - 1;
        break;
      case "Enter": {
        ev.preventDefault();
        if (this.anchor !== null) {
          const [b0, b1] = [Math.min(this.anchor, b), Math.max(this.anchor, b)];
          this.onZoom(g.from_ns + b0 * g.bucket_ns, Math.min(g.to_ns, g.from_ns + (b1 + 1) * g.bucket_ns));
          return;
        }
        const link = this.cellLink(r, b, g.from_ns + (b + 0.5) * g.bucket_ns);
        if (link) location.href = withTZ(link);
        return;
      }
      case "+":
      case "=": {
        // Zoom in: a fifth of the range, around the cursor's column.
        ev.preventDefault();
        const t = g.from_ns + (b + 0.5) * g.bucket_ns;
        const half = (g.to_ns - g.from_ns) / 10;
        this.onZoom(t - half, t + half);
        return;
      }
      case "-":
      case "−":
        ev.preventDefault();
        this.onZoomOut();
        return;
      case "Escape":
        if (this.anchor === null) return;
        this.anchor = null;
        break;
      default:
        return;
    }
    ev.preventDefault();
    if (ev.shiftKey && ev.key !== "Escape") this.anchor ??= c.b;
    else if (ev.key !== "Escape") this.anchor = null;
    this.cursor = { r: Math.min(g.cpus.length - 1, Math.max(0, r)), b: Math.min(g.buckets - 1, Math.max(0, b)) };
    this.moved();
  }

  // moved redraws the map with the cursor, which says what it holds.
  private moved(): void {
    this.draw();
  }

  // say writes what the cursor c holds: its cell as the tooltip does, or
  // the columns selected.
  private say(g: NightGrid, c: { r: number; b: number }): void {
    if (this.anchor !== null) {
      const [b0, b1] = [Math.min(this.anchor, c.b), Math.max(this.anchor, c.b)];
      const from = g.from_ns + b0 * g.bucket_ns;
      const to = Math.min(g.to_ns, g.from_ns + (b1 + 1) * g.bucket_ns);
      this.said.textContent = `${fmtWall(from)} – ${fmtWall(to, false)} (${displayDuration(to - from)}) selected: Enter zooms to it, Esc drops it`;
      return;
    }
    this.said.textContent = this.describe(c.r, c.b).join(" · ");
  }

  // describe says what cell (r, b) holds, as its tooltip's lines.
  // (at time t, the pointer's, else the middle of its bucket).
  private describe(r: number, b: number, t?: number): string[] {
    const g = this.grid!;
    const start = g.from_ns + b * g.bucket_ns;
    const c = this.captureAt(t ?? start + g.bucket_ns / 2);
    const lines = [`cpu ${g.cpus[r]} · ${fmtWall(start)} + ${displayDuration(g.bucket_ns)}`];
    if (g.covered[b] === 0) lines.push("no capture: not recorded");
    else {
      lines.push(`busy ${fmtPct(g.busy[r][b])}, system ${fmtPct(g.system[r][b])}, ${g.samples[r][b]} samples`);
      if (c) lines.push(`capture ${c.name || c.id}${c.approximate ? " (time approximate)" : ""}: click for its flame graph`);
    }
    return lines;
  }

  // cellAt returns the CPU row and bucket under a pointer, or null.
  private cellAt(ev: MouseEvent): { r: number; b: number; t: number } | null {
    const g = this.grid;
    if (!g) return null;
    const rect = this.canvas.getBoundingClientRect();
    const x = ev.clientX - rect.left;
    const y = ev.clientY - rect.top - MARK_H;
    const r = Math.floor(y / rowHeight(g));
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
    const lines = this.describe(cell.r, cell.b, cell.t);
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
    const rh = rowHeight(g);
    const rowAt = (y: number) => Math.min(g.cpus.length - 1, Math.max(0, Math.floor((y - MARK_H) / rh)));
    const y1 = ev.clientY - this.canvas.getBoundingClientRect().top;
    const r0 = rowAt(Math.min(d.y0, y1));
    const r1 = rowAt(Math.max(d.y0, y1));
    const cpus = r0 === 0 && r1 === g.cpus.length - 1 ? null : g.cpus.slice(r0, r1 + 1);
    void this.compare.pick(g.from_ns + b0 * g.bucket_ns, g.from_ns + (b1 + 1) * g.bucket_ns, cpus);
  }
}
