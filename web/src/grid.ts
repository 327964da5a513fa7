// Grid lays out a cell grid on canvas: a fixed y-axis on the left and a
// horizontally scrolling area holding the cells, the x-axis and an overlay
// for selections. Heatmap and cores map both draw on it.

import { clear, h, setupCanvas } from "./dom";

export interface Cell {
  col: number;
  row: number; // display row, 0 at the top
  inside: boolean;
}

export interface GridHandlers {
  down(c: Cell, ev: PointerEvent): void;
  move(c: Cell, ev: PointerEvent): void;
  up(c: Cell, ev: PointerEvent): void;
  leave(): void;
  // key hears the keyboard: an arrow moved the cursor to c ("move"), a
  // Shift+arrow extended the selection from the cell where it started to c
  // ("extend"), or Enter asked to open the cursor's cell or the selection
  // ("enter").
  key(action: "move" | "extend" | "enter", c: Cell, from: Cell): void;
}

export const AXIS_W = 52;
export const XAXIS_H = 20;
const TOP = 6;

export class Grid {
  readonly el: HTMLDivElement;
  readonly scroller: HTMLDivElement;
  readonly yaxis: HTMLDivElement;
  readonly xaxis: HTMLDivElement;
  readonly base: HTMLCanvasElement;
  readonly overlay: HTMLCanvasElement;
  cols = 0;
  rows = 0;
  cellW = 1;
  cellH = 1;
  private dragging = false;

  constructor(
    testid: string,
    private handlers: GridHandlers,
  ) {
    // Axis labels are text in the page, not pixels on the canvas: they
    // follow the page's colours, screen readers and zoom read them, and
    // they can be measured.
    this.yaxis = h("div", { class: "grid-yaxis", attrs: { "aria-hidden": "true" } });
    this.xaxis = h("div", { class: "grid-xaxis", attrs: { "aria-hidden": "true" } });
    this.base = h("canvas", { class: "grid-base", attrs: { "data-testid": testid } });
    // The overlay takes the pointer and, focused, the keyboard: the arrows
    // move a cursor cell, Shift+arrows select, Enter opens.
    this.overlay = h("canvas", { class: "grid-overlay", attrs: { tabindex: "0", role: "application" } });
    const stack = h("div", { class: "grid-stack" }, this.base, this.overlay, this.xaxis);
    this.scroller = h("div", { class: "grid-scroll" }, stack);
    this.el = h("div", { class: "grid" }, this.yaxis, this.scroller);
    const cell = (ev: PointerEvent): Cell => {
      const r = this.overlay.getBoundingClientRect();
      const x = ev.clientX - r.left;
      const y = ev.clientY - r.top - TOP;
      const gw = this.gridWidth();
      const inside = x >= 0 && y >= 0 && x < gw && y < this.rows * this.cellH;
      const col = Math.min(this.cols - 1, Math.max(0, Math.floor((x / gw) * this.cols)));
      const row = Math.min(this.rows - 1, Math.max(0, Math.floor(y / this.cellH)));
      return { col, row, inside };
    };
    this.overlay.addEventListener("pointerdown", (ev) => {
      if (ev.button !== 0) return;
      const c = cell(ev);
      if (!c.inside) return;
      ev.preventDefault();
      this.dragging = true;
      this.overlay.setPointerCapture(ev.pointerId);
      this.handlers.down(c, ev);
    });
    this.overlay.addEventListener("pointermove", (ev) => this.handlers.move(cell(ev), ev));
    this.overlay.addEventListener("pointerup", (ev) => {
      if (!this.dragging) return;
      this.dragging = false;
      this.handlers.up(cell(ev), ev);
    });
    this.overlay.addEventListener("pointercancel", () => {
      this.dragging = false;
    });
    this.overlay.addEventListener("pointerleave", () => this.handlers.leave());
    this.overlay.addEventListener("keydown", (ev) => this.key(ev));
    this.overlay.addEventListener("focus", () => {
      if (!this.cursor && this.cols) this.cursor = { col: 0, row: 0, inside: true };
      if (this.cursor) this.handlers.key("move", this.cursor, this.cursor);
    });
    this.overlay.addEventListener("blur", () => this.handlers.leave());
  }

