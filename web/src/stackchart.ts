// StackChart draws the samples of a range in time order, as the Firefox
// Profiler's stack chart and speedscope's time-order view do: time runs
// left to right, each sample's stack stands on its command (or hangs from
// it, as the flame graph below is drawn: a flame graph or an icicle), and a
// frame that stays on the stack across consecutive samples is one box. One
// lane per CPU (or per thread), so the order of events on each is plain.
//
// Frames are nodes of the range's flame graph (the samples API gives each
// sample its leaf node), so hovering a box can point at the same node in
// the flame graph and back. Lanes are laid out once; drawing covers only
// the lanes in view, on a canvas that stays in place while the lanes
// scroll beneath it.

import { frameColor, HIGHLIGHT_COLOR, MATCH_COLOR } from "./colors";
import { clear, h, onNextFrame, type Pointer, setupCanvas, sizeCanvas, Tooltip } from "./dom";
import { displayRange, fmtInt, fmtTick } from "./format";
import type { Tree } from "./flame";
import type { SamplesJSON } from "./wire";
import type { Clock } from "./wallclock";

export type LaneGroup = "cpu" | "thread";

const ROW_H = 14;
const HEAD_H = 18; // a lane's label line
const LANE_GAP = 6;
const AXIS_H = 20; // the time axis at the top
const FONT = "10.5px Menlo, Consolas, 'DejaVu Sans Mono', monospace";
const LABEL_FONT = "600 11px system-ui, sans-serif";

// Row holds one depth of a lane: its boxes in time order, [x0, x1) in
// nanoseconds after the range's start, and each box's flame node. Plain
// arrays, which grow in place, where typed arrays would be copied as they
// grow; their length is the row's count of boxes.
interface Row {
  x0: number[];
  x1: number[];
  node: number[];
}

interface Lane {
  label: string;
  idx: number[]; // its samples, in time order
  top: number; // css px from the top of all lanes
  height: number;
  depth: number; // its rows: the depth of its deepest stack
  boxes: Row[] | null; // per depth (0 is the command), built when first drawn
}

export interface StackChartOptions {
  group: LaneGroup;
  icicle: boolean; // roots on top, as an icicle graph; else at the bottom, as a flame graph
  originNs: number; // the profile's T0: axis labels are offsets from it
  clock?: Clock; // the profile's wall clock: axis labels are then times of day
  periodNs: number; // the sampling period: how long a sample stands for
  onHover(node: number): void; // -1 when the pointer leaves the boxes
  onClick(node: number): void;
}

export class StackChart {
  readonly el: HTMLDivElement;
  readonly canvas: HTMLCanvasElement;
  private overlay: HTMLCanvasElement;
  private scroller: HTMLDivElement;
  private stage: HTMLDivElement;
  private spacer: HTMLDivElement;
  private tip = new Tooltip();
  private lanes: Lane[] = [];
  private total = 0; // the lanes' height
  private avail = 0; // the scroller's inner width, once known
  private scrollY = 0; // the scroller's scrollTop, as its scroll events tell
  private width = 0;
  private viewH = 0;
  private ink: { fg: string; axis: string } | null = null;
  private ticks: { text: string; x: number; w: number }[] = [];
  private outlined = false; // whether the overlay holds outlines
  private spanNs: number;
  private hover: { lane: number; row: number; box: number } | null = null;
  private linked = -1;
  private match: Uint8Array | null = null;
  private colors: (string | undefined)[];
  layoutMs = 0; // how long grouping the samples into lanes took
  boxMs = 0; // how long building the boxes of the lanes drawn so far took
  drawMs = 0; // how long the last frame took
  drawnBoxes = 0;

