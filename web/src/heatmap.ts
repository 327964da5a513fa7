// The subsecond offset heatmap (FlameScope): one column per col_ns of time,
// rows slicing each column from its start at the bottom to its end at the
// top, colour by sample count. Dragging (or click, then click) selects the
// time-contiguous run of cells from the first to the last in column-major
// time order.

import { emptyCell, heatColor, type Scale, scaleValue } from "./colors";
import { clear, h, Tooltip } from "./dom";
import { displayDuration, displayRange, fmtInt } from "./format";
import { type Cell, CellSelect, Grid, legend, mapHandlers } from "./grid";
import type { HeatmapJSON } from "./wire";
import { axis, type Clock } from "./wallclock";

// Selection is a time range as offsets from the profile's T0, half-open.
export interface Selection {
  startNs: number;
  endNs: number;
  samples: number;
}

export interface HeatmapOptions {
  originNs: number; // the profile's T0; offsets are relative to it
  clock?: Clock; // the profile's wall clock, for times of day
  scale: Scale;
  onSelect(sel: Selection): void;
  onRows(rows: number): void; // the user took the offer of fewer rows
}

// fewerRows proposes a row count for a heatmap whose cells hold at most one
// sample: the largest of the usual counts that gives a column's samples
// about four to a cell, or 1.
export function fewerRows(total: number, cols: number, rows: number): number {
  const perCol = total / Math.max(1, cols);
  const nice = [1, 2, 5, 10, 20, 25, 50, 100, 200, 500];
  let best = 1;
  for (const n of nice) if (n <= perCol / 4 && n < rows) best = n;
  return best;
}

export class HeatmapView {
  readonly el: HTMLElement;
  private grid: Grid;
  private status: HTMLElement;
  private legendBox: HTMLElement;
  private sparse: HTMLElement;
  private tip = new Tooltip();
  private data: HeatmapJSON | null = null;
  private sel: CellSelect;
  private range: [number, number] | null = null; // cell indexes selected, in time order

  constructor(
    private container: HTMLElement,
    private opt: HeatmapOptions,
  ) {
    this.sel = new CellSelect({
      changed: (a, b) => {
        this.range = this.ordered(a, b);
        this.drawOverlay();
        this.label();
      },
      done: (a, b) => {
        const [i, j] = (this.range = this.ordered(a, b));
        const [s, e] = this.cellRange(i, j);
        this.drawOverlay();
        this.label();
        this.opt.onSelect({ startNs: s, endNs: e, samples: this.sum(i, j) });
      },
      cancelled: () => {
        this.range = null;
        this.drawOverlay();
        this.hint();
      },
    });
    this.status = h("span", { class: "selection-label", attrs: { "data-testid": "selection", "aria-live": "polite" } });
    this.grid = new Grid(
      "heatmap-canvas",
      mapHandlers({
        ready: () => !!this.data,
        sel: this.sel,
        status: this.status,
        describe: (c) => this.describe(c),
        redraw: () => this.drawOverlay(),
        move: (c, ev) => this.move(c, ev),
        leave: () => this.tip.hide(),
      }),
    );
    this.grid.overlay.setAttribute("aria-label", "Offset heatmap: arrows move a cursor cell, Shift+arrows select cells, Enter opens the flame graph of the cell or selection");
    this.sparse = h("p", { class: "sparse-note", attrs: { "data-testid": "sparse-note", role: "status" } });
    this.sparse.hidden = true;
    this.legendBox = h("span");
    const head = h(
      "div",
      { class: "panel-head" },
      this.legendBox,
      this.status,
    );
    this.el = h("div", { class: "panel heatmap-panel" }, head, this.sparse, this.grid.el);
    clear(container);
    container.append(this.el);
    this.hint();
  }

  setScale(s: Scale): void {
    this.opt.scale = s;
    this.render();
  }

  setData(d: HeatmapJSON): void {
    this.data = d;
    this.noteSparse(d);
    if (this.sel.active()) this.sel.cancel();
    this.range = null;
    this.render();
  }