  // cursor is the keyboard's cell, drawn by drawCursor while focused.
  cursor: Cell | null = null;

  private key(ev: KeyboardEvent): void {
    if (!this.cols || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const c = this.cursor ?? { col: 0, row: 0, inside: true };
    let col = c.col;
    let row = c.row;
    const page = Math.max(1, Math.round(this.cols / 10));
    switch (ev.key) {
      case "ArrowLeft":
        col--;
        break;
      case "ArrowRight":
        col++;
        break;
      case "ArrowUp":
        row--;
        break;
      case "ArrowDown":
        row++;
        break;
      case "PageUp":
        col -= page;
        break;
      case "PageDown":
        col += page;
        break;
      case "Home":
        col = 0;
        break;
      case "End":
        col = this.cols - 1;
        break;
      case "Enter":
        ev.preventDefault();
        this.handlers.key("enter", c, c);
        return;
      default:
        return;
    }
    ev.preventDefault();
    this.cursor = { col: Math.min(this.cols - 1, Math.max(0, col)), row: Math.min(this.rows - 1, Math.max(0, row)), inside: true };
    this.handlers.key(ev.shiftKey ? "extend" : "move", this.cursor, c);
  }

  // drawCursor outlines the cursor cell when the grid has the keyboard.
  drawCursor(ctx: CanvasRenderingContext2D): void {
    const c = this.cursor;
    if (!c || document.activeElement !== this.overlay) return;
    const x = this.colX(c.col);
    const y = this.rowY(c.row);
    const w = Math.max(2, this.colX(c.col + 1) - x);
    ctx.lineWidth = 2;
    ctx.strokeStyle = getComputedStyle(this.overlay).getPropertyValue("--focus").trim() || "#1f5fbf";
    ctx.strokeRect(x - 1, y - 1, w + 2, this.cellH + 2);
    ctx.strokeStyle = "#fff";
    ctx.lineWidth = 1;
    ctx.strokeRect(x + 0.5, y + 0.5, w - 1, this.cellH - 1);
  }

  // availableWidth is the css width that the cells may use without scrolling.
  availableWidth(container: HTMLElement): number {
    return Math.max(120, container.clientWidth - AXIS_W - 4);
  }

  gridWidth(): number {
    return this.colX(this.cols);
  }

  colX(c: number): number {
    return Math.round(c * this.cellW);
  }

  rowY(r: number): number {
    return TOP + r * this.cellH;
  }

  // showMessage replaces the axes and cells with msg until the next layout:
  // an error, or a note that nothing matches ("empty").
  showMessage(msg: string, kind: "error" | "empty"): void {
    clear(this.el);
    this.el.append(h("p", { class: kind, attrs: { "data-testid": "grid-message" }, text: msg }));
  }

  // layout puts back the axes and cells that showMessage replaced, sizes the
  // canvases, clears the axis labels and returns the base canvas's context.
  layout(cols: number, rows: number, cellW: number, cellH: number): CanvasRenderingContext2D {
    if (!this.el.contains(this.scroller)) {
      clear(this.el);
      this.el.append(this.yaxis, this.scroller);
    }
    this.cols = cols;
    this.rows = rows;
    this.cellW = cellW;
    this.cellH = cellH;
    const w = Math.max(1, this.gridWidth());
    const hh = TOP + rows * cellH + XAXIS_H;
    const base = setupCanvas(this.base, w, hh);
    setupCanvas(this.overlay, w, hh);
    this.yaxis.style.height = hh + "px";
    clear(this.yaxis);
    clear(this.xaxis);
    this.xaxis.style.top = this.rowY(rows) + "px";
    this.xaxis.style.width = w + "px";
    // Geometry for tests and tools that drive the grid with a pointer.
    Object.assign(this.overlay.dataset, { cols: String(cols), rows: String(rows), cellW: String(cellW), cellH: String(cellH), top: String(TOP) });
    base.clearRect(0, 0, w, hh);
    return base;
  }

  overlayContext(): CanvasRenderingContext2D {
    const ctx = this.overlay.getContext("2d")!;
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, this.overlay.width, this.overlay.height);
    return ctx;
  }

