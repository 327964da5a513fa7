// MiniTimeline is the whole capture as a strip of sample counts (the
// offset heatmap's column sums for the page's filters) with a brush over
// the range the page shows. Dragging the brush moves it, dragging an edge
// resizes it, dragging elsewhere draws a new range; on release the page
// opens the new range. From the keyboard, arrows move the brush,
// Shift+arrows move its end, Enter opens the range and Esc puts it back.
// A differential page's baseline range is drawn on the strip beside the
// brush, which moves the target alone.

import { clear, h, setupCanvas } from "./dom";
import { displayDuration, displayRange, displaySeconds } from "./format";
import type { HeatmapJSON } from "./wire";
import type { Clock } from "./wallclock";

export interface TimelineOptions {
  durNs: number; // the capture's span from T0 (offsets run 0..durNs)
  startNs: number; // the page's range, offsets from T0
  endNs: number;
  base?: [number, number] | null; // a differential page's base range, drawn, never moved
  clock?: Clock; // the capture's wall clock, for times of day
  onChange(startNs: number, endNs: number): void;
  // onPreview follows the brush as the label does: the range it holds, and
  // whether that differs from the page's (not opened yet).
  onPreview?(startNs: number, endNs: number, pending: boolean): void;
}

const H = 44;
const EDGE = 6; // px of the brush's edges that resize it

type Drag = { mode: "move" | "left" | "right" | "new"; x0: number; s0: number; e0: number } | null;

export class MiniTimeline {
  readonly el: HTMLDivElement;
  private canvas: HTMLCanvasElement;
  private label: HTMLElement;
  private counts: number[] = [];
  private colNs = 0;
  private shift = 0; // the data's first column, as an offset from T0
  private width = 0;
  private start: number;
  private end: number;
  private drag: Drag = null;

  constructor(
    container: HTMLElement,
    private opt: TimelineOptions,
  ) {
    this.start = opt.startNs;
    this.end = opt.endNs;
    this.canvas = h("canvas", {
      class: "timeline-canvas",
      attrs: {
        "data-testid": "timeline-canvas",
        tabindex: "0",
        role: "slider",
        "aria-label": "Range on the capture's timeline: arrows move it, Shift+arrows move its end, Enter opens it",
        "aria-valuemin": "0",
        "aria-valuemax": String(opt.durNs / 1e9),
      },
    });
    this.label = h("span", { class: "timeline-label", attrs: { "data-testid": "timeline-label", "aria-live": "polite" } });
    const base = opt.base;
    this.el = h(
      "div",
      { class: "timeline" },
      this.canvas,
      h(
        "div",
        { class: "timeline-foot" },
        this.label,
        base ? h("span", { class: "timeline-base", attrs: { "data-testid": "timeline-base" } }, h("span", { class: "timeline-base-key" }), `baseline ${displaySeconds(base[0])}–${displaySeconds(base[1])} s`) : null,
        h("span", { class: "muted", text: "drag the range to move it, its edges to resize it, or elsewhere for a new one" }),
      ),
    );
    clear(container);
    container.append(this.el);
    this.canvas.addEventListener("pointerdown", (ev) => this.down(ev));
    this.canvas.addEventListener("pointermove", (ev) => this.move(ev));
    this.canvas.addEventListener("pointerup", (ev) => this.up(ev));
    this.canvas.addEventListener("pointercancel", () => this.cancel());
    this.canvas.addEventListener("keydown", (ev) => this.key(ev));
    new ResizeObserver(() => this.draw()).observe(this.el);
    this.describe();
  }

  // drawnWidth is the strip's width in css pixels as last drawn, 0 before
  // its first frame.
  get drawnWidth(): number {
    return this.width;
  }

  // setData draws the sample counts of a one-row offset heatmap.
  setData(d: HeatmapJSON, originNs: number): void {
    this.counts = d.counts.map((c) => c[0] || 0);
    this.colNs = d.col_ns;
    this.shift = d.t0_ns - originNs;
    this.canvas.dataset.loaded = "1";
    this.draw();
  }

