// The toolbar above a flame graph: reset zoom, flame or icicle, for a
// differential graph the target's or the baseline's shape, the graph's
// counts, the zoomed frame and the colours' legend.

import { diffColor, frameColor, KIND_STYLE } from "./colors";
import { h } from "./dom";
import type { Shape } from "./flame";
import { swatch } from "./toptable";
import { SIGNIFICANT_Z } from "./wire";

export interface FlameToolbarOptions {
  diff: boolean; // a differential graph: shape buttons and the diff legend
  onView: (icicle: boolean) => void; // flame or icicle was clicked
  onShape: (shape: Shape) => void; // a shape was clicked
  onReset: () => void; // reset zoom was clicked
}

// FlameToolbar shows the state its owner sets (showView, showShape,
// showZoom, setSummary) and reports clicks through its options.
export class FlameToolbar {
  readonly el: HTMLElement;
  private reset = h("button", { class: "btn", text: "Reset zoom", attrs: { type: "button", "data-testid": "reset-zoom" } });
  private flameBtn = h("button", { class: "seg", text: "Flame", attrs: { type: "button", "data-testid": "view-flame" } });
  private icicleBtn = h("button", { class: "seg", text: "Icicle", attrs: { type: "button", "data-testid": "view-icicle" } });
  private crumb = h("span", { class: "zoom-crumb", attrs: { "data-testid": "zoom-path" } });
  private summary = h("span", { class: "flame-summary", attrs: { "data-testid": "flame-summary" } });
  // A differential graph is drawn with the target's or the baseline's widths.
  private targetBtn = h("button", { class: "seg", text: "Target shape", attrs: { type: "button", "data-testid": "shape-target", title: "widths of the selected range; frames gone since the baseline at their baseline width" } });
  private baseBtn = h("button", { class: "seg", text: "Baseline shape", attrs: { type: "button", "data-testid": "shape-base", title: "widths of the baseline; frames new in the selected range at their width there" } });

  constructor(opt: FlameToolbarOptions) {
    const diff = opt.diff;
    this.el = h(
      "div",
      { class: "flame-toolbar" },
      this.reset,
      h("span", { class: "segmented" }, this.flameBtn, this.icicleBtn),
      diff ? h("span", { class: "segmented", attrs: { "data-testid": "diff-shape" } }, this.targetBtn, this.baseBtn) : null,
      this.summary,
      this.crumb,
      diff ? diffLegend() : kindLegend(),
      h("span", { class: "muted keys", text: "click a frame to zoom · Esc: zoom out · /: search" }),
    );
    this.flameBtn.addEventListener("click", () => opt.onView(false));
    this.icicleBtn.addEventListener("click", () => opt.onView(true));
    this.targetBtn.addEventListener("click", () => opt.onShape("target"));
    this.baseBtn.addEventListener("click", () => opt.onShape("base"));
    this.reset.addEventListener("click", () => opt.onReset());
  }

  setSummary(text: string): void {
    this.summary.textContent = text;
  }

  showView(icicle: boolean): void {
    this.flameBtn.classList.toggle("on", !icicle);
    this.icicleBtn.classList.toggle("on", icicle);
    this.flameBtn.setAttribute("aria-pressed", String(!icicle));
    this.icicleBtn.setAttribute("aria-pressed", String(icicle));
  }

  showShape(shape: Shape): void {
    this.targetBtn.classList.toggle("on", shape === "target");
    this.baseBtn.classList.toggle("on", shape === "base");
    this.targetBtn.setAttribute("aria-pressed", String(shape === "target"));
    this.baseBtn.setAttribute("aria-pressed", String(shape === "base"));
  }

  // showZoom names the frame zoomed to, with its path as the title; name
  // "" for the whole graph.
  showZoom(name: string, path: string): void {
    this.crumb.textContent = name ? "Zoomed: " + name : "";
    this.crumb.title = path;
    this.reset.disabled = !name;
  }
}

function kindLegend(): HTMLElement {
  const items = ["user", "kernel", "jit", "inlined"].map((k) =>
    h("span", { class: "key" }, swatch(frameColor(k, "a")), KIND_STYLE[k].label),
  );
  return h("span", { class: "kind-legend", attrs: { "data-testid": "kind-legend" } }, ...items);
}

function diffLegend(): HTMLElement {
  return h(
    "span",
    { class: "kind-legend", attrs: { "data-testid": "diff-legend" } },
    h("span", { class: "key" }, swatch(diffColor(1)), "grew"),
    h("span", { class: "key" }, swatch(diffColor(-1)), "shrank"),
    h("span", { class: "key" }, swatch(diffColor(0)), "no significant change"),
    h("span", { class: "key muted", text: `(shares of each range's total; deeper colour, surer change: |z| ≥ ${SIGNIFICANT_Z})` }),
  );
}