  // drawXLabels writes labels under the columns with a tick on the canvas,
  // skipping labels that would collide. A label that would run past the
  // grid's right edge ends at the edge instead.
  drawXLabels(ctx: CanvasRenderingContext2D, label: (col: number) => string, minGap = 44): void {
    ctx.font = AXIS_FONT;
    ctx.fillStyle = axisInk();
    const gw = this.gridWidth();
    let lastEnd = -Infinity;
    const step = Math.max(1, Math.ceil(minGap / Math.max(this.cellW, 0.01)));
    const nice = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000].find((s) => s >= step) || step;
    for (let c = 0; c < this.cols; c += nice) {
      const x = this.colX(c);
      const t = label(c);
      const w = Math.ceil(ctx.measureText(t).width) + 2;
      const left = Math.min(x, gw - w);
      if (left < lastEnd + 6 || left < 0) continue;
      ctx.fillRect(x, this.rowY(this.rows), 1, 3);
      const span = h("span", { text: t });
      span.style.left = left + "px";
      this.xaxis.append(span);
      lastEnd = left + w;
    }
  }

  // drawYLabels writes labels at display-row boundaries on the y axis.
  drawYLabels(marks: { row: number; text: string }[], title: string): void {
    let last = -Infinity;
    for (const m of marks) {
      const y = this.rowY(m.row);
      if (Math.abs(y - last) < 12) continue;
      const span = h("span", { class: "ylabel", text: m.text });
      span.style.top = Math.min(Math.max(y, 8), this.rowY(this.rows)) + "px";
      this.yaxis.append(span);
      last = y;
    }
    const t = h("span", { class: "ytitle", text: title });
    t.style.top = this.rowY(this.rows) + 4 + "px";
    this.yaxis.append(t);
  }
}

// AXIS_FONT is the axis labels' font, as app.css sets it for .grid-xaxis.
const AXIS_FONT = "10px system-ui, sans-serif";

// axisInk is the colour of the ticks drawn on the canvas: the axis text's.
function axisInk(): string {
  return getComputedStyle(document.documentElement).getPropertyValue("--axis").trim() || "#555";
}

// legend draws a colour ramp with its end labels into a small canvas.
export function legend(color: (t: number) => string, lo: string, hi: string, title: string): HTMLElement {
  const c = h("canvas", { class: "legend-ramp" });
  const ctx = setupCanvas(c, 120, 10);
  for (let x = 0; x < 120; x++) {
    ctx.fillStyle = color(x / 119);
    ctx.fillRect(x, 0, 1, 10);
  }
  return h(
    "span",
    { class: "legend", attrs: { "data-testid": "legend" } },
    h("span", { class: "legend-title", text: title }),
    h("span", { class: "legend-lo", text: lo }),
    c,
    h("span", { class: "legend-hi", text: hi }),
  );
}

// SelectHandlers hear what a CellSelect does.
export interface SelectHandlers {
  // changed: the selection runs from cell a to cell b (in either order).
  changed(a: Cell, b: Cell): void;
  // done: the user released a drag, or clicked the last cell.
  done(a: Cell, b: Cell): void;
  // cancelled: Esc, or a new selection replaced an unfinished one.
  cancelled(): void;
}

type SelectMode = "idle" | "drag" | "second" | "keys";

