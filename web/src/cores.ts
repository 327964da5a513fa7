// The cores map: one row per CPU, one column per bucket of time. A cell's
// lightness is the CPU's busy fraction and its hue the system (kernel) share
// of that time, user blue to system red, so that one core pegged in the
// kernel stands out among cores that training threads keep busy in user
// mode. measure=system in the URL shows the system fraction alone.
// Dragging, or clicking the first cell and then the last, selects a block of
// CPUs and a time range, as on the offset heatmap.

import { coreColor, emptyCell, systemColor, userColor } from "./colors";
import { clear, h, Tooltip } from "./dom";
import { cpuList, displayRange, fmtInt, fmtPct } from "./format";
import { type Cell, CellSelect, Grid, legend, mapHandlers } from "./grid";
import { updateURL } from "./state";
import type { CoresJSON } from "./wire";
import { axis, type Clock } from "./wallclock";

// busyScale spends most of the colour ramp on the top of the range: on a busy
// host most cores sit at 60–90%, and a core pegged at 100% must still stand
// out among them.
export function busyScale(v: number): number {
  return Math.pow(Math.min(1, Math.max(0, v)), 2.5);
}

// Measure is what shades a cell: "busy" (busy fraction, hue by system share)
// or "system" (system fraction alone). The URL parameter is "measure", as for
// the CLI's --measure (heatmap.CoresParams).
export type Measure = "busy" | "system";

export const MEASURE_PARAM = "measure";

export function measureOf(p: URLSearchParams): Measure {
  return p.get(MEASURE_PARAM) === "system" ? "system" : "busy";
}

// SHARE_STEPS quantises the system share for the palette.
const SHARE_STEPS = 32;

// autoBucket returns the cores-map bucket, in seconds, for a capture of
// durNs on a map availPx wide: the finest of the usual widths that keeps each
// bucket at least 2 px wide, and no finer than 0.1 s.
export function autoBucket(durNs: number, availPx: number): string {
  const nice = [0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60];
  const maxBuckets = Math.max(1, Math.floor(availPx / 2));
  const pick = nice.find((b) => durNs / (b * 1e9) <= maxBuckets);
  return String(pick ?? 60);
}

// DrawnCores is a cores map with at least one CPU row.
export type DrawnCores = CoresJSON & { cpus: number[] };

export interface CoresSelection {
  cpus: number[];
  startNs: number; // offset from T0
  endNs: number;
  samples: number;
  busy: number; // mean busy fraction of the selected cells
  system: number; // mean system fraction of the selected cells
}

export interface CoresOptions {
  originNs: number;
  clock?: Clock; // the profile's wall clock, for times of day
  onSelect(sel: CoresSelection): void;
  // onMeasure is told when the user switches the measure (the URL already
  // holds it): the hot spots beside the map measure the same.
  onMeasure?(m: Measure): void;
  // onDrawn is told when the cells have moved or been drawn again (new
  // data, a new width, a scroll sideways): what lies under the map on its
  // time axis (the lanes) follows its placement.
  onDrawn?(): void;
}

// CoresPlacement is where a drawn cores map's columns are on the screen:
// column b's left edge at client x x0 + b × cellW, the columns in view
// between client x left and right (the grid scrolls sideways when they do
// not fit), rows rowH px tall.
export interface CoresPlacement {
  data: DrawnCores;
  x0: number;
  cellW: number;
  left: number;
  right: number;
  rowH: number;
}

export class CoresView {
  readonly el: HTMLElement;
  private grid: Grid;
  private status: HTMLElement;
  private load: HTMLElement;
  private legendEl: HTMLElement;
  private measureEl: HTMLSelectElement;
  private measure: Measure = "busy";
  private tip = new Tooltip();
  private data: DrawnCores | null = null;
  private a: Cell | null = null; // the selection's corner cells
  private b: Cell | null = null;
  private sel: CellSelect;

