// The top-functions table under a flame graph: self and total samples per
// function of what the graph shows (the zoomed frame's subtree), sortable by
// name, self or total, and the sandwich of the function picked: its merged
// callers above it and callees below, with the callers also as a list. The
// page keeps the picked function's name in its URL (sandwich).

import { frameColor } from "./colors";
import { $, clear, h } from "./dom";
import { fmtInt, fmtPct } from "./format";
import { type CallerNode, callers, type FunctionRow, topFunctions, type Tree } from "./flame";
import { Sandwich } from "./sandwich";

type SortKey = "name" | "self" | "total";

// ROW_LIMIT bounds the rows drawn; the rest are a sort away.
const ROW_LIMIT = 300;

export class TopTable {
  private tbl: HTMLTableElement;
  private scopeEl: HTMLElement;
  private callersBox: HTMLElement;
  private scope = 0;
  private rows: FunctionRow[] = [];
  private total = 1;
  private key: SortKey = "self";
  private desc = true;
  private picked: { name: number; dso: number } | null = null;
  private sandwich: Sandwich;
  private re: RegExp | null = null;

  constructor(
    top: HTMLElement,
    private tree: Tree,
    private onSearch: (name: string) => void,
    scope = 0,
    private onPick: (name: string) => void = () => {},
  ) {
    let table = $<HTMLTableElement>("table[data-testid=top-functions]", top);
    if (!table) {
      table = h("table", { attrs: { "data-testid": "top-functions" } });
      top.append(table);
    }
    this.tbl = table;
    this.tbl.classList.add("top-functions");
    this.callersBox = h("div", { class: "callers", attrs: { "data-testid": "callers" } });
    this.sandwich = new Sandwich(tree);
    this.scopeEl = h("p", { class: "top-scope", attrs: { "data-testid": "top-scope" } });
    const wrap = h("div", { class: "top-layout" });
    this.tbl.replaceWith(wrap);
    wrap.append(h("div", { class: "top-main" }, this.scopeEl, h("div", { class: "top-scroll" }, this.tbl)), this.callersBox);
    this.setScope(scope);
  }

  // setScope lists the functions of node z's subtree, as the flame graph
  // zoomed to z shows them; percentages are of z's samples.
  setScope(z: number): void {
    const t = this.tree;
    this.scope = z;
    this.rows = topFunctions(t, z);
    this.total = (z === 0 ? t.d.total : t.d.total_n[z]) || 1;
    this.scopeEl.hidden = z === 0;
    this.scopeEl.textContent = z === 0 ? "" : `within ${t.name(z)} (${fmtInt(t.d.total_n[z])} samples)`;
    this.render();
    const r = this.picked && this.rows.find((r) => r.name === this.picked!.name && r.dso === this.picked!.dso);
    if (r) this.showCallers(r);
    else {
      this.picked = null;
      clear(this.callersBox);
      this.callersBox.append(h("p", { class: "hint", text: "Pick a function to see its callers and callees." }));
    }
  }

  private head(k: SortKey, label: string): HTMLElement {
    // The header is a button, so the sort is reachable from the keyboard.
    const btn = h("button", { class: "sort", text: label, attrs: { type: "button" } });
    btn.addEventListener("click", () => {
      if (this.key === k) this.desc = !this.desc;
      else {
        this.key = k;
        this.desc = k !== "name";
      }
      this.render();
      $<HTMLButtonElement>(`th[data-sort=${k}] button`, this.tbl)?.focus();
    });
    const th = h("th", { class: k === "name" ? "" : "num", attrs: { "data-sort": k, scope: "col" } }, btn);
    if (k === this.key) {
      th.classList.add("sorted");
      th.setAttribute("aria-sort", this.desc ? "descending" : "ascending");
    }
    return th;
  }

  private render(): void {
    const strings = this.tree.d.strings;
    const key = this.key;
    const sorted = this.rows.slice().sort((a, b) => {
      const byName = strings[a.name].localeCompare(strings[b.name]);
      const v = key === "name" ? byName : a[key] - b[key];
      return (this.desc ? -v : v) || byName;
    });
    const thead = h(
      "thead",
      null,
      h(
        "tr",
        null,
        this.head("name", "Function"),
        this.head("self", "Self"),
        h("th", { class: "num", text: "Self %", attrs: { scope: "col" } }),
        this.head("total", "Total"),
        h("th", { class: "num", text: "Total %", attrs: { scope: "col" } }),
      ),
    );
    const tbody = h("tbody");
    for (const r of sorted.slice(0, ROW_LIMIT)) tbody.append(this.row(r));
    clear(this.tbl);
    this.tbl.append(thead, tbody);
  }

