// The host page's command shares: the CPU share of one command across the
// night drawn as a line over its usual level, under the map's time axis
// (nightaxis.ts), and the commands whose share jumps furthest, each a link
// that draws its own. The command is the URL's comm, else the one that
// jumps furthest.

import { getJSON } from "./api";
import { withQuery } from "./links";
import { clear, h, setupCanvas } from "./dom";
import { fmtMillis, fmtPct } from "./format";
import { drawAxis, wallTicks } from "./nightaxis";
import { fmtWall, LABEL_W } from "./nightmap";
import { currentParams, updateURL } from "./state";
import { fmtISO } from "./wallclock";
import type { CommReport, NightGrid } from "./wire";

export interface CommSharesOptions {
  host: string; // the host shown
  input: HTMLInputElement | null; // the command's field
  list: HTMLElement | null; // the field's datalist
  jumps: HTMLElement | null; // the list of the commands that jump
  width: () => number; // the map's width, which the line spans
  onError: (e: unknown) => void;
}

// CommShares draws into box (none: it only keeps the URL's comm); its state
// is the grid whose range it follows, set by load.
export class CommShares {
  private grid: NightGrid | null = null;

  constructor(
    private box: HTMLElement | null,
    private opt: CommSharesOptions,
  ) {
    const input = opt.input;
    input?.addEventListener("change", () => {
      updateURL({ comm: input.value.trim() || null }, false);
      void this.load(this.grid);
    });
  }

  // load fetches and draws the shares over g's range and buckets.
  async load(g: NightGrid | null): Promise<void> {
    this.grid = g;
    const { host, input, list, jumps, onError } = this.opt;
    if (!g || !this.box) return;
    const p = currentParams();
    const q = new URLSearchParams({ from: fmtISO(g.from_ns), to: fmtISO(g.to_ns), bucket: fmtMillis(g.bucket_ns), limit: "10" });
    const comm = p.get("comm") || "";
    // Without a command, the answer follows the one that jumps furthest.
    if (comm) q.set("comm", comm);
    try {
      const rep = await getJSON<CommReport>(withQuery("commsAPI", q, host));
      if (input) input.value = rep.comm || comm;
      if (list) {
        clear(list);
        for (const j of rep.jumps) list.append(h("option", { attrs: { value: j.comm } }));
      }
      if (jumps) {
        clear(jumps);
        for (const j of rep.jumps) {
          const a = h("a", { text: j.comm, attrs: { href: "#", "data-comm": j.comm } });
          a.addEventListener("click", (ev) => {
            ev.preventDefault();
            updateURL({ comm: j.comm }, false);
            void this.load(this.grid);
          });
          jumps.append(h("li", { attrs: { "data-testid": "night-jump" } }, a, ` ${fmtPct(j.peak)} at ${fmtWall(j.peak_at_ns, false)}, usually ${fmtPct(j.baseline)}`));
        }
      }
      this.draw(this.box, rep);
    } catch (e) {
      onError(e);
    }
  }

  private draw(box: HTMLElement, rep: CommReport): void {
    clear(box);
    const series = rep.series || [];
    const c = h("canvas", { attrs: { "data-testid": "night-commcanvas", "aria-hidden": "true" } });
    const yaxis = h("div", { class: "night-yaxis", attrs: { "aria-hidden": "true" } });
    const xaxis = h("div", { class: "night-xaxis", attrs: { "data-testid": "night-commaxis", "aria-hidden": "true" } });
    box.append(c, yaxis, xaxis);
    const w = this.opt.width();
    const hgt = 90;
    const ctx = setupCanvas(c, w, hgt);
    let top = rep.baseline * 2;
    for (const v of series) if (v !== null && v > top) top = v;
    top = top || 0.01;
    const x = (b: number) => LABEL_W + ((b + 0.5) / rep.buckets) * (w - LABEL_W);
    const y = (v: number) => hgt - 4 - (v / top) * (hgt - 12);
    // The share axis: its top and 0, text in the page like the map's.
    for (const [v, text] of [
      [top, fmtPct(top)],
      [0, "0%"],
    ] as const) {
      const el = h("span", { text });
      el.style.top = Math.min(hgt - 12, Math.max(0, y(v) - 6)) + "px";
      yaxis.append(el);
    }
    // The time axis: the map's ticks over the same range.
    const g = this.grid;
    if (g) {
      const span = rep.buckets * rep.bucket_ns;
      const tx = (t: number) => LABEL_W + ((t - rep.from_ns) / span) * (w - LABEL_W);
      const ticks = wallTicks(g.from_ns, g.to_ns, w - LABEL_W, new Set(g.captures.map((c) => c.session)).size > 1);
      ctx.strokeStyle = getComputedStyle(box).getPropertyValue("--fg2").trim() || "#4b5361";
      for (const t of ticks) {
        const px = Math.round(tx(t.ns)) + 0.5;
        ctx.beginPath();
        ctx.moveTo(px, hgt - 4);
        ctx.lineTo(px, hgt);
        ctx.stroke();
      }
      xaxis.style.width = w + "px";
      drawAxis(xaxis, ticks, tx);
    }
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
}