// CellSelect is the one way both maps select cells: drag from the first
// cell to the last, or click the first and then the last (FlameScope's
// click-click); Esc cancels a selection in progress.
export class CellSelect {
  private mode: SelectMode = "idle";
  private anchor: Cell | null = null;
  private current: Cell | null = null;
  private moved = false; // the drag left its first cell

  constructor(private h: SelectHandlers) {
    document.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape" && this.active()) {
        this.cancel();
        ev.preventDefault();
      }
    });
  }

  // active reports whether a selection is in progress.
  active(): boolean {
    return this.mode !== "idle";
  }

  // waiting reports whether the first cell was clicked and the last is awaited.
  waiting(): boolean {
    return this.mode === "second";
  }

  cancel(): void {
    this.mode = "idle";
    this.anchor = this.current = null;
    this.h.cancelled();
  }

  // key follows the grid's keyboard: "move" leaves a selection made with
  // the keys, "extend" selects from where the cursor was to c, "enter"
  // opens the selection, or the cursor's cell alone when there is none.
  key(action: "move" | "extend" | "enter", c: Cell, from: Cell | null): void {
    switch (action) {
      case "move":
        if (this.mode === "keys") this.cancel();
        return;
      case "extend":
        if (this.mode !== "keys") {
          this.mode = "keys";
          this.anchor = from ?? c;
        }
        this.current = c;
        this.h.changed(this.anchor!, c);
        return;
      case "enter": {
        const a = this.mode === "keys" || this.mode === "second" ? this.anchor! : c;
        const b = this.mode === "keys" ? this.current! : c;
        this.mode = "idle";
        this.anchor = this.current = null;
        this.h.done(a, b);
      }
    }
  }

  down(c: Cell): void {
    if (this.mode === "second" && this.anchor) {
      this.current = c;
      this.h.changed(this.anchor, c);
      return;
    }
    this.mode = "drag";
    this.moved = false;
    this.anchor = this.current = c;
    this.h.changed(c, c);
  }

  // move follows the pointer; it returns false when no selection is in
  // progress (the pointer only hovers).
  move(c: Cell, buttons: number): boolean {
    if (!this.anchor || this.mode === "idle") return false;
    if (this.mode === "drag" && (buttons & 1) === 0) return false;
    if (!this.current || c.col !== this.current.col || c.row !== this.current.row) {
      this.current = c;
      this.moved = true;
      this.h.changed(this.anchor, c);
    }
    return true;
  }

  up(c: Cell): void {
    const a = this.anchor;
    if (!a) return;
    if (this.mode === "drag" && !this.moved && c.col === a.col && c.row === a.row) {
      // A click without a drag waits for the last cell.
      this.mode = "second";
      this.current = c;
      this.h.changed(a, c);
      return;
    }
    this.mode = "idle";
    this.anchor = this.current = null;
    this.h.done(a, c);
  }
}

// mapHandlers are the handlers of a map's grid (the heatmap's, the cores
// map's) once its data is ready: the pointer and the keys drive the
// selection; the pointer's moves and leaving go to the map (its tooltip);
// an arrow without Shift reads out the cursor's cell (from describe) in the
// map's status line before the overlay is redrawn.
export function mapHandlers(view: {
  ready(): boolean;
  sel: CellSelect;
  status: HTMLElement;
  describe(c: Cell): string[];
  redraw(): void;
  move(c: Cell, ev: PointerEvent): void;
  leave(): void;
}): GridHandlers {
  return {
    down: (c) => {
      if (view.ready()) view.sel.down(c);
    },
    move: (c, ev) => view.move(c, ev),
    up: (c) => {
      if (view.ready()) view.sel.up(c);
    },
    leave: () => view.leave(),
    key: (action, c, from) => {
      if (!view.ready()) return;
      view.sel.key(action, c, from);
      if (action === "move") {
        view.status.classList.remove("hint");
        view.status.textContent = view.describe(c).join(" · ");
      }
      view.redraw();
    },
  };
}