  constructor(
    private tree: Tree,
    private data: SamplesJSON,
    private opt: StackChartOptions,
  ) {
    this.spanNs = data.end_ns - data.start_ns;
    this.colors = new Array<string | undefined>(tree.n);
    this.canvas = h("canvas", {
      class: "stacks-canvas",
      attrs: {
        "data-testid": "stacks-canvas",
        tabindex: "0",
        role: "img",
        "aria-label": `Stack chart: samples in time order, one lane per ${opt.group === "cpu" ? "CPU" : "thread"}; arrows and Page keys scroll the lanes. The flame graph below and its frames table hold the same frames.`,
      },
    });
    this.overlay = h("canvas", { class: "stacks-overlay", attrs: { "aria-hidden": "true" } });
    const stage = (this.stage = h("div", { class: "stacks-stage" }, this.canvas, this.overlay));
    this.spacer = h("div", { class: "stacks-spacer" });
    this.scroller = h("div", { class: "stacks-scroll", attrs: { "data-testid": "stacks" } }, stage, this.spacer);
    this.el = h("div", { class: "stacks-wrap" }, this.scroller);
    this.layout();
    // Kept from the scroll events: reading scrollTop in draw would lay out
    // whatever the page changed since its last frame (the flame graph's
    // markup, say), there and then.
    this.scroller.addEventListener(
      "scroll",
      () => {
        this.scrollY = this.scroller.scrollTop;
        this.invalidate();
      },
      { passive: true },
    );
    this.canvas.addEventListener("keydown", (ev) => {
      const step = { ArrowDown: 40, ArrowUp: -40, PageDown: this.viewH - AXIS_H, PageUp: AXIS_H - this.viewH } as Record<string, number>;
      if (!(ev.key in step)) return;
      ev.preventDefault();
      this.scroller.scrollTop += step[ev.key];
    });
    this.overlay.addEventListener("mousemove", (ev) => this.onMove(ev));
    this.overlay.addEventListener("mouseleave", () => this.setHover(null, null));
    this.overlay.addEventListener("click", (ev) => {
      const b = this.hit(ev);
      if (b) this.opt.onClick(this.rows(this.lanes[b.lane])[b.row].node[b.box]);
    });
    // Sizes come from the observer, after the browser's own layout: a
    // frame drawn on scrolling or hovering never forces one.
    new ResizeObserver((entries) => {
      const w = Math.round(entries[entries.length - 1].contentRect.width);
      if (w === this.avail) return;
      this.avail = w;
      this.invalidate();
    }).observe(this.scroller);
  }

  // layout groups the samples into lanes and sizes each by its deepest
  // stack; a lane's boxes are built when it is first drawn (rows), so that
  // the first frame of 96 lanes costs the few in view.
  private layout(): void {
    const started = performance.now();
    const d = this.data;
    const depth = this.tree.d.depth;
    const keyOf = this.opt.group === "cpu" ? d.cpu : d.tid;
    const order = new Map<number, number[]>();
    for (let i = 0; i < d.count; i++) {
      const k = keyOf[i];
      let list = order.get(k);
      if (!list) order.set(k, (list = []));
      list.push(i);
    }
    const keys = [...order.keys()].sort((a, b) => a - b);
    let top = 0;
    this.lanes = keys.map((k) => {
      const idx = order.get(k)!;
      let deepest = 0;
      for (const i of idx) if (depth[d.leaf[i]] > deepest) deepest = depth[d.leaf[i]];
      const label = this.opt.group === "cpu" ? `CPU ${k}` : threadLabel(d, idx[0], k);
      const lane: Lane = { label, idx, top, height: HEAD_H + deepest * ROW_H + LANE_GAP, depth: deepest, boxes: null };
      top += lane.height;
      return lane;
    });
    this.total = top;
    this.layoutMs = performance.now() - started;
  }

