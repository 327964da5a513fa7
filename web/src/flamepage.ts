// The flame graph and differential pages: fetch the tree for the range and
// filters in the URL, draw it, and keep zoom, search and view mode in the URL.

import { errorMessage } from "./api";
import { fetchJSON } from "./nav";
import { diffColor, KIND_STYLE, frameColor } from "./colors";
import { $, clear, fmtInt, fmtPct, h } from "./dom";
import { type CallerNode, callers, FlameGraph, type FunctionRow, topFunctions, Tree } from "./flame";
import {
  currentParams,
  FILTER_PARAMS,
  flameAPI,
  fmtOffset,
  now,
  parseOffset,
  pick,
  recallBack,
  recordTiming,
  rememberBack,
  takeHandOff,
  updateURL,
} from "./state";
import type { FlameJSON, ProfileSummary, ViewData } from "./types";

export async function flamePage(vd: ViewData, diff: boolean): Promise<void> {
  const box = $("#flame");
  const prof = vd.profile;
  const api = vd.api || (prof ? `/api/profiles/${encodeURIComponent(prof.id)}` : "");
  if (!box || !api) return;
  const selectMark = takeHandOff("select");
  // "← heatmaps" leads to the view this page was opened from, when known.
  const backLink = $<HTMLAnchorElement>("[data-testid=range] a");
  const from = recallBack(location.href);
  if (backLink && from) backLink.href = from;
  const t0 = performance.now();
  const p = currentParams();
  clear(box);
  const status = h("p", { class: "flame-status", text: "Loading flame graph…" });
  box.append(status);
  let data: FlameJSON;
  try {
    data = await fetchJSON<FlameJSON>(flameAPI(api, p, diff));
  } catch (e) {
    status.textContent = errorMessage(e);
    status.classList.add("error");
    return;
  }
  const fetched = performance.now();
  const tree = new Tree(data);
  clear(box);

  // Toolbar: reset, flame/icicle, matched %, legend.
  const reset = h("button", { class: "btn", text: "Reset zoom", attrs: { type: "button", "data-testid": "reset-zoom" } });
  const flameBtn = h("button", { class: "seg", text: "Flame", attrs: { type: "button", "data-testid": "view-flame" } });
  const icicleBtn = h("button", { class: "seg", text: "Icicle", attrs: { type: "button", "data-testid": "view-icicle" } });
  const crumb = h("span", { class: "zoom-crumb", attrs: { "data-testid": "zoom-path" } });
  const summary = h("span", { class: "flame-summary", attrs: { "data-testid": "flame-summary" } });
  const toolbar = h(
    "div",
    { class: "flame-toolbar" },
    reset,
    h("span", { class: "segmented" }, flameBtn, icicleBtn),
    summary,
    crumb,
    diff ? diffLegend() : kindLegend(),
    h("span", { class: "muted keys", text: "click a frame to zoom · Esc: zoom out · /: search" }),
  );
  const graph = new FlameGraph(tree, {
    icicle: p.get("view") === "icicle",
    diff,
    onZoom: (i) => zoomTo(i, true),
  });
  box.append(toolbar, graph.el);
  const base = diff && data.base_total !== undefined ? ` vs ${fmtInt(data.base_total)} baseline` : "";
  summary.textContent = `${fmtInt(data.total)} samples${base} · ${fmtInt(tree.n)} nodes`;

  // Search: regex, matched percentage, in the URL.
  const search = $<HTMLInputElement>("#search");
  let searchStatus: HTMLElement | null = null;
  const runSearch = (pattern: string): void => {
    if (!search) return;
    if (!searchStatus) return;
    search.classList.remove("invalid");
    if (!pattern) {
      graph.search(null);
      searchStatus.textContent = "";
      return;
    }
    let re: RegExp;
    try {
      re = new RegExp(pattern);
    } catch {
      search.classList.add("invalid");
      searchStatus.textContent = "invalid regular expression";
      graph.search(null);
      return;
    }
    const f = graph.search(re);
    searchStatus.textContent = `Matched: ${fmtPct(f)}`;
  };
  if (search) {
    searchStatus = $("#search-match");
    if (!searchStatus) {
      searchStatus = h("span", { attrs: { id: "search-match", "data-testid": "search-match" } });
      search.after(searchStatus);
    }
    searchStatus.setAttribute("aria-live", "polite");
    search.value = p.get("search") ?? "";
    let timer = 0;
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = window.setTimeout(() => {
        runSearch(search.value);
        updateURL({ search: search.value || null }, false);
      }, 120);
    });
    search.form?.addEventListener("submit", (ev) => {
      ev.preventDefault();
      runSearch(search.value);
      updateURL({ search: search.value || null }, false);
    });
  }

  const setView = (icicle: boolean, record: boolean) => {
    graph.setIcicle(icicle);
    flameBtn.classList.toggle("on", !icicle);
    icicleBtn.classList.toggle("on", icicle);
    flameBtn.setAttribute("aria-pressed", String(!icicle));
    icicleBtn.setAttribute("aria-pressed", String(icicle));
    if (record) updateURL({ view: icicle ? "icicle" : null }, false);
  };
  flameBtn.addEventListener("click", () => setView(false, true));
  icicleBtn.addEventListener("click", () => setView(true, true));

  function zoomTo(i: number, record: boolean): void {
    graph.setZoom(i);
    const path = i > 0 ? tree.path(i) : "";
    crumb.textContent = i > 0 ? "Zoomed: " + tree.name(i) : "";
    crumb.title = path;
    reset.disabled = i === 0;
    if (record) updateURL({ zoom: path || null }, true);
    if (search) runSearch(search.value);
  }
  reset.addEventListener("click", () => zoomTo(0, true));
  // Keys: Escape zooms out to the whole graph, "/" jumps to the search box.
  document.addEventListener("keydown", (ev) => {
    if (!box.isConnected || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const typing = ev.target instanceof HTMLInputElement || ev.target instanceof HTMLTextAreaElement;
    if (ev.key === "Escape" && !typing && graph.zoom !== 0) zoomTo(0, true);
    else if (ev.key === "/" && !typing && search) {
      ev.preventDefault();
      search.focus();
      search.select();
    }
  });

  const applyURL = () => {
    if (!box.isConnected) return;
    const cur = currentParams();
    setView(cur.get("view") === "icicle", false);
    const z = tree.find(cur.get("zoom") ?? "");
    zoomTo(z < 0 ? 0 : z, false);
    if (search) {
      search.value = cur.get("search") ?? "";
      runSearch(search.value);
    }
  };
  window.addEventListener("popstate", applyURL);
  // A handle for tests and tools: where a frame is drawn, and drawing costs.
  (window as unknown as { __flame: unknown }).__flame = {
    locate: (name: string) => graph.locate(name),
    nodes: tree.n,
    stats: () => ({ drawn: graph.drawn, drawMs: graph.drawMs }),
  };
  applyURL();

  // First frame drawn: record timings for the browser tests.
  graph.onDrawn = () => {
    graph.onDrawn = null;
    recordTiming("flame-fetch", fetched - t0);
    recordTiming("flame-render", performance.now() - t0);
    if (selectMark !== null) recordTiming("select-to-flame", now() - selectMark);
    box.dataset.nodes = String(tree.n);
    // The table comes after the graph's first frame, which it would delay.
    const top = $("#top");
    if (top && !diff) {
      topTable(top, tree, (name) => {
        if (!search) return;
        search.value = "^" + name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "$";
        runSearch(search.value);
        updateURL({ search: search.value }, false);
      });
    }
    document.body.dataset.rendered = "1";
  };
  if (prof && !diff) compareForm(toolbar, prof, p);
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
    h("span", { class: "key muted", text: "(shares of each range's total)" }),
  );
}

