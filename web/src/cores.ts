// The cores map: one row per CPU, one column per bucket of time, colour by the
// CPU's busy fraction, so that one pegged core among many stands out.
// Dragging selects a block of CPUs and a time range.

import { busyColor, EMPTY_CELL } from "./colors";
import { clear, fmtInt, fmtPct, h, Tooltip } from "./dom";
import { type Cell, Grid, legend } from "./grid";
import { cpuList, fmtDuration, fmtSeconds, fmtTick } from "./state";
import type { CoresJSON } from "./types";

// busyScale spends most of the colour ramp on the top of the range: on a busy
// host most cores sit at 60–90%, and a core pegged at 100% must still stand
// out among them.
export function busyScale(v: number): number {
  return Math.pow(Math.min(1, Math.max(0, v)), 2.5);
}

// autoBucket returns the cores-map bucket, in seconds, for a capture of
// durNs on a map availPx wide: the finest of the usual widths that keeps each
// bucket at least 2 px wide, and no finer than 0.1 s.
export function autoBucket(durNs: number, availPx: number): string {
  const nice = [0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60];
  const maxBuckets = Math.max(1, Math.floor(availPx / 2));
  const pick = nice.find((b) => durNs / (b * 1e9) <= maxBuckets);
  return String(pick ?? 60);
}

export interface CoresSelection {
  cpus: number[];
  startNs: number; // offset from T0
  endNs: number;
  samples: number;
}

export interface CoresOptions {
  originNs: number;
  onSelect(sel: CoresSelection): void;
}

export class CoresView {
  readonly el: HTMLElement;
  private grid: Grid;
  private status: HTMLElement;
  private tip = new Tooltip();
  private data: CoresJSON | null = null;
  private a: Cell | null = null;
  private b: Cell | null = null;

  constructor(
    private container: HTMLElement,
    private opt: CoresOptions,
  ) {
    this.grid = new Grid("cores-canvas", {
      down: (c) => {
        this.a = this.b = c;
        this.drawOverlay();
        this.label();
      },
      move: (c, ev) => this.move(c, ev),
      up: (c) => this.up(c),
      leave: () => this.tip.hide(),
    });
    this.status = h("span", { class: "selection-label hint", attrs: { "data-testid": "cores-selection" } });
    this.status.textContent = "Drag to select CPUs and a time range.";
    const head = h(
      "div",
      { class: "panel-head" },
      legend((t) => busyColor(busyScale(t)), "0%", "100%", "busy"),
      this.status,
    );
    this.el = h("div", { class: "panel cores-panel" }, head, this.grid.el);
    clear(container);
    container.append(this.el);
  }

  setData(d: CoresJSON): void {
    this.data = d;
    this.a = this.b = null;
    this.render();
  }

  showError(msg: string): void {
    this.data = null;
    clear(this.grid.el);
    this.grid.el.append(h("p", { class: "error", text: msg }));
  }

  render(): void {
    const d = this.data;
    if (!d) return;
    const g = this.grid;
    if (!g.el.contains(g.scroller)) {
      clear(g.el);
      g.el.append(g.yaxis, g.scroller);
    }
    const n = d.cpus.length;
    const avail = g.availableWidth(this.container);
    const cellW = Math.max(1, Math.min(16, avail / Math.max(1, d.buckets)));
    const cellH = Math.min(14, Math.max(2, Math.floor(384 / Math.max(1, n))));
    const { base, axis } = g.layout(d.buckets, n, cellW, cellH);
    const palette: string[] = [];
    for (let i = 0; i < 256; i++) palette.push(busyColor((i + 1) / 256));
    const gap = cellH >= 6 ? 1 : 0;
    for (let r = 0; r < n; r++) {
      const busy = d.busy[r] || [];
      const y = g.rowY(r);
      for (let b = 0; b < d.buckets; b++) {
        const v = busy[b] || 0;
        base.fillStyle = v > 0 ? palette[Math.min(255, Math.floor(busyScale(v) * 255.999))] : EMPTY_CELL;
        const x = g.colX(b);
        base.fillRect(x, y, g.colX(b + 1) - x, cellH - gap);
      }
    }
    const shift = d.t0_ns - this.opt.originNs;
    g.drawXLabels(base, (b) => fmtTick(shift + b * d.bucket_ns, d.bucket_ns), 40);
    g.drawYLabels(
      axis,
      d.cpus.map((cpu, r) => ({ row: r + 0.5, text: String(cpu) })),
      "CPU",
    );
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
    for (let r = q.r1; r <= q.r2; r++) for (let b = q.b1; b <= q.b2; b++) n += (d.samples[r] || [])[b] || 0;
    return {
      cpus: d.cpus.slice(q.r1, q.r2 + 1),
      startNs: shift + q.b1 * d.bucket_ns,
      endNs: shift + (q.b2 + 1) * d.bucket_ns,
      samples: n,
    };
  }

  private move(c: Cell, ev: PointerEvent): void {
    const d = this.data;
    if (!d) return;
    if (this.a && (ev.buttons & 1) === 1) {
      this.b = c;
      this.drawOverlay();
      this.label();
      this.tip.hide();
      return;
    }
    if (!c.inside) return this.tip.hide();
    const shift = d.t0_ns - this.opt.originNs;
    const s = shift + c.col * d.bucket_ns;
    this.tip.show(ev, [
      `CPU ${d.cpus[c.row]}`,
      `${fmtSeconds(s, 1e8)}–${fmtSeconds(s + d.bucket_ns, 1e8)} s`,
      `busy ${fmtPct((d.busy[c.row] || [])[c.col] || 0)} · ${fmtInt((d.samples[c.row] || [])[c.col] || 0)} samples`,
    ]);
  }

  private up(c: Cell): void {
    if (!this.a) return;
    this.b = c;
    const sel = this.selection();
    this.drawOverlay();
    this.label();
    this.a = this.b = null;
    if (sel) this.opt.onSelect(sel);
  }

  private label(): void {
    const s = this.selection();
    if (!s) return;
    this.status.classList.remove("hint");
    this.status.textContent = `CPU ${cpuList(s.cpus)} · ${fmtSeconds(s.startNs, 1e8)}–${fmtSeconds(s.endNs, 1e8)} s (${fmtDuration(s.endNs - s.startNs)}) · ${fmtInt(s.samples)} samples`;
  }

  private drawOverlay(): void {
    const g = this.grid;
    const ctx = g.overlayContext();
    const q = this.rect();
    if (!q) return;
    const x = g.colX(q.b1);
    const y = g.rowY(q.r1);
    const w = g.colX(q.b2 + 1) - x;
    const hh = g.rowY(q.r2 + 1) - y;
    ctx.fillStyle = "rgba(230, 120, 20, 0.3)";
    ctx.fillRect(x, y, w, hh);
    ctx.strokeStyle = "rgba(200, 90, 0, 0.95)";
    ctx.strokeRect(x + 0.5, y + 0.5, Math.max(1, w - 1), Math.max(1, hh - 1));
  }
}