  // rows returns a lane's boxes per depth, building them on first use: at
  // each depth, a run of consecutive samples that share a frame is one box.
  // Frames are pre-order nodes, so node a is an ancestor of b when
  // a <= b < end[a]: going from one sample to the next closes only the boxes
  // not on the new stack and opens only its new frames.
  private rows(lane: Lane): Row[] {
    if (lane.boxes) return lane.boxes;
    const started = performance.now();
    const d = this.data;
    const t = this.tree;
    const end = t.end;
    const parent = t.parent;
    const maxGap = 1.5 * this.opt.periodNs;
    const rows: Row[] = [];
    const open: number[] = []; // the open boxes' nodes, open[k] at depth k+1
    const openAt: number[] = [];
    const chain: number[] = [];
    let lastEnd = 0;
    const close = () => {
      const dep = open.length - 1;
      let r = rows[dep];
      if (!r) r = rows[dep] = { x0: [], x1: [], node: [] };
      r.x0.push(openAt[dep]);
      r.x1.push(lastEnd);
      r.node.push(open[dep]);
      open.pop();
      openAt.pop();
    };
    const idx = lane.idx;
    for (let j = 0; j < idx.length; j++) {
      const i = idx[j];
      const at = d.time[i];
      const next = j + 1 < idx.length ? d.time[idx[j + 1]] : at + this.opt.periodNs;
      const leaf = d.leaf[i];
      // A gap (the CPU idle, or its samples filtered out) ends every box.
      if (at > lastEnd) while (open.length) close();
      while (open.length) {
        const a = open[open.length - 1];
        if (a <= leaf && leaf < end[a]) break;
        close();
      }
      const stop = open.length ? open[open.length - 1] : 0;
      chain.length = 0;
      for (let n = leaf; n !== stop && n > 0; n = parent[n]) chain.push(n);
      for (let c = chain.length - 1; c >= 0; c--) {
        open.push(chain[c]);
        openAt.push(at);
      }
      lastEnd = Math.min(next, at + maxGap, this.spanNs);
    }
    while (open.length) close();
    lane.boxes = rows;
    this.boxMs += performance.now() - started;
    return rows;
  }

  // setMatch colours the nodes marked in m (search matches); null clears.
  setMatch(m: Uint8Array | null): void {
    if (m === this.match) return;
    this.match = m;
    this.invalidate();
  }

  // highlight outlines the boxes of node i (-1: none), for the flame
  // graph's hover.
  highlight(i: number): void {
    if (i === this.linked) return;
    this.linked = i;
    this.drawOverlay();
  }

  // setIcicle puts the lanes' roots on top (true) or at the bottom, as the
  // flame graph below is drawn.
  setIcicle(v: boolean): void {
    if (v === this.opt.icicle) return;
    this.opt.icicle = v;
    this.hover = null;
    this.invalidate();
  }

  // rowY returns the top of row r (depth r + 1) of a lane drawn at y: its
  // command's row first under the lane's label for an icicle, else last.
  private rowY(lane: Lane, y: number, r: number): number {
    return y + HEAD_H + (this.opt.icicle ? r : lane.depth - 1 - r) * ROW_H;
  }

  // invalidate draws the chart again at the next animation frame.
  readonly invalidate = onNextFrame(() => this.draw());

  private x(ns: number): number {
    return ns * (this.width / this.spanNs);
  }

  private color(node: number): string {
    if (this.match && this.match[node]) return MATCH_COLOR;
    let c = this.colors[node];
    if (c === undefined) c = this.colors[node] = frameColor(this.tree.kind(node), this.tree.name(node));
    return c;
  }

  // visible calls f for each lane in the scrolled view with its y offset on
  // the canvas.
  private visible(f: (lane: Lane, li: number, y: number) => void): void {
    const top = this.scrollY;
    const bottom = top + this.viewH - AXIS_H;
    for (let li = 0; li < this.lanes.length; li++) {
      const l = this.lanes[li];
      if (l.top + l.height < top) continue;
      if (l.top > bottom) break;
      f(l, li, AXIS_H + l.top - top);
    }
  }

  // restyle draws the chart again in the page's colours, after a switch
  // between light and dark.
  restyle(): void {
    this.ink = null;
    this.invalidate();
  }

