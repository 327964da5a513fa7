// The sandwich view of one function (speedscope's): its callers above it,
// merged from every place it is called, and its callees below it, merged
// from every call, so that a function spread thinly over many stacks reads
// as one. Both halves are flame graphs of their own, built from the page's
// flame tree within the zoomed frame; the search marks them too.

import { clear, h } from "./dom";
import { fmtInt, fmtPct } from "./format";
import { FlameGraph, Tree } from "./flame";
import type { FlameJSON } from "./wire";

// Merged is a node of a merged tree before it is laid out.
interface Merged {
  name: number;
  dso: number;
  kind: number;
  total: number;
  self: number;
  children: Map<number, Merged>; // by name * 2^20 + dso
}

function merged(name: number, dso: number, kind: number): Merged {
  return { name, dso, kind, total: 0, self: 0, children: new Map() };
}

function child(m: Merged, name: number, dso: number, kind: number): Merged {
  const k = name * 1048576 + dso;
  let c = m.children.get(k);
  if (!c) m.children.set(k, (c = merged(name, dso, kind)));
  return c;
}

// outermost returns the occurrences of function (fn, dso) in node z's
// subtree that no other occurrence within it encloses, in pre-order.
export function outermost(t: Tree, fn: number, dso: number, z: number): number[] {
  const d = t.d;
  const out: number[] = [];
  for (let i = Math.max(1, z); i < t.end[z]; ) {
    if (d.name[i] === fn && d.dso[i] === dso) {
      out.push(i);
      i = t.end[i]; // nested occurrences are inside this one
    } else i++;
  }
  return out;
}

// callees merges the subtrees of the function's outermost occurrences: the
// root is the function, its children what it calls.
export function callees(t: Tree, fn: number, dso: number, z: number): FlameJSON {
  const d = t.d;
  const root = merged(fn, dso, 0);
  for (const i of outermost(t, fn, dso, z)) {
    root.kind = d.kind[i];
    root.total += d.total_n[i];
    root.self += d.self_n[i];
    // Merge i's descendants by their path below i.
    const path: Merged[] = [root];
    const base = d.depth[i];
    for (let j = i + 1; j < t.end[i]; j++) {
      const dep = d.depth[j] - base;
      path.length = dep;
      const m = child(path[dep - 1], d.name[j], d.dso[j], d.kind[j]);
      m.total += d.total_n[j];
      m.self += d.self_n[j];
      path.push(m);
    }
  }
  return serialize(t, root);
}

// callers merges the ancestry of the function's outermost occurrences: the
// root is the function, its children the functions that call it, up to
// the command that ran it.
export function callers(t: Tree, fn: number, dso: number, z: number): FlameJSON {
  const d = t.d;
  const root = merged(fn, dso, 0);
  for (const i of outermost(t, fn, dso, z)) {
    const w = d.total_n[i];
    root.kind = d.kind[i];
    root.total += w;
    let cur = root;
    for (let j = t.parent[i]; j > 0; j = t.parent[j]) {
      cur = child(cur, d.name[j], d.dso[j], d.kind[j]);
      cur.total += w;
    }
    cur.self += w; // the chain of callers ends here
  }
  return serialize(t, root);
}

// serialize lays a merged tree out as flame JSON in pre-order, children by
// name, with the flame tree's strings and kinds.
function serialize(t: Tree, root: Merged): FlameJSON {
  const d = t.d;
  const out: FlameJSON = {
    start_ns: d.start_ns,
    end_ns: d.end_ns,
    total: root.total,
    strings: d.strings,
    kinds: d.kinds,
    name: [],
    dso: [],
    kind: [],
    depth: [],
    total_n: [],
    self_n: [],
  };
  const walk = (m: Merged, depth: number) => {
    out.name.push(m.name);
    out.dso.push(m.dso);
    out.kind.push(m.kind);
    out.depth.push(depth);
    out.total_n.push(m.total);
    out.self_n.push(m.self);
    const kids = [...m.children.values()].sort((a, b) => (d.strings[a.name] ?? "").localeCompare(d.strings[b.name] ?? ""));
    for (const k of kids) walk(k, depth + 1);
  };
  walk(root, 0);
  return out;
}

// Sandwich shows the callers and callees of one function of the page's
// flame tree, within the zoomed frame.
export class Sandwich {
  readonly el: HTMLElement;
  private above: FlameGraph | null = null;
  private below: FlameGraph | null = null;

  constructor(private tree: Tree) {
    this.el = h("div", { class: "sandwich", attrs: { "data-testid": "sandwich" } });
  }

  // show draws the sandwich of function (fn, dso) within node z's subtree;
  // total is what percentages are of.
  show(fn: number, dso: number, z: number, total: number): void {
    clear(this.el);
    const t = this.tree;
    const name = t.d.strings[fn] ?? "";
    const up = new Tree(callers(t, fn, dso, z));
    const down = new Tree(callees(t, fn, dso, z));
    const n = down.d.total;
    this.el.append(
      h("p", { class: "sandwich-head", attrs: { "data-testid": "sandwich-head" } }, h("code", { text: name }), ` ${fmtInt(n)} samples · ${fmtPct(n / (total || 1))}: callers above, callees below`),
    );
    this.above = new FlameGraph(up, { icicle: false, diff: false, onZoom: (i) => this.above?.setZoom(i) });
    this.below = new FlameGraph(down, { icicle: true, diff: false, onZoom: (i) => this.below?.setZoom(i) });
    this.above.canvas.setAttribute("data-testid", "sandwich-callers");
    this.below.canvas.setAttribute("data-testid", "sandwich-callees");
    this.above.canvas.setAttribute("aria-label", `Callers of ${name}: a flame graph with ${name} at the bottom`);
    this.below.canvas.setAttribute("aria-label", `Callees of ${name}: an icicle graph with ${name} at the top`);
    const top = h("div", { class: "sandwich-half sandwich-callers" }, this.above.el);
    const bottom = h("div", { class: "sandwich-half sandwich-callees" }, this.below.el);
    this.el.append(top, bottom);
    this.above.invalidate();
    this.below.invalidate();
    // The callers' graph ends at the function: start it scrolled down there.
    this.above.onDrawn = () => {
      top.scrollTop = top.scrollHeight;
    };
  }

  // search marks the frames matching re in both halves.
  search(re: RegExp | null): void {
    this.above?.search(re);
    this.below?.search(re);
  }

  // stats reports what the halves hold, for tests and tools.
  stats(): { callers: number; callees: number; total: number } | null {
    if (!this.above || !this.below) return null;
    return { callers: this.above.tree.n, callees: this.below.tree.n, total: this.below.tree.d.total };
  }

  // locate finds a frame in a half, as FlameGraph.locate does.
  locate(half: "callers" | "callees", name: string): { x: number; y: number; w: number; h: number } | null {
    const g = half === "callers" ? this.above : this.below;
    return g ? g.locate(name) : null;
  }
}