  private x(ns: number): number {
    return (ns / this.opt.durNs) * this.width;
  }

  private ns(px: number): number {
    return (px / this.width) * this.opt.durNs;
  }

  // step is the grid a dragged bound snaps to: the finest of 1, 2 and 5
  // times a power of ten that is at least a pixel wide.
  private step(): number {
    const px = this.opt.durNs / Math.max(1, this.width);
    for (let s = 1e6; ; s *= 10) {
      for (const m of [1, 2, 5]) if (s * m >= px) return s * m;
    }
  }

  private snap(ns: number): number {
    const s = this.step();
    return Math.min(this.opt.durNs, Math.max(0, Math.round(ns / s) * s));
  }

  draw(): void {
    const W = Math.max(200, this.el.clientWidth);
    const ctx = setupCanvas(this.canvas, W, H);
    this.width = W;
    const styles = getComputedStyle(this.el);
    const bar = styles.getPropertyValue("--timeline-bar").trim() || "#8a94a6";
    const dim = styles.getPropertyValue("--timeline-dim").trim() || "rgba(255,255,255,0.6)";
    const accent = styles.getPropertyValue("--accent").trim() || "#1f5fbf";
    ctx.clearRect(0, 0, W, H);
    let max = 0;
    for (const c of this.counts) if (c > max) max = c;
    ctx.fillStyle = bar;
    if (max > 0) {
      for (let i = 0; i < this.counts.length; i++) {
        const x0 = this.x(this.shift + i * this.colNs);
        const x1 = this.x(this.shift + (i + 1) * this.colNs);
        const hh = (this.counts[i] / max) * (H - 4);
        ctx.fillRect(x0, H - hh, Math.max(1, x1 - x0 - (x1 - x0 > 3 ? 1 : 0)), hh);
      }
    }
    // Outside the brush is veiled; the brush is outlined with handles.
    const bx0 = this.x(this.start);
    const bx1 = Math.max(bx0 + 2, this.x(this.end));
    ctx.fillStyle = dim;
    ctx.fillRect(0, 0, bx0, H);
    ctx.fillRect(bx1, 0, W - bx1, H);
    ctx.strokeStyle = accent;
    ctx.lineWidth = 2;
    ctx.strokeRect(bx0 + 1, 1, bx1 - bx0 - 2, H - 2);
    ctx.fillStyle = accent;
    ctx.fillRect(bx0, H / 2 - 8, 3, 16);
    ctx.fillRect(bx1 - 3, H / 2 - 8, 3, 16);
    // A differential page's baseline, over the veil: a dashed outline in
    // its own colour, named when there is room.
    if (this.opt.base) {
      const baseInk = styles.getPropertyValue("--timeline-base").trim() || "#a65300";
      const x0 = this.x(this.opt.base[0]);
      const x1 = Math.max(x0 + 3, this.x(this.opt.base[1]));
      ctx.strokeStyle = baseInk;
      ctx.lineWidth = 2;
      ctx.setLineDash([5, 3]);
      ctx.strokeRect(x0 + 1, 1, x1 - x0 - 2, H - 2);
      ctx.setLineDash([]);
      ctx.font = "600 10px system-ui, sans-serif";
      ctx.textBaseline = "top";
      if (x1 - x0 > ctx.measureText("baseline").width + 8) {
        ctx.fillStyle = baseInk;
        ctx.fillText("baseline", x0 + 4, 4);
      }
      Object.assign(this.canvas.dataset, { baseX0: String(x0), baseX1: String(x1) });
    }
  }

  // describe says what the brush holds, in seconds from T0 and, when the
  // capture has a wall clock and the URL asks for it, in time of day.
  describe(): void {
    const text = `${displayRange(this.start, this.end)} of ${displayDuration(this.opt.durNs)}${this.opt.clock?.suffix(this.start, this.end) ?? ""}`;
    this.label.textContent = text;
    this.canvas.setAttribute("aria-valuenow", String(this.start / 1e9));
    this.canvas.setAttribute("aria-valuetext", text);
    this.canvas.dataset.start = String(this.start);
    this.canvas.dataset.end = String(this.end);
    this.opt.onPreview?.(this.start, this.end, this.start !== this.opt.startNs || this.end !== this.opt.endNs);
  }