  constructor(
    private container: HTMLElement,
    private opt: CoresOptions,
  ) {
    this.sel = new CellSelect({
      changed: (a, b) => {
        this.a = a;
        this.b = b;
        this.drawOverlay();
        this.label();
      },
      done: (a, b) => {
        this.a = a;
        this.b = b;
        const sel = this.selection();
        this.drawOverlay();
        this.label();
        if (sel) this.opt.onSelect(sel);
      },
      cancelled: () => {
        this.a = this.b = null;
        this.drawOverlay();
        this.hint();
      },
    });
    this.status = h("span", { class: "selection-label hint", attrs: { "data-testid": "cores-selection", "aria-live": "polite" } });
    this.load = h("span", { class: "selection-load", attrs: { "data-testid": "cores-selection-load" } });
    this.grid = new Grid(
      "cores-canvas",
      mapHandlers({
        ready: () => !!this.data,
        sel: this.sel,
        status: this.status,
        describe: (c) => {
          this.load.textContent = "";
          return this.describe(c);
        },
        redraw: () => this.drawOverlay(),
        move: (c, ev) => this.move(c, ev),
        leave: () => this.tip.hide(),
      }),
    );
    this.grid.overlay.setAttribute("aria-label", "Cores map, one row per CPU: arrows move a cursor cell, Shift+arrows select CPUs and times, Enter opens their flame graph");
    this.legendEl = h("span", { class: "cores-legend", attrs: { "data-testid": "cores-legend" } });
    this.measureEl = h(
      "select",
      { attrs: { name: MEASURE_PARAM, "data-testid": "cores-measure", "aria-label": "cores-map colour" } },
      h("option", { attrs: { value: "busy" }, text: "busy, hue by system share" }),
      h("option", { attrs: { value: "system" }, text: "system only" }),
    );
    this.measureEl.addEventListener("change", () => {
      const m: Measure = this.measureEl.value === "system" ? "system" : "busy";
      updateURL({ [MEASURE_PARAM]: m === "busy" ? null : m }, true);
      this.setMeasure(m);
      this.opt.onMeasure?.(m);
    });
    const control = h(
      "label",
      { class: "cores-measure", attrs: { title: "what colours the cores map and what the hot spots measure (measure in the URL)" } },
      "measure ",
      this.measureEl,
    );
    // The selection and its load share one line of fixed height, so the grid
    // never moves during a drag.
    const line = h("div", { class: "selection-line" }, this.status, this.load);
    const head = h("div", { class: "panel-head" }, control, this.legendEl, line);
    this.drawLegend();
    this.hint();
    this.grid.scroller.addEventListener("scroll", () => this.opt.onDrawn?.(), { passive: true });
    this.el = h("div", { class: "panel cores-panel" }, head, this.grid.el);
    clear(container);
    container.append(this.el);
  }

  // restyle redraws legend and cells in the current colour scheme.
  restyle(): void {
    this.drawLegend();
    this.render();
  }

  // setMeasure chooses what shades the cells and redraws.
  setMeasure(m: Measure): void {
    this.measureEl.value = m;
    if (m === this.measure) return;
    this.measure = m;
    this.drawLegend();
    this.render();
  }

  private drawLegend(): void {
    clear(this.legendEl);
    this.legendEl.dataset.measure = this.measure;
    if (this.measure === "system") {
      this.legendEl.append(legend((t) => systemColor(busyScale(t)), "0%", "100%", "system (kernel leaf)"));
      return;
    }
    this.legendEl.append(
      legend((t) => userColor(busyScale(t)), "0%", "100%", "busy, user"),
      legend((t) => systemColor(busyScale(t)), "0%", "100%", "busy, system"),
    );
  }

  setData(d: DrawnCores): void {
    this.data = d;
    if (this.sel.active()) this.sel.cancel();
    this.a = this.b = null;
    this.render();
  }