function swatch(color: string): HTMLElement {
  const s = h("span", { class: "swatch" });
  s.style.background = color;
  return s;
}

// compareForm offers a differential view against a baseline range.
function compareForm(toolbar: HTMLElement, prof: ProfileSummary, p: URLSearchParams): void {
  const id = prof.id;
  const dur = prof.end_ns + 1 - prof.t0_ns;
  const s = Math.max(0, parseOffset(p.get("start") ?? "0"));
  const e = Math.min(dur, p.get("end") ? parseOffset(p.get("end")) : dur);
  if (!(e > s)) return;
  const base = baseline(s, e, dur);
  const from = h("input", { class: "num", attrs: { name: "start", "aria-label": "baseline start (s)", "data-testid": "compare-start", size: "7" } });
  const to = h("input", { class: "num", attrs: { name: "end", "aria-label": "baseline end (s)", "data-testid": "compare-end", size: "7" } });
  if (base) {
    from.value = fmtOffset(base[0]);
    to.value = fmtOffset(base[1]);
  }
  const form = h(
    "form",
    { class: "compare", attrs: { "data-testid": "compare" } },
    "Compare with baseline ",
    from,
    "–",
    to,
    " s ",
    h("button", { class: "btn", text: "Compare", attrs: { type: "submit" } }),
  );
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    // The target's bounds as the URL gave them (none: the whole capture).
    const q = pick(p, ["start", "end", ...FILTER_PARAMS]);
    q.set("start2", from.value.trim());
    q.set("end2", to.value.trim());
    const target = `/p/${encodeURIComponent(id)}/diff?${q}`;
    const back = $<HTMLAnchorElement>("[data-testid=range] a");
    if (back) rememberBack(target, back.href);
    location.assign(target);
  });
  toolbar.append(form);
}