  private down(ev: PointerEvent): void {
    if (ev.button !== 0 || !this.width) return;
    const px = ev.clientX - this.canvas.getBoundingClientRect().left;
    const bx0 = this.x(this.start);
    const bx1 = this.x(this.end);
    let mode: "move" | "left" | "right" | "new" = "new";
    if (Math.abs(px - bx0) <= EDGE) mode = "left";
    else if (Math.abs(px - bx1) <= EDGE) mode = "right";
    else if (px > bx0 && px < bx1) mode = "move";
    this.drag = { mode, x0: px, s0: this.start, e0: this.end };
    this.canvas.setPointerCapture(ev.pointerId);
    ev.preventDefault();
  }

  private move(ev: PointerEvent): void {
    const px = ev.clientX - this.canvas.getBoundingClientRect().left;
    const d = this.drag;
    if (!d) {
      const bx0 = this.x(this.start);
      const bx1 = this.x(this.end);
      this.canvas.style.cursor = Math.abs(px - bx0) <= EDGE || Math.abs(px - bx1) <= EDGE ? "ew-resize" : px > bx0 && px < bx1 ? "grab" : "crosshair";
      return;
    }
    const dur = this.opt.durNs;
    const at = this.snap(this.ns(px));
    const min = this.step();
    switch (d.mode) {
      case "move": {
        const len = d.e0 - d.s0;
        const s = Math.min(dur - len, Math.max(0, this.snap(d.s0 + this.ns(px - d.x0))));
        this.start = s;
        this.end = s + len;
        break;
      }
      // An edge moves by as much as the pointer, wherever it was grabbed.
      case "left":
        this.start = Math.max(0, Math.min(this.snap(d.s0 + this.ns(px - d.x0)), this.end - min));
        break;
      case "right":
        this.end = Math.min(dur, Math.max(this.snap(d.e0 + this.ns(px - d.x0)), this.start + min));
        break;
      case "new": {
        const a = this.snap(this.ns(d.x0));
        this.start = Math.min(a, at);
        this.end = Math.max(a, at);
        if (this.end - this.start < min) this.end = Math.min(dur, this.start + min);
        break;
      }
    }
    this.describe();
    this.draw();
  }

  private up(ev: PointerEvent): void {
    const d = this.drag;
    if (!d) return;
    this.move(ev);
    this.drag = null;
    // A click without a drag opens nothing.
    if (this.start === d.s0 && this.end === d.e0) return;
    if (d.mode === "new" && Math.abs(ev.clientX - this.canvas.getBoundingClientRect().left - d.x0) < 3) {
      this.cancel();
      return;
    }
    this.opt.onChange(this.start, this.end);
  }

  private cancel(): void {
    this.drag = null;
    this.start = this.opt.startNs;
    this.end = this.opt.endNs;
    this.describe();
    this.draw();
  }

  private key(ev: KeyboardEvent): void {
    const dur = this.opt.durNs;
    const len = this.end - this.start;
    // Arrows step by a tenth of the range, on the snapping grid.
    const step = Math.max(this.step(), this.snap(len / 10) || this.step());
    let handled = true;
    switch (ev.key) {
      case "ArrowLeft":
      case "ArrowRight": {
        const dir = ev.key === "ArrowLeft" ? -1 : 1;
        if (ev.shiftKey) this.end = Math.min(dur, Math.max(this.start + this.step(), this.end + dir * step));
        else {
          const s = Math.min(dur - len, Math.max(0, this.start + dir * step));
          this.start = s;
          this.end = s + len;
        }
        break;
      }
      case "Enter":
        if (this.start !== this.opt.startNs || this.end !== this.opt.endNs) this.opt.onChange(this.start, this.end);
        break;
      case "Escape":
        this.cancel();
        break;
      default:
        handled = false;
    }
    if (!handled) return;
    ev.preventDefault();
    ev.stopPropagation();
    this.describe();
    this.draw();
  }
}