  private row(r: FunctionRow): HTMLElement {
    const strings = this.tree.d.strings;
    const name = strings[r.name] ?? "";
    const dso = strings[r.dso] ?? "";
    const tr = h(
      "tr",
      { attrs: { tabindex: "0", title: dso ? `${name} in ${dso}` : name } },
      h("td", { class: "fn" }, h("span", { class: "fn-cell" }, swatch(frameColor(r.kind, name)), h("span", { class: "fn-name", text: name }), dso ? h("span", { class: "dso", text: " " + dso }) : null)),
      h("td", { class: "num", text: fmtInt(r.self) }),
      h("td", { class: "num", text: fmtPct(r.self / this.total) }),
      h("td", { class: "num", text: fmtInt(r.total) }),
      h("td", { class: "num", text: fmtPct(r.total / this.total) }),
    );
    if (this.picked && this.picked.name === r.name && this.picked.dso === r.dso) tr.classList.add("picked");
    const pick = () => {
      for (const o of Array.from(this.tbl.querySelectorAll("tr.picked"))) o.classList.remove("picked");
      tr.classList.add("picked");
      this.picked = { name: r.name, dso: r.dso };
      this.showCallers(r);
      this.onPick(name);
    };
    tr.addEventListener("click", pick);
    tr.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") pick();
    });
    return tr;
  }

  // pickName shows the sandwich of the function named name, of the
  // functions of that name the one with the most samples; none for "" or
  // a name the table does not hold.
  pickName(name: string): void {
    const strings = this.tree.d.strings;
    let best: FunctionRow | null = null;
    for (const r of this.rows) if (strings[r.name] === name && (!best || r.total > best.total)) best = r;
    if (best ? this.picked && this.picked.name === best.name && this.picked.dso === best.dso : !this.picked) return;
    this.picked = best ? { name: best.name, dso: best.dso } : null;
    this.render();
    if (best) this.showCallers(best);
    else {
      clear(this.callersBox);
      this.callersBox.append(h("p", { class: "hint", text: "Pick a function to see its callers and callees." }));
    }
  }

  // search marks the frames matching re in the sandwich too.
  search(re: RegExp | null): void {
    this.re = re;
    this.sandwich.search(re);
  }

  // sandwichStats reports the sandwich shown, for tests and tools.
  sandwichStats(): ReturnType<Sandwich["stats"]> {
    return this.sandwich.stats();
  }

  private showCallers(fn: FunctionRow): void {
    const box = this.callersBox;
    const tree = this.tree;
    clear(box);
    const root = callers(tree, fn.name, fn.dso, this.scope);
    const total = this.total;
    const name = tree.d.strings[fn.name] ?? "";
    const find = h("button", { class: "btn", text: "Highlight in graph", attrs: { type: "button" } });
    find.addEventListener("click", () => this.onSearch(name));
    box.append(h("div", { class: "callers-head" }, h("h3", { text: "Sandwich of " }, h("code", { text: name })), find));
    this.sandwich.show(fn.name, fn.dso, this.scope, total);
    this.sandwich.search(this.re);
    box.append(this.sandwich.el, h("h3", { class: "callers-list-head", text: "Callers, as a list" }));
    let budget = 400;
    const list = (n: CallerNode, depth: number): HTMLElement => {
      const li = h(
        "li",
        null,
        h("span", { class: "cn", text: depth === 0 ? name : (tree.d.strings[n.name] ?? "") }),
        h("span", { class: "cv", text: ` ${fmtInt(n.n)} · ${fmtPct(n.n / total)}` }),
      );
      const kids = [...n.children.values()].sort((a, b) => b.n - a.n);
      if (kids.length && depth < 24) {
        const ul = h("ul");
        for (const k of kids) {
          if (budget-- <= 0) {
            ul.append(h("li", { class: "muted", text: "…" }));
            break;
          }
          ul.append(list(k, depth + 1));
        }
        li.append(ul);
      }
      return li;
    };
    box.append(h("ul", { class: "callers-tree", attrs: { "data-testid": "callers-tree" } }, list(root, 0)));
  }
}

// swatch is a small square of colour.
export function swatch(color: string): HTMLElement {
  const s = h("span", { class: "swatch" });
  s.style.background = color;
  return s;
}