  // mark shows every CPU of the map over [startNs, endNs), offsets from T0,
  // as the selection, as if it had been dragged but without opening it:
  // the range the page's link gave. A selection in progress is left alone.
  mark(startNs: number, endNs: number): void {
    const d = this.data;
    const shift = d ? d.t0_ns - this.opt.originNs : 0;
    if (!d || this.sel.active() || !(endNs > startNs) || endNs <= shift || startNs >= shift + d.buckets * d.bucket_ns) return;
    const col = (t: number) => Math.min(d.buckets - 1, Math.max(0, Math.floor((t - shift) / d.bucket_ns)));
    this.a = { col: col(startNs), row: 0, inside: true };
    this.b = { col: col(endNs - 1), row: d.cpus.length - 1, inside: true };
    this.drawOverlay();
    this.label();
  }

  // showMessage shows msg in place of the map: an error, or a note that no
  // samples match ("empty").
  showMessage(msg: string, kind: "error" | "empty" = "error"): void {
    this.data = null;
    this.grid.showMessage(msg, kind);
    this.opt.onDrawn?.();
  }

  // placement returns where the map's columns are on the screen now; null
  // when it shows no map.
  placement(): CoresPlacement | null {
    const d = this.data;
    if (!d || !this.grid.base.isConnected) return null;
    const g = this.grid;
    const view = g.scroller.getBoundingClientRect();
    return { data: d, x0: g.base.getBoundingClientRect().left, cellW: g.cellW, left: view.left, right: view.left + g.scroller.clientWidth, rowH: g.cellH };
  }

  render(): void {
    const d = this.data;
    if (!d) return;
    const g = this.grid;
    const n = d.cpus.length;
    const avail = g.availableWidth(this.container);
    const cellW = Math.max(1, Math.min(16, avail / Math.max(1, d.buckets)));
    const cellH = Math.min(14, Math.max(2, Math.floor(384 / Math.max(1, n))));
    const base = g.layout(d.buckets, n, cellW, cellH);
    this.grid.overlay.dataset.measure = this.measure;
    const sysMode = this.measure === "system";
    // Palettes: 64 lightness levels, × SHARE_STEPS + 1 hues in busy mode.
    const levels = 64;
    const palette: string[] = [];
    for (let i = 0; i < levels; i++) {
      const t = (i + 1) / levels;
      if (sysMode) palette.push(systemColor(t));
      else for (let j = 0; j <= SHARE_STEPS; j++) palette.push(coreColor(t, j / SHARE_STEPS));
    }
    const gap = cellH >= 6 ? 1 : 0;
    const empty = emptyCell();
    const sysRows = d.system || [];
    for (let r = 0; r < n; r++) {
      const busy = d.busy[r] || [];
      const sys = sysRows[r] || [];
      const y = g.rowY(r);
      for (let b = 0; b < d.buckets; b++) {
        const bv = busy[b] || 0;
        const sv = sys[b] || 0;
        const v = sysMode ? sv : bv;
        let fill = empty;
        if (v > 0) {
          const li = Math.min(levels - 1, Math.floor(busyScale(v) * (levels - 0.001)));
          if (sysMode) fill = palette[li];
          else fill = palette[li * (SHARE_STEPS + 1) + Math.round(Math.min(1, sv / bv) * SHARE_STEPS)];
        }
        base.fillStyle = fill;
        const x = g.colX(b);
        base.fillRect(x, y, g.colX(b + 1) - x, cellH - gap);
      }
    }
    const shift = d.t0_ns - this.opt.originNs;
    const x = axis(this.opt.clock, d.bucket_ns, 40);
    g.drawXLabels(base, (b) => x.label(shift + b * d.bucket_ns), x.gap);
    g.drawYLabels(
      d.cpus.map((cpu, r) => ({ row: r + 0.5, text: String(cpu) })),
      `CPU \u2191  ${x.unit} \u2192`,
    );
    this.opt.onDrawn?.();
  }

