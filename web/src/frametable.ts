// FrameTable is the flame graph as a table, for screen readers and for
// copying: the frames of the zoomed subtree in the order drawn, each with
// its depth below the zoomed frame, samples, self samples and share. It is
// built when opened and follows the zoom.

import { clear, h } from "./dom";
import { fmtInt, fmtPct } from "./format";
import type { Tree } from "./flame";

// ROWS bounds the rows listed; frames under MIN_SHARE of the view are left
// out, as the graph leaves out frames under half a pixel.
const ROWS = 500;
const MIN_SHARE = 0.001;

export class FrameTable {
  readonly el: HTMLDetailsElement;
  private body: HTMLElement;
  private scope = 0;

  constructor(private tree: Tree) {
    this.body = h("div", { class: "frame-table-body" });
    this.el = h("details", { class: "frame-table", attrs: { "data-testid": "frame-table" } }, h("summary", { text: "The flame graph as a table" }), this.body);
    this.el.addEventListener("toggle", () => {
      if (this.el.open) this.render();
    });
  }

  // setScope lists node z's subtree (the zoomed frame's).
  setScope(z: number): void {
    this.scope = z;
    if (this.el.open) this.render();
  }

  private render(): void {
    const t = this.tree;
    const d = t.d;
    const z = this.scope;
    const total = d.total_n[z] || 1;
    const base = d.depth[z];
    const rows: HTMLElement[] = [];
    let left = 0;
    for (let i = z; i < t.end[z]; ) {
      if (d.total_n[i] / total < MIN_SHARE) {
        left += t.end[i] - i;
        i = t.end[i];
        continue;
      }
      if (rows.length === ROWS) {
        left += t.end[z] - i;
        break;
      }
      const depth = d.depth[i] - base;
      const name = h("th", { attrs: { scope: "row" }, text: t.name(i) || "(unnamed)" });
      name.style.paddingLeft = `${8 + depth * 12}px`;
      rows.push(
        h(
          "tr",
          null,
          name,
          h("td", { class: "num", text: String(depth) }),
          h("td", { class: "num", text: fmtInt(d.total_n[i]) }),
          h("td", { class: "num", text: fmtInt(d.self_n[i]) }),
          h("td", { class: "num", text: fmtPct(d.total_n[i] / total) }),
        ),
      );
      i++;
    }
    const caption = h("caption", {
      text: `Frames of ${z ? t.name(z) : "all samples"} in drawing order, each below its caller${left ? `; ${fmtInt(left)} smaller frames left out` : ""}`,
    });
    const head = h(
      "thead",
      null,
      h(
        "tr",
        null,
        h("th", { attrs: { scope: "col" }, text: "Frame" }),
        h("th", { class: "num", attrs: { scope: "col" }, text: "Depth" }),
        h("th", { class: "num", attrs: { scope: "col" }, text: "Samples" }),
        h("th", { class: "num", attrs: { scope: "col" }, text: "Self" }),
        h("th", { class: "num", attrs: { scope: "col" }, text: "Share" }),
      ),
    );
    clear(this.body);
    this.body.append(h("table", { attrs: { "data-testid": "frame-table-rows" } }, caption, head, h("tbody", null, ...rows)));
  }
}