  // mark shows the cells over [startNs, endNs), offsets from T0, as the
  // selection, as if they had been dragged but without opening them: the
  // range the page's link gave. A selection in progress is left alone.
  mark(startNs: number, endNs: number): void {
    const d = this.data;
    const shift = d ? d.t0_ns - this.opt.originNs : 0;
    if (!d || this.sel.active() || !(endNs > startNs) || endNs <= shift || startNs >= shift + d.cols * d.col_ns) return;
    const last = d.cols * d.rows - 1;
    const at = (t: number) => {
      const rel = t - shift;
      const c = Math.floor(rel / d.col_ns);
      const r = Math.floor(((rel - c * d.col_ns) * d.rows) / d.col_ns);
      return Math.min(last, Math.max(0, c * d.rows + r));
    };
    this.range = [at(startNs), at(endNs - 1)];
    this.drawOverlay();
    this.label();
  }

  // showMessage shows msg in place of the map: an error, or a note that no
  // samples match ("empty").
  // noteSparse says when no cell holds more than one sample (a filter that
  // leaves few, at many rows), where the colours tell nothing, and offers
  // fewer rows in one click.
  private noteSparse(d: HeatmapJSON): void {
    clear(this.sparse);
    const rows = fewerRows(d.total, d.cols, d.rows);
    this.sparse.hidden = !(d.total > 0 && d.max <= 1 && rows < d.rows);
    if (this.sparse.hidden) return;
    const btn = h("button", { class: "btn small", text: `Use ${rows} row${rows === 1 ? "" : "s"}`, attrs: { type: "button", "data-testid": "fewer-rows" } });
    btn.addEventListener("click", () => this.opt.onRows(rows));
    this.sparse.append(`No cell holds more than one sample: these filters leave ${fmtInt(d.total)} samples over ${fmtInt(d.cols * d.rows)} cells, too few to shade. `, btn);
  }

  showMessage(msg: string, kind: "error" | "empty" = "error"): void {
    this.sparse.hidden = true;
    this.data = null;
    this.status.textContent = "";
    this.grid.showMessage(msg, kind);
  }

  render(): void {
    const d = this.data;
    if (!d) return;
    const g = this.grid;
    const avail = g.availableWidth(this.container);
    // Fit the columns to the width (whole pixels while cells are wide, down
    // to 2 px); beyond that the grid scrolls.
    const fit = avail / Math.max(1, d.cols);
    const cellW = Math.min(24, Math.max(2, fit >= 4 ? Math.floor(fit) : fit));
    const cellH = Math.min(12, Math.max(1, Math.floor(360 / Math.max(1, d.rows))));
    const base = g.layout(d.cols, d.rows, cellW, cellH);
    // Cells: quantise to 256 levels so colour strings are built once.
    const palette: string[] = [];
    for (let i = 0; i < 256; i++) palette.push(heatColor((i + 1) / 256));
    const empty = emptyCell();
    // Cells get a hairline gap only when they are large in both directions;
    // a gap in one direction only would stripe the map.
    const gap = cellW >= 6 && cellH >= 6 ? 1 : 0;
    for (let c = 0; c < d.cols; c++) {
      const col = d.counts[c] || [];
      const x = g.colX(c);
      const w = g.colX(c + 1) - x - gap;
      for (let r = 0; r < d.rows; r++) {
        const v = col[r] || 0;
        base.fillStyle = v > 0 ? palette[Math.min(255, Math.floor(scaleValue(v, d.max, this.opt.scale) * 255.999))] : empty;
        base.fillRect(x, g.rowY(d.rows - 1 - r), w, cellH - gap);
      }
    }
    const shift = d.t0_ns - this.opt.originNs;
    const x = axis(this.opt.clock, d.col_ns);
    g.drawXLabels(base, (c) => x.label(shift + c * d.col_ns), x.gap);
    const marks: { row: number; text: string }[] = [];
    const unit = 1e6;
    for (let r = d.rows; r >= 0; r--) {
      const ns = (r * d.col_ns) / d.rows;
      const v = ns / unit;
      marks.push({ row: d.rows - r, text: Number.isInteger(v) ? String(v) : v.toFixed(1) });
    }
    g.drawYLabels(marks.reverse(), `ms \u2191  ${x.unit} \u2192`);
    clear(this.legendBox);
    this.legendBox.append(
      legend((t) => heatColor(t), "0", fmtInt(d.max), this.opt.scale === "log" ? "samples (enhanced)" : "samples"),
    );
    this.drawOverlay();
  }