// baseline proposes the range to compare [s, e) with, as offsets in 0..dur:
// the same length just before it; what there is before it when it starts
// early; else the same length just after it; null when nothing is beside it.
export function baseline(s: number, e: number, dur: number): [number, number] | null {
  const len = e - s;
  if (s >= len) return [s - len, s];
  if (s > 0) return [0, s];
  if (e < dur) return [e, Math.min(dur, e + len)];
  return null;
}

type SortKey = "name" | "self" | "total";

// topTable fills the top-functions table (sortable by self or total) and
// shows the merged callers of the function whose row is clicked.
function topTable(top: HTMLElement, tree: Tree, onSearch: (name: string) => void): void {
  const rows = topFunctions(tree);
  const total = tree.d.total || 1;
  let table = $<HTMLTableElement>("table[data-testid=top-functions]", top);
  if (!table) {
    table = h("table", { attrs: { "data-testid": "top-functions" } });
    top.append(table);
  }
  const tbl = table;
  tbl.classList.add("top-functions");
  const callersBox = h("div", { class: "callers", attrs: { "data-testid": "callers" } });
  const wrap = h("div", { class: "top-layout" });
  tbl.replaceWith(wrap);
  wrap.append(h("div", { class: "top-scroll" }, tbl), callersBox);
  callersBox.append(h("p", { class: "hint", text: "Click a function to see its callers." }));
  let key: SortKey = "self";
  let desc = true;
  const head = (k: SortKey, label: string) => {
    const th = h("th", { class: k === "name" ? "" : "num", attrs: { "data-sort": k, scope: "col" } }, label);
    th.addEventListener("click", () => {
      if (key === k) desc = !desc;
      else {
        key = k;
        desc = k !== "name";
      }
      render();
    });
    return th;
  };
  const render = () => {
    clear(tbl);
    const sorted = rows.slice().sort((a, b) => {
      const byName = tree.d.strings[a.name].localeCompare(tree.d.strings[b.name]);
      const v = key === "name" ? byName : a[key] - b[key];
      return (desc ? -v : v) || byName;
    });
    const thead = h("thead", null, h("tr", null, head("name", "Function"), head("self", "Self"), h("th", { class: "num", text: "Self %" }), head("total", "Total"), h("th", { class: "num", text: "Total %" })));
    for (const th of Array.from(thead.querySelectorAll<HTMLElement>("th[data-sort]"))) {
      if (th.dataset.sort === key) {
        th.classList.add("sorted");
        th.setAttribute("aria-sort", desc ? "descending" : "ascending");
      }
    }
    const tbody = h("tbody");
    for (const r of sorted.slice(0, 300)) tbody.append(row(r));
    tbl.append(thead, tbody);
  };
  const row = (r: FunctionRow) => {
    const name = tree.d.strings[r.name] ?? "";
    const dso = tree.d.strings[r.dso] ?? "";
    const tr = h(
      "tr",
      { attrs: { tabindex: "0" } },
      h("td", { class: "fn" }, h("span", { class: "fn-cell" }, swatch(frameColor(r.kind, name)), h("span", { class: "fn-name", text: name }), dso ? h("span", { class: "dso", text: " " + dso }) : null)),
      h("td", { class: "num", text: fmtInt(r.self) }),
      h("td", { class: "num", text: fmtPct(r.self / total) }),
      h("td", { class: "num", text: fmtInt(r.total) }),
      h("td", { class: "num", text: fmtPct(r.total / total) }),
    );
    const pickRow = () => {
      for (const o of Array.from(tbl.querySelectorAll("tr.picked"))) o.classList.remove("picked");
      tr.classList.add("picked");
      showCallers(callersBox, tree, r, onSearch);
    };
    tr.addEventListener("click", pickRow);
    tr.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") pickRow();
    });
    return tr;
  };
  render();
}

function showCallers(boxEl: HTMLElement, tree: Tree, fn: FunctionRow, onSearch: (name: string) => void): void {
  clear(boxEl);
  const root = callers(tree, fn.name, fn.dso);
  const total = tree.d.total || 1;
  const name = tree.d.strings[fn.name] ?? "";
  const find = h("button", { class: "btn", text: "Highlight in graph", attrs: { type: "button" } });
  find.addEventListener("click", () => onSearch(name));
  boxEl.append(h("div", { class: "callers-head" }, h("h3", { text: "Callers of " }, h("code", { text: name })), find));
  let budget = 400;
  const list = (n: CallerNode, depth: number): HTMLElement => {
    const li = h(
      "li",
      null,
      h("span", { class: "cn", text: depth === 0 ? name : tree.d.strings[n.name] ?? "" }),
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
  boxEl.append(h("ul", { class: "callers-tree", attrs: { "data-testid": "callers-tree" } }, list(root, 0)));
}