  // draw draws the lanes in view. The chart must be on the page; the first
  // frame reads the scroller's width (a layout of the page so far), later
  // ones the width the ResizeObserver saw.
  draw(): void {
    const started = performance.now();
    const H = Math.min(AXIS_H + this.total, Math.max(320, Math.round(window.innerHeight * 0.7)));
    if (H !== this.viewH) {
      // The stage stays put (sticky) while the spacer gives the lanes'
      // height; set before the width is read, which the scroll bar they
      // bring narrows.
      this.stage.style.height = H + "px";
      this.spacer.style.height = Math.max(0, AXIS_H + this.total - H) + "px";
      this.scroller.style.height = H + 2 + "px";
    }
    if (!this.avail) this.avail = this.scroller.clientWidth;
    const W = Math.max(200, this.avail);
    if (W !== this.width || H !== this.viewH) {
      this.width = W;
      this.viewH = H;
      setupCanvas(this.canvas, W, H);
      sizeCanvas(this.overlay, W, H);
      this.outlined = false;
    }
    const ctx = this.canvas.getContext("2d")!;
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    if (!this.ink) {
      const styles = getComputedStyle(this.el);
      this.ink = { fg: styles.getPropertyValue("--fg").trim() || "#1d2330", axis: styles.getPropertyValue("--axis").trim() || "#555b66" };
    }
    const ink = this.ink.fg;
    const muted = this.ink.axis;
    let boxes = 0;
    ctx.font = FONT;
    ctx.textBaseline = "middle";
    const charW = ctx.measureText("mmmmmmmmmm").width / 10;
    // Boxes are gathered by colour and each colour filled as one path:
    // setting a fill style per box would parse a colour per box.
    const byColor = new Map<string, number[]>();
    const texts: { text: string; x: number; y: number }[] = [];
    const labels: { text: string; y: number }[] = [];
    const px = W / this.spanNs; // css pixels a nanosecond
    this.visible((lane, _li, y) => {
      labels.push({ text: `${lane.label} · ${fmtInt(lane.idx.length)} samples`, y: y + HEAD_H / 2 });
      const rows = this.rows(lane);
      for (let r = 0; r < rows.length; r++) {
        const row = rows[r];
        if (!row) continue;
        const ry = this.rowY(lane, y, r);
        if (ry > H || ry + ROW_H < AXIS_H) continue;
        let lastPx = -1;
        for (let b = 0; b < row.node.length; b++) {
          const x0 = row.x0[b] * px;
          const x1 = row.x1[b] * px;
          // Boxes narrower than a pixel that land on a drawn pixel add nothing.
          if (x1 - x0 < 1 && Math.floor(x0) <= lastPx) continue;
          const w = Math.max(1, x1 - x0);
          const c = this.color(row.node[b]);
          let list = byColor.get(c);
          if (!list) byColor.set(c, (list = []));
          list.push(x0, ry, w > 2 ? w - 1 : w);
          lastPx = Math.floor(x0 + w);
          boxes++;
          if (w > charW * 3 + 6) {
            const name = this.tree.name(row.node[b]);
            const fit = Math.floor((w - 6) / charW);
            texts.push({ text: name.length <= fit ? name : name.slice(0, Math.max(1, fit - 1)) + "\u2026", x: x0 + 3, y: ry + ROW_H / 2 });
          }
        }
      }
    });
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, AXIS_H, W, H - AXIS_H);
    ctx.clip();
    for (const [c, list] of byColor) {
      ctx.fillStyle = c;
      ctx.beginPath();
      for (let k = 0; k < list.length; k += 3) ctx.rect(list[k], list[k + 1], list[k + 2], ROW_H - 1);
      ctx.fill();
    }
    ctx.fillStyle = "#111";
    for (const t of texts) ctx.fillText(t.text, t.x, t.y);
    ctx.fillStyle = ink;
    ctx.font = LABEL_FONT;
    for (const l of labels) ctx.fillText(l.text, 2, l.y);
    ctx.restore();
    this.drawAxis(ctx, W, muted);
    this.drawnBoxes = boxes;
    this.drawMs = performance.now() - started;
    this.drawOverlay();
  }

  // drawAxis writes the time offsets from T0 (or the times of day) across
  // the top: ticks far enough apart for their labels, and no label that
  // overlaps another or runs past the right edge (the last is pulled in
  // from the edge, and left out when that would overlap the one before).
  private drawAxis(ctx: CanvasRenderingContext2D, W: number, ink: string): void {
    const span = this.spanNs;
    const steps = [1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 2e7, 5e7, 1e8, 2e8, 5e8, 1e9, 2e9, 5e9, 1e10, 2e10, 6e10, 3e11, 6e11, 3.6e12];
    const start = this.data.start_ns - this.opt.originNs;
    const GAP = 10; // px between labels
    ctx.font = "10px system-ui, sans-serif";
    const labelOf = (t: number, step: number) => (this.opt.clock?.shown ? this.opt.clock.mark + this.opt.clock.tick(t, step) : fmtTick(t, step) + " s");
    const ticksOf = (step: number) => {
      const out: { t: number; text: string; w: number }[] = [];
      for (let t = Math.ceil(start / step) * step; t <= start + span; t += step) {
        const text = labelOf(t, step);
        out.push({ t, text, w: ctx.measureText(text).width });
      }
      return out;
    };
    // The finest step whose labels, the widest of them, fit between ticks.
    let ticks: { t: number; text: string; w: number }[] = [];
    for (const step of steps) {
      const px = (step / span) * W;
      if (px < 30 && step !== steps[steps.length - 1]) continue;
      ticks = ticksOf(step);
      if (ticks.every((k) => k.w + GAP <= px)) break;
    }
    ctx.fillStyle = ink;
    ctx.textBaseline = "middle";
    ctx.fillRect(0, AXIS_H - 1, W, 1);
    this.ticks = [];
    let right = -Infinity; // the right edge of the last label drawn
    for (const k of ticks) {
      const x = Math.round(this.x(k.t - start));
      ctx.fillRect(x, AXIS_H - 5, 1, 4);
      const lx = Math.min(Math.max(0, x + 2), W - k.w - 1);
      if (lx < right + GAP || lx < 0) continue;
      ctx.fillText(k.text, lx, AXIS_H / 2 - 1);
      this.ticks.push({ text: k.text, x: lx, w: k.w });
      right = lx + k.w;
    }
  }

  // axisLabels returns the time axis's labels as drawn last: their text,
  // left edge and width in css px, for tests and tools.
  axisLabels(): { text: string; x: number; w: number; width: number }[] {
    return this.ticks.map((k) => ({ ...k, width: this.width }));
  }

  // drawOverlay outlines the hovered box and the linked node's boxes.
  private drawOverlay(): void {
    if (!this.width) return;
    // Until there is something to outline the overlay is left alone, its
    // pixels never allocated.
    const outline = this.hover !== null || this.linked >= 0;
    if (!outline && !this.outlined) return;
    this.outlined = outline;
    const ctx = this.overlay.getContext("2d")!;
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, this.width, this.viewH);
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, AXIS_H, this.width, this.viewH - AXIS_H);
    ctx.clip();
    const box = (lane: Lane, y: number, r: number, b: number, color: string, wide: number) => {
      const row = this.rows(lane)[r];
      const x0 = this.x(row.x0[b]);
      const w = Math.max(1, this.x(row.x1[b]) - x0);
      ctx.lineWidth = wide;
      ctx.strokeStyle = color;
      ctx.strokeRect(x0 + wide / 2, this.rowY(lane, y, r) + wide / 2, Math.max(1, (w > 2 ? w - 1 : w) - wide), ROW_H - 1 - wide);
    };
    if (this.linked >= 0) {
      const depth = this.tree.d.depth[this.linked];
      this.visible((lane, _li, y) => {
        const row = this.rows(lane)[depth - 1];
        if (!row) return;
        for (let b = 0; b < row.node.length; b++) if (row.node[b] === this.linked) box(lane, y, depth - 1, b, HIGHLIGHT_COLOR, 2);
      });
    }
    const hv = this.hover;
    if (hv) {
      this.visible((lane, li, y) => {
        if (li === hv.lane) box(lane, y, hv.row, hv.box, "#111", 1);
      });
    }
    ctx.restore();
  }

  // hit returns the box under the pointer, or null.
  private hit(ev: Pointer): { lane: number; row: number; box: number } | null {
    const rect = this.overlay.getBoundingClientRect();
    const px = ev.clientX - rect.left;
    const py = ev.clientY - rect.top;
    if (py < AXIS_H || px < 0 || px > this.width) return null;
    const y = py - AXIS_H + this.scrollY;
    let lo = 0;
    let hi = this.lanes.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lanes[mid].top <= y) lo = mid;
      else hi = mid - 1;
    }
    const lane = this.lanes[lo];
    if (!lane) return null;
    const k = Math.floor((y - lane.top - HEAD_H) / ROW_H);
    const r = this.opt.icicle ? k : lane.depth - 1 - k;
    const row = k >= 0 && r >= 0 ? this.rows(lane)[r] : undefined;
    if (!row) return null;
    const ns = (px / this.width) * this.spanNs;
    // The last box starting at or before ns.
    let a = 0;
    let b = row.node.length - 1;
    if (b < 0 || row.x0[0] > ns) return null;
    while (a < b) {
      const mid = (a + b + 1) >> 1;
      if (row.x0[mid] <= ns) a = mid;
      else b = mid - 1;
    }
    // A box under a pixel wide still answers within a pixel of it.
    const slack = this.spanNs / this.width;
    return ns < row.x1[a] + slack ? { lane: lo, row: r, box: a } : null;
  }

  private onMove(ev: MouseEvent): void {
    const b = this.hit(ev);
    this.setHover(b, ev);
  }

  private setHover(b: { lane: number; row: number; box: number } | null, ev: Pointer | null): void {
    const same = b && this.hover && b.lane === this.hover.lane && b.row === this.hover.row && b.box === this.hover.box;
    if (!same) {
      const was = this.hover ? this.node(this.hover) : -1;
      this.hover = b;
      this.drawOverlay();
      const now = b ? this.node(b) : -1;
      if (now !== was) this.opt.onHover(now);
    }
    if (!b || !ev) {
      this.tip.hide();
      return;
    }
    this.tip.show(ev, this.describe(b));
  }

  // node returns the flame node of a box.
  private node(b: { lane: number; row: number; box: number }): number {
    return this.rows(this.lanes[b.lane])[b.row].node[b.box];
  }

  private describe(b: { lane: number; row: number; box: number }): string[] {
    const lane = this.lanes[b.lane];
    const row = this.rows(lane)[b.row];
    const node = row.node[b.box];
    const start = this.data.start_ns - this.opt.originNs;
    const x0 = row.x0[b.box];
    const x1 = row.x1[b.box];
    const t = this.tree;
    const dso = t.dso(node);
    return [
      t.name(node) || "(unnamed)",
      `${t.kind(node)}${dso ? " · " + dso : ""}`,
      `${displayRange(start + x0, start + x1)}${this.opt.clock?.suffix(start + x0, start + x1) ?? ""} on ${lane.label}`,
      "click to zoom the flame graph to this frame",
    ];
  }

  // lanesInfo describes each lane for a screen reader's table and tests.
  lanesInfo(): { label: string; samples: number; boxes: number }[] {
    return this.lanes.map((l) => ({ label: l.label, samples: l.idx.length, boxes: this.rows(l).reduce((n, r) => n + (r ? r.node.length : 0), 0) }));
  }

  // boxesOf returns where node i's boxes are drawn in the lane labelled
  // label (css px on the canvas, scrolled view), for tests and tools.
  boxesOf(label: string, i: number): { x: number; y: number; w: number }[] {
    const out: { x: number; y: number; w: number }[] = [];
    this.visible((lane, _li, y) => {
      if (lane.label !== label) return;
      const r = this.tree.d.depth[i] - 1;
      const row = this.rows(lane)[r];
      if (!row) return;
      for (let b = 0; b < row.node.length; b++) {
        if (row.node[b] !== i) continue;
        const x0 = this.x(row.x0[b]);
        out.push({ x: x0, y: this.rowY(lane, y, r), w: Math.max(1, this.x(row.x1[b]) - x0) });
      }
    });
    return out;
  }

  destroy(): void {
    this.tip.hide();
    clear(this.el);
  }
}

function threadLabel(d: SamplesJSON, i: number, tid: number): string {
  const comm = d.strings[d.comm[i]] ?? "";
  return `${comm || "thread"} ${tid >= 0 ? tid : "?"}${d.pid[i] >= 0 && d.pid[i] !== tid ? ` (pid ${d.pid[i]})` : ""}`;
}