  private rect(): { r1: number; r2: number; b1: number; b2: number } | null {
    if (!this.a || !this.b) return null;
    return {
      r1: Math.min(this.a.row, this.b.row),
      r2: Math.max(this.a.row, this.b.row),
      b1: Math.min(this.a.col, this.b.col),
      b2: Math.max(this.a.col, this.b.col),
    };
  }

  private selection(): CoresSelection | null {
    const d = this.data;
    const q = this.rect();
    if (!d || !q) return null;
    const shift = d.t0_ns - this.opt.originNs;
    let n = 0;
    let busy = 0;
    let sys = 0;
    for (let r = q.r1; r <= q.r2; r++) {
      for (let b = q.b1; b <= q.b2; b++) {
        n += (d.samples[r] || [])[b] || 0;
        busy += (d.busy[r] || [])[b] || 0;
        sys += ((d.system || [])[r] || [])[b] || 0;
      }
    }
    const cells = (q.r2 - q.r1 + 1) * (q.b2 - q.b1 + 1);
    return {
      cpus: d.cpus.slice(q.r1, q.r2 + 1),
      startNs: shift + q.b1 * d.bucket_ns,
      endNs: shift + (q.b2 + 1) * d.bucket_ns,
      samples: n,
      busy: busy / cells,
      system: sys / cells,
    };
  }

  private move(c: Cell, ev: PointerEvent): void {
    const d = this.data;
    if (!d) return;
    if (this.sel.move(c, ev.buttons)) {
      this.tip.hide();
      return;
    }
    if (!c.inside) return this.tip.hide();
    this.tip.show(ev, this.describe(c));
  }

  // describe returns what cell c holds: its CPU, time and load.
  private describe(c: Cell): string[] {
    const d = this.data!;
    const s = d.t0_ns - this.opt.originNs + c.col * d.bucket_ns;
    return [
      `CPU ${d.cpus[c.row]}`,
      `${displayRange(s, s + d.bucket_ns)}${this.opt.clock?.suffix(s, s + d.bucket_ns) ?? ""}`,
      `busy ${fmtPct((d.busy[c.row] || [])[c.col] || 0)} · sys ${fmtPct(((d.system || [])[c.row] || [])[c.col] || 0)} · ${fmtInt((d.samples[c.row] || [])[c.col] || 0)} samples`,
    ];
  }

  private hint(): void {
    this.status.classList.add("hint");
    this.status.textContent = "Drag across cells, or click the first and then the last, to open a flame graph.";
    this.load.textContent = "";
  }

  private label(): void {
    const s = this.selection();
    if (!s) return;
    this.status.classList.remove("hint");
    const suffix = this.sel.waiting() ? " — click the last cell" : "";
    this.status.textContent = `CPU ${cpuList(s.cpus)} · ${displayRange(s.startNs, s.endNs)}${this.opt.clock?.suffix(s.startNs, s.endNs) ?? ""} · ${fmtInt(s.samples)} samples${suffix}`;
    this.load.textContent = `busy ${fmtPct(s.busy)} · sys ${fmtPct(s.system)}`;
  }

  private drawOverlay(): void {
    const g = this.grid;
    const ctx = g.overlayContext();
    const q = this.rect();
    if (!q) return g.drawCursor(ctx);
    const x = g.colX(q.b1);
    const y = g.rowY(q.r1);
    const w = g.colX(q.b2 + 1) - x;
    const hh = g.rowY(q.r2 + 1) - y;
    ctx.fillStyle = "rgba(230, 120, 20, 0.3)";
    ctx.fillRect(x, y, w, hh);
    ctx.strokeStyle = "rgba(200, 90, 0, 0.95)";
    ctx.strokeRect(x + 0.5, y + 0.5, Math.max(1, w - 1), Math.max(1, hh - 1));
    g.drawCursor(ctx);
  }
}
