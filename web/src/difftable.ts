// The table under a differential flame graph: every function with its self
// and total samples in the baseline and the target, the change of each in
// percentage points of its side's total, and whether the change in total is
// significant (a two-proportion z-score, computed by the server). Rows come
// sorted by the size of the change in total; headers re-sort.

import { diffColor } from "./colors";
import { clear, h } from "./dom";
import { fmtInt } from "./format";
import { diffIntensity } from "./flame";
import { type FunctionChange, type FunctionTable, SIGNIFICANT_Z } from "./wire";

// SortKey is a column: a field of the server's rows (flame.Function).
type SortKey = keyof Pick<FunctionChange, "name" | "base_self" | "self" | "self_delta_pts" | "base_total" | "total" | "total_delta_pts" | "z">;

const COLUMNS: { key: SortKey; label: string; title: string }[] = [
  { key: "name", label: "Function", title: "function and DSO" },
  { key: "base_self", label: "Self before", title: "baseline samples with the function as the leaf" },
  { key: "self", label: "Self after", title: "target samples with the function as the leaf" },
  { key: "self_delta_pts", label: "Δ self pts", title: "change in self share, percentage points" },
  { key: "base_total", label: "Total before", title: "baseline samples whose stack holds the function" },
  { key: "total", label: "Total after", title: "target samples whose stack holds the function" },
  { key: "total_delta_pts", label: "Δ total pts", title: "change in total share, percentage points" },
  { key: "z", label: "z", title: `two-proportion z-score of the change in total share; |z| ≥ ${SIGNIFICANT_Z} is significant` },
];

// ROW_LIMIT bounds the rows drawn; the rest are a sort away.
const ROW_LIMIT = 300;

export class DiffTable {
  private tbl = h("table", { class: "top-functions diff-functions", attrs: { "data-testid": "diff-functions" } });
  private key: SortKey = "total_delta_pts";
  private desc = true;

  constructor(
    box: HTMLElement,
    private table: FunctionTable,
    private onSearch: (name: string) => void,
  ) {
    clear(box);
    const sig = table.functions.filter((f) => f.significant).length;
    box.append(
      h("p", {
        class: "muted",
        attrs: { "data-testid": "diff-functions-summary" },
        text: `${fmtInt(table.functions.length)} functions, ${fmtInt(sig)} with a significant change (|z| ≥ ${SIGNIFICANT_Z}); baseline ${fmtInt(table.base_total ?? 0)} samples, target ${fmtInt(table.total)}. Click a row to find it in the graph.`,
      }),
      h("div", { class: "top-scroll" }, this.tbl),
    );
    this.render();
  }

  private value(f: FunctionChange, k: SortKey): number {
    // Sizes of change sort by magnitude, whichever way they went.
    if (k === "self_delta_pts" || k === "total_delta_pts" || k === "z") return Math.abs(f[k]);
    return k === "name" ? 0 : f[k];
  }

  private render(): void {
    clear(this.tbl);
    const head = h("tr");
    for (const c of COLUMNS) {
      const sort = h("button", { class: "sort", text: c.label, attrs: { type: "button", title: c.title } });
      const th = h("th", { class: c.key === "name" ? "" : "num", attrs: { scope: "col", "data-sort": c.key } }, sort);
      if (c.key === this.key) {
        th.classList.add("sorted");
        th.setAttribute("aria-sort", this.desc ? "descending" : "ascending");
      }
      sort.addEventListener("click", () => {
        if (this.key === c.key) this.desc = !this.desc;
        else {
          this.key = c.key;
          this.desc = c.key !== "name";
        }
        this.render();
      });
      head.append(th);
    }
    const rows = this.table.functions.slice().sort((a, b) => {
      const byName = a.name.localeCompare(b.name) || a.dso.localeCompare(b.dso);
      const v = this.key === "name" ? byName : this.value(a, this.key) - this.value(b, this.key);
      return (this.desc ? -v : v) || byName;
    });
    const body = h("tbody");
    for (const f of rows.slice(0, ROW_LIMIT)) body.append(this.row(f));
    this.tbl.append(h("thead", null, head), body);
  }

  private row(f: FunctionChange): HTMLElement {
    const pts = (v: number) => (v > 0 ? "+" : "") + v.toFixed(2);
    const cue = h("span", { class: "swatch" });
    cue.style.background = diffColor(Math.sign(f.z) * diffIntensity(f.z));
    const gone = f.total === 0 ? "gone" : f.base_total === 0 ? "new" : "";
    const tr = h(
      "tr",
      { class: f.significant ? "significant" : "not-significant", attrs: { tabindex: "0", "data-change": gone || (f.significant ? (f.z > 0 ? "grew" : "shrank") : "noise") } },
      h("td", { class: "fn" }, h("span", { class: "fn-cell" }, cue, h("span", { class: "fn-name", text: f.name }), f.dso ? h("span", { class: "dso", text: " " + f.dso }) : null, gone ? h("span", { class: "badge", text: " " + gone }) : null)),
      h("td", { class: "num", text: fmtInt(f.base_self) }),
      h("td", { class: "num", text: fmtInt(f.self) }),
      h("td", { class: "num", text: pts(f.self_delta_pts) }),
      h("td", { class: "num", text: fmtInt(f.base_total) }),
      h("td", { class: "num", text: fmtInt(f.total) }),
      h("td", { class: "num", text: pts(f.total_delta_pts) }),
      h("td", { class: "num", text: f.significant ? f.z.toFixed(1) : `${f.z.toFixed(1)} (noise)` }),
    );
    const pick = () => this.onSearch(f.name);
    tr.addEventListener("click", pick);
    tr.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") pick();
    });
    return tr;
  }
}