  private index(c: Cell): number {
    const d = this.data!;
    return c.col * d.rows + (d.rows - 1 - c.row);
  }

  // ordered returns the cell indexes of a and b in time order.
  private ordered(a: Cell, b: Cell): [number, number] {
    const i = this.index(a);
    const j = this.index(b);
    return i <= j ? [i, j] : [j, i];
  }

  private move(c: Cell, ev: PointerEvent): void {
    const d = this.data;
    if (!d) return;
    if (this.sel.move(c, ev.buttons)) {
      this.tip.hide();
      return;
    }
    if (!c.inside) {
      this.tip.hide();
      return;
    }
    this.tip.show(ev, this.describe(c));
  }

  // describe returns what cell c holds: its time, place and samples.
  private describe(c: Cell): string[] {
    const d = this.data!;
    const r = d.rows - 1 - c.row;
    const i = this.index(c);
    const [s, e] = this.cellRange(i, i);
    const n = (d.counts[c.col] || [])[r] || 0;
    return [`${displayRange(s, e)}${this.opt.clock?.suffix(s, e) ?? ""}`, `column ${c.col}, +${displayDuration((r * d.col_ns) / d.rows)}`, `${fmtInt(n)} samples`];
  }

  // cellRange returns [start, end) offsets from T0 of cells a..b inclusive.
  private cellRange(a: number, b: number): [number, number] {
    const d = this.data!;
    const shift = d.t0_ns - this.opt.originNs;
    const at = (i: number) => {
      const c = Math.floor(i / d.rows);
      const r = i - c * d.rows;
      return shift + c * d.col_ns + Math.floor((r * d.col_ns) / d.rows);
    };
    return [at(a), at(b + 1)];
  }

  private sum(a: number, b: number): number {
    const d = this.data!;
    let n = 0;
    for (let i = a; i <= b; i++) {
      const c = Math.floor(i / d.rows);
      n += (d.counts[c] || [])[i - c * d.rows] || 0;
    }
    return n;
  }

  private hint(): void {
    this.status.textContent = "Drag across cells, or click the first and then the last, to open a flame graph.";
    this.status.classList.add("hint");
  }

  private label(): void {
    if (!this.range) return this.hint();
    const [a, b] = this.range;
    const [s, e] = this.cellRange(a, b);
    this.status.classList.remove("hint");
    const waiting = this.sel.waiting();
    const prefix = waiting && a === b ? "Start " : "";
    const suffix = waiting ? " — click the last cell" : "";
    this.status.textContent = `${prefix}${displayRange(s, e)}${this.opt.clock?.suffix(s, e) ?? ""} · ${fmtInt(this.sum(a, b))} samples${suffix}`;
  }

  private drawOverlay(): void {
    const d = this.data;
    const g = this.grid;
    const ctx = g.overlayContext();
    if (!d) return;
    if (!this.range) return g.drawCursor(ctx);
    const [a, b] = this.range;
    ctx.fillStyle = "rgba(30, 90, 200, 0.35)";
    ctx.strokeStyle = "rgba(20, 60, 160, 0.9)";
    const c1 = Math.floor(a / d.rows);
    const c2 = Math.floor(b / d.rows);
    for (let c = c1; c <= c2; c++) {
      const lo = c === c1 ? a - c1 * d.rows : 0;
      const hi = c === c2 ? b - c2 * d.rows : d.rows - 1;
      const x = g.colX(c);
      const w = g.colX(c + 1) - x;
      const yTop = g.rowY(d.rows - 1 - hi);
      const yBot = g.rowY(d.rows - lo);
      ctx.fillRect(x, yTop, w, yBot - yTop);
    }
    // Outline the first and last cells.
    for (const i of [a, b]) {
      const c = Math.floor(i / d.rows);
      const r = i - c * d.rows;
      ctx.strokeRect(g.colX(c) + 0.5, g.rowY(d.rows - 1 - r) + 0.5, g.colX(c + 1) - g.colX(c) - 1, g.cellH - 1);
    }
    g.drawCursor(ctx);
  }
}
