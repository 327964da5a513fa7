// FlameGraph draws a flame tree on canvas. The tree arrives as parallel
// arrays in depth-first pre-order (node 0 is the root), so a node's subtree
// is the contiguous index run [i, end[i]). Drawing skips whole subtrees
// narrower than half a pixel and writes text only where it fits, which keeps
// trees of 50k+ nodes smooth.

import { CURRENT_COLOR, diffColor, frameColor, HIGHLIGHT_COLOR, KIND_STYLE, MATCH_COLOR } from "./colors";
import { h, onNextFrame, type Pointer, setupCanvas, Tooltip } from "./dom";
import { fmtInt, fmtPct } from "./format";
import { FULL_Z, type FlameJSON, SIGNIFICANT_Z, TINT_INTENSITY } from "./wire";

export const ROW_H = 17;
const FONT = "11.5px Menlo, Consolas, 'DejaVu Sans Mono', monospace";
const MIN_W = 0.5;

// Shape says whose widths a differential graph is drawn with: the target
// range's (frames only in the baseline keep their baseline width) or the
// baseline's (frames only in the target keep their target width), as
// flamegraph.pl's --negate switches.
export type Shape = "target" | "base";

// zScore is the two-proportion z-score of the change from x2 of n2 samples
// (baseline) to x1 of n1 (target), as flame.Z computes it in Go: 0 when a
// side is empty or the shares are equal. web's TestZScoreScript checks the
// two against each other.
export function zScore(x1: number, n1: number, x2: number, n2: number): number {
  if (n1 <= 0 || n2 <= 0) return 0;
  const p1 = x1 / n1;
  const p2 = x2 / n2;
  const p = (x1 + x2) / (n1 + n2);
  const se = Math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2));
  return se > 0 ? (p1 - p2) / se : 0;
}

// diffIntensity maps a z-score to a colour intensity in 0..1 as
// flame.Intensity does: 0 (neutral) below SIGNIFICANT_Z, then linearly from
// TINT_INTENSITY up to full colour at FULL_Z.
export function diffIntensity(z: number): number {
  const a = Math.abs(z);
  if (a < SIGNIFICANT_Z) return 0;
  return TINT_INTENSITY + (1 - TINT_INTENSITY) * Math.min(1, (a - SIGNIFICANT_Z) / (FULL_Z - SIGNIFICANT_Z));
}

// Tree is the flame JSON with derived per-node geometry.
export class Tree {
  readonly n: number;
  readonly x: Float64Array; // left edge in layout units
  readonly w: Float64Array; // width in layout units: samples, or for a differential graph shares (see layout)
  readonly end: Int32Array; // one past the last descendant
  readonly parent: Int32Array;
  readonly maxDepth: number;
  readonly kindName: string[];
  shape: Shape = "target";

  constructor(
    readonly d: FlameJSON,
    shape: Shape = "target",
  ) {
    const n = (this.n = d.name.length);
    this.x = new Float64Array(n);
    this.w = new Float64Array(n);
    this.end = new Int32Array(n);
    this.parent = new Int32Array(n);
    const stack: number[] = [];
    let maxDepth = 0;
    for (let i = 0; i < n; i++) {
      const dep = d.depth[i];
      while (stack.length > dep) this.end[stack.pop()!] = i;
      this.parent[i] = dep > 0 ? stack[dep - 1] : -1;
      stack.push(i);
      if (dep > maxDepth) maxDepth = dep;
    }
    while (stack.length) this.end[stack.pop()!] = n;
    this.maxDepth = maxDepth;
    this.kindName = d.kinds;
    this.layout(shape);
  }

  get diff(): boolean {
    return !!this.d.base_n;
  }

  // layout sets each node's width and left edge. A plain graph is laid out
  // in samples. A differential graph is laid out in shares of each side's
  // total, by the shape's side: a frame present on that side is as wide as
  // its share there plus the frames below it that only the other side has,
  // each of which keeps its share of the other side. So in the target shape
  // a function that vanished is drawn at its baseline width, and in the
  // baseline shape one that appeared at its target width.
  layout(shape: Shape): void {
    const d = this.d;
    const n = this.n;
    const w = this.w;
    this.shape = shape;
    if (!d.base_n) {
      for (let i = 0; i < n; i++) w[i] = d.total_n[i];
    } else {
      const base = shape === "base";
      const own = base ? d.base_n : d.total_n;
      const other = base ? d.total_n : d.base_n;
      const ownT = (base ? d.base_total : d.total) || 1;
      const otherT = (base ? d.total : d.base_total) || 1;
      for (let i = 0; i < n; i++) w[i] = own[i] > 0 || i === 0 ? own[i] / ownT : other[i] / otherT;
      // Children come after their parent: a reverse pass has each node's
      // subtree done before the node.
      const extra = new Float64Array(n);
      for (let i = n - 1; i > 0; i--) {
        const p = this.parent[i];
        if (own[i] > 0) {
          w[i] += extra[i];
          extra[p] += extra[i];
        } else if (p === 0 || own[p] > 0) extra[p] += w[i];
      }
      w[0] += extra[0];
    }
    const next: number[] = [0];
    for (let i = 0; i < n; i++) {
      const dep = d.depth[i];
      const px = next[dep] ?? 0;
      this.x[i] = px;
      next[dep] = px + w[i];
      next[dep + 1] = px;
      next.length = dep + 2;
    }
  }

  // z is node i's change as a two-proportion z-score (0 for a plain graph).
  z(i: number): number {
    const d = this.d;
    if (!d.base_n) return 0;
    return zScore(d.total_n[i], d.total, d.base_n[i], d.base_total ?? 0);
  }

  name(i: number): string {
    return this.d.strings[this.d.name[i]] ?? "";
  }
  dso(i: number): string {
    return this.d.strings[this.d.dso[i]] ?? "";
  }
  kind(i: number): string {
    return this.d.kinds[this.d.kind[i]] ?? "unknown";
  }

  // path is the node's frame names from below the root down to it, joined by
  // ";" as folded stacks spell them. The root's path is "".
  path(i: number): string {
    const names: string[] = [];
    for (let j = i; j > 0; j = this.parent[j]) names.push(this.name(j));
    return names.reverse().join(";");
  }

  // find returns the node with the given path, or -1.
  find(path: string): number {
    if (!path) return 0;
    let cur = 0;
    for (const part of path.split(";")) {
      let found = -1;
      for (let c = cur + 1; c < this.end[cur]; c = this.end[c]) {
        if (this.name(c) === part) {
          found = c;
          break;
        }
      }
      if (found < 0) return -1;
      cur = found;
    }
    return cur;
  }

  // children calls f for each child of node i.
  children(i: number, f: (c: number) => void): void {
    for (let c = i + 1; c < this.end[i]; c = this.end[c]) f(c);
  }
}

export interface FlameOptions {
  icicle: boolean;
  diff: boolean;
  onZoom(node: number): void;
}

export class FlameGraph {
  readonly canvas: HTMLCanvasElement;
  readonly el: HTMLDivElement;
  private tip = new Tooltip();
  zoom = 0;
  private match: Uint8Array | null = null;
  private hover = -1;
  private pointer: Pointer | null = null; // where the pointer is over the canvas
  private width = 0;
  private height = 0;
  private charW = 7;
  private cssWidth = 0; // the container's width, kept by a ResizeObserver
  private overlay: HTMLCanvasElement;
  private linked = -1; // a node another view points at (stack chart hover)
  private current = -1; // the search's current match
  private focused = -1; // the keyboard's frame
  private live: HTMLSpanElement;
  drawn = 0; // nodes drawn in the last frame, for tests and tuning
  drawMs = 0; // how long the last frame took to draw
  draws = 0; // frames drawn in full
  overlayDraws = 0; // hover and highlight outlines drawn alone
  overlayMs = 0; // how long the last outline drawing took
  onDrawn: (() => void) | null = null;
  // onHover hears the node under the pointer (-1 when none) as it changes.
  onHover: ((node: number) => void) | null = null;

  constructor(
    readonly tree: Tree,
    private opt: FlameOptions,
  ) {
    this.canvas = h("canvas", {
      class: "flame-canvas",
      attrs: {
        "data-testid": "flame-canvas",
        tabindex: "0",
        role: "application",
        "aria-label": `${opt.icicle ? "Icicle" : "Flame"} graph: arrows walk the frames (up and down to callee and caller, left and right to siblings), Enter zooms to a frame`,
      },
    });
    // What the keyboard's frame is, read out by screen readers.
    this.live = h("span", { class: "visually-hidden", attrs: { "aria-live": "polite", "data-testid": "flame-focus" } });
    // Hover and linked highlights are outlines on a canvas of their own, so
    // that moving the pointer redraws them alone, not the frames beneath.
    this.overlay = h("canvas", { class: "flame-overlay", attrs: { "aria-hidden": "true" } });
    this.el = h("div", { class: "flame-wrap" }, this.canvas, this.overlay, this.live);
    this.canvas.addEventListener("keydown", (ev) => this.key(ev));
    this.canvas.addEventListener("focus", () => {
      if (this.focused < 0 || this.focused >= this.tree.n) this.focus(this.zoom);
      else this.focus(this.focused);
    });
    this.canvas.addEventListener("blur", () => {
      this.tip.hide();
      this.setHover(-1);
    });
    this.canvas.addEventListener("mousemove", (ev) => {
      this.pointer = { clientX: ev.clientX, clientY: ev.clientY };
      this.onMove(this.pointer);
    });
    this.canvas.addEventListener("mouseleave", () => {
      this.pointer = null;
      this.tip.hide();
      this.setHover(-1);
    });
    this.canvas.addEventListener("click", (ev) => {
      const i = this.hit(ev);
      if (i >= 0) this.opt.onZoom(i);
    });
    new ResizeObserver((entries) => {
      const w = Math.floor(entries[entries.length - 1].contentRect.width);
      if (w !== this.cssWidth) {
        this.cssWidth = w;
        this.invalidate();
      }
    }).observe(this.el);
  }

  // key walks the frames: towards the leaves and the root (up and down as
  // drawn), to the previous and next sibling, Enter zooms.
  private key(ev: KeyboardEvent): void {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = this.tree;
    let i = this.focused < 0 ? this.zoom : this.focused;
    const leafward = () => {
      // The widest child, as the eye follows the flame.
      let best = -1;
      t.children(i, (c) => {
        if (best < 0 || t.w[c] > t.w[best]) best = c;
      });
      return best < 0 ? i : best;
    };
    const rootward = () => (t.parent[i] >= 0 ? t.parent[i] : i);
    const sibling = (dir: number) => {
      const p = t.parent[i];
      if (p < 0) return i;
      const kids: number[] = [];
      t.children(p, (c) => kids.push(c));
      const k = kids.indexOf(i) + dir;
      return k >= 0 && k < kids.length ? kids[k] : i;
    };
    switch (ev.key) {
      case "ArrowUp":
        i = this.opt.icicle ? rootward() : leafward();
        break;
      case "ArrowDown":
        i = this.opt.icicle ? leafward() : rootward();
        break;
      case "ArrowLeft":
        i = sibling(-1);
        break;
      case "ArrowRight":
        i = sibling(1);
        break;
      case "Home":
        i = this.zoom;
        break;
      case "Enter":
        ev.preventDefault();
        if (i >= 0) this.opt.onZoom(i);
        return;
      default:
        return;
    }
    ev.preventDefault();
    this.focus(i);
  }

  // focus makes node i the keyboard's frame: outlined, described in the
  // tooltip beside it and to screen readers.
  private focus(i: number): void {
    this.focused = i;
    this.setHover(i);
    const r = this.rect(i) ?? this.place(i);
    const lines = this.describe(i);
    this.live.textContent = lines.filter((l) => !l.startsWith("click")).join(", ");
    if (r) {
      const box = this.canvas.getBoundingClientRect();
      this.tip.show({ clientX: box.left + r.x + Math.min(r.w, 200) / 2, clientY: box.top + r.y + ROW_H }, lines);
    }
  }

  setZoom(i: number): void {
    this.zoom = i >= 0 && i < this.tree.n ? i : 0;
    this.invalidate();
    // The frames moved under a still pointer: describe what it is over now.
    if (this.pointer) this.onMove(this.pointer);
  }

  setIcicle(v: boolean): void {
    this.opt.icicle = v;
    this.invalidate();
  }

  // search marks nodes whose name matches re and returns the fraction of the
  // zoomed total they cover, counting nested matches once.
  search(re: RegExp | null): number {
    const t = this.tree;
    if (!re) {
      this.match = null;
      this.invalidate();
      return 0;
    }
    const m = new Uint8Array(t.n);
    const names = t.d.strings.map((s) => re.test(s));
    for (let i = 0; i < t.n; i++) if (names[t.d.name[i]] && i > 0) m[i] = 1;
    this.match = m;
    this.invalidate();
    return this.matchedFraction();
  }

  // matches returns the nodes the search marked, or null.
  matches(): Uint8Array | null {
    return this.match;
  }

  // matchList returns the marked nodes of the zoomed subtree, in pre-order
  // (top-down, left to right as drawn).
  matchList(): number[] {
    const m = this.match;
    const out: number[] = [];
    if (!m) return out;
    const t = this.tree;
    for (let i = this.zoom; i < t.end[this.zoom]; i++) if (m[i]) out.push(i);
    return out;
  }

  // setCurrent outlines node i (-1: none) as the search's current match.
  setCurrent(i: number): void {
    if (i === this.current) return;
    this.current = i;
    this.drawOverlay();
  }

  matchedFraction(): number {
    const m = this.match;
    if (!m) return 0;
    const t = this.tree;
    const z = this.zoom;
    const total = t.w[z];
    if (!total) return 0;
    let sum = 0;
    for (let i = z; i < t.end[z]; ) {
      if (m[i]) {
        sum += t.w[i];
        i = t.end[i];
      } else i++;
    }
    // A match among the zoomed node's ancestors covers all of it.
    for (let j = t.parent[z]; j > 0; j = t.parent[j]) if (m[j]) return 1;
    return sum / total;
  }

  // invalidate draws the chart again at the next animation frame.
  readonly invalidate = onNextFrame(() => this.draw());

  private y(depth: number): number {
    return this.opt.icicle ? depth * ROW_H : this.height - (depth + 1) * ROW_H;
  }

  draw(): void {
    const started = performance.now();
    const t = this.tree;
    // Reading the width from layout here would force a synchronous layout of
    // the whole page; the ResizeObserver keeps it instead.
    if (!this.cssWidth) this.cssWidth = this.el.clientWidth;
    const W = Math.max(200, this.cssWidth);
    const H = (t.maxDepth + 1) * ROW_H + 2;
    let ctx: CanvasRenderingContext2D;
    if (W !== this.width || H !== this.height) {
      this.width = W;
      this.height = H;
      ctx = setupCanvas(this.canvas, W, H);
      setupCanvas(this.overlay, W, H);
    } else {
      ctx = this.canvas.getContext("2d")!;
      const dpr = window.devicePixelRatio || 1;
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    }
    ctx.clearRect(0, 0, W, H);
    ctx.font = FONT;
    ctx.textBaseline = "middle";
    this.charW = ctx.measureText("mmmmmmmmmm").width / 10;
    let drawn = 0;
    const z = this.zoom;
    // Ancestors of the zoomed node span the full width, dimmed.
    for (let j = t.parent[z]; j >= 0; j = t.parent[j]) {
      this.box(ctx, j, 0, W, true);
      drawn++;
    }
    const x0 = t.x[z];
    const span = t.w[z] || 1;
    const scale = W / span;
    for (let i = z; i < t.end[z]; ) {
      const w = t.w[i] * scale;
      if (w < MIN_W) {
        i = t.end[i];
        continue;
      }
      this.box(ctx, i, (t.x[i] - x0) * scale, w, false);
      drawn++;
      i++;
    }
    this.drawn = drawn;
    this.draws++;
    this.drawMs = performance.now() - started;
    this.drawOverlay();
    if (this.onDrawn) this.onDrawn();
  }

  // rect returns where node i is drawn (css px), or null when it is not:
  // outside the zoomed subtree and not an ancestor, or under half a pixel.
  rect(i: number): { x: number; y: number; w: number } | null {
    const t = this.tree;
    const z = this.zoom;
    if (i < 0 || i >= t.n || !this.width) return null;
    const y = this.y(t.d.depth[i]);
    if (i < z && t.end[i] > z) return { x: 0, y, w: this.width };
    if (i < z || i >= t.end[z]) return null;
    const scale = this.width / (t.w[z] || 1);
    const w = t.w[i] * scale;
    return w < MIN_W ? null : { x: (t.x[i] - t.x[z]) * scale, y, w };
  }

  // place returns where node i would be drawn, whatever its width, or null
  // when it is outside the zoomed subtree.
  private place(i: number): { x: number; y: number; w: number } | null {
    const t = this.tree;
    const z = this.zoom;
    if (i < z || i >= t.end[z] || !this.width) return null;
    const scale = this.width / (t.w[z] || 1);
    return { x: (t.x[i] - t.x[z]) * scale, y: this.y(t.d.depth[i]), w: Math.max(4, t.w[i] * scale) };
  }

  // highlight outlines node i (-1: none) for another view's hover.
  highlight(i: number): void {
    if (i === this.linked) return;
    this.linked = i;
    this.drawOverlay();
  }

  private setHover(i: number): void {
    if (i === this.hover) return;
    this.hover = i;
    this.drawOverlay();
    if (this.onHover) this.onHover(i);
  }

  // drawOverlay draws the hover and linked outlines alone.
  private drawOverlay(): void {
    if (!this.width) return;
    const started = performance.now();
    const ctx = this.overlay.getContext("2d")!;
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, this.width, this.height);
    const outline = (i: number, color: string, wide: number) => {
      let r = this.rect(i);
      // A frame under half a pixel still gets a mark where it is.
      if (!r && i === this.current) r = this.place(i);
      if (!r) return;
      const bw = r.w > 2 ? r.w - 1 : r.w;
      ctx.lineWidth = wide;
      ctx.strokeStyle = color;
      ctx.strokeRect(r.x + wide / 2, r.y + wide / 2, Math.max(0, bw - wide), ROW_H - 1 - wide);
    };
    outline(this.current, CURRENT_COLOR, 3);
    outline(this.linked, HIGHLIGHT_COLOR, 2);
    outline(this.hover, "#111", 1);
    this.overlayDraws++;
    this.overlayMs = performance.now() - started;
  }

  private color(i: number): string {
    const t = this.tree;
    const d = t.d;
    if (this.match && this.match[i]) return MATCH_COLOR;
    if (this.opt.diff && d.base_n && i > 0) {
      // Intensity follows significance, not only size: sampling noise
      // stays neutral however large the graph's other changes are.
      const z = t.z(i);
      return diffColor(Math.sign(z) * diffIntensity(z));
    }
    return frameColor(t.kind(i), t.name(i));
  }

  private box(ctx: CanvasRenderingContext2D, i: number, x: number, w: number, dim: boolean): void {
    const t = this.tree;
    const y = this.y(t.d.depth[i]);
    ctx.fillStyle = this.color(i);
    ctx.globalAlpha = dim ? 0.55 : 1;
    const bw = w > 2 ? w - 1 : w;
    ctx.fillRect(x, y, bw, ROW_H - 1);
    ctx.globalAlpha = 1;
    if (w < this.charW * 3 + 6) return;
    const name = t.name(i);
    const fit = Math.floor((w - 6) / this.charW);
    const text = name.length <= fit ? name : name.slice(0, Math.max(1, fit - 1)) + "\u2026";
    ctx.fillStyle = "#111";
    ctx.fillText(text, x + 3, y + ROW_H / 2);
  }

  // locate returns the canvas rectangle (css px) of the widest drawn node
  // named name, or null: a handle for keyboard-less tools and tests.
  locate(name: string): { x: number; y: number; w: number; h: number } | null {
    const t = this.tree;
    const z = this.zoom;
    let best = -1;
    for (let i = z; i < t.end[z]; i++) if (t.name(i) === name && (best < 0 || t.w[i] > t.w[best])) best = i;
    if (best < 0) return null;
    const scale = this.width / (t.w[z] || 1);
    return { x: (t.x[best] - t.x[z]) * scale, y: this.y(t.d.depth[best]), w: t.w[best] * scale, h: ROW_H };
  }

  // hit returns the node under the pointer, or -1.
  hit(ev: Pointer): number {
    const r = this.canvas.getBoundingClientRect();
    const px = ev.clientX - r.left;
    const py = ev.clientY - r.top;
    const depth = this.opt.icicle ? Math.floor(py / ROW_H) : Math.floor((this.height - py) / ROW_H);
    if (depth < 0 || px < 0 || px > this.width) return -1;
    const t = this.tree;
    const z = this.zoom;
    const zd = t.d.depth[z];
    if (depth < zd) {
      let j = z;
      while (j >= 0 && t.d.depth[j] > depth) j = t.parent[j];
      return j;
    }
    const scale = this.width / (t.w[z] || 1);
    const x = px / scale + t.x[z];
    let cur = z;
    while (t.d.depth[cur] < depth) {
      let next = -1;
      t.children(cur, (c) => {
        if (next < 0 && x >= t.x[c] && x < t.x[c] + t.w[c]) next = c;
      });
      if (next < 0) return -1;
      cur = next;
    }
    return cur;
  }

  private onMove(ev: Pointer): void {
    const i = this.hit(ev);
    this.setHover(i);
    if (i < 0) {
      this.tip.hide();
      this.canvas.style.cursor = "default";
      return;
    }
    this.canvas.style.cursor = "pointer";
    this.tip.show(ev, this.describe(i));
  }

  // describe returns the tooltip lines for node i.
  describe(i: number): string[] {
    const t = this.tree;
    const d = t.d;
    const lines = [t.name(i) || "(unnamed)"];
    const dso = t.dso(i);
    const kind = t.kind(i);
    lines.push(`${KIND_STYLE[kind]?.label ?? kind}${dso ? " · " + dso : ""}`);
    lines.push(`${fmtInt(d.total_n[i])} samples · ${fmtPct(d.total ? d.total_n[i] / d.total : 0)} of total`);
    if (d.self_n[i]) lines.push(`self ${fmtInt(d.self_n[i])} · ${fmtPct(d.total ? d.self_n[i] / d.total : 0)}`);
    if (this.opt.diff && d.base_n) {
      const cur = d.total ? d.total_n[i] / d.total : 0;
      const base = d.base_total ? (d.base_n[i] ?? 0) / d.base_total : 0;
      const delta = (cur - base) * 100;
      lines.push(`baseline ${fmtPct(base)} → ${fmtPct(cur)} (${delta >= 0 ? "+" : ""}${delta.toFixed(2)} pts)`);
      const only = d.total_n[i] === 0 ? " · gone: only in the baseline" : d.base_n[i] === 0 ? " · new: only in the target" : "";
      lines.push(`baseline samples ${fmtInt(d.base_n[i] ?? 0)}${only}`);
      const z = t.z(i);
      lines.push(Math.abs(z) >= SIGNIFICANT_Z ? `significant change (z ${z.toFixed(1)})` : `not significant (|z| ${Math.abs(z).toFixed(1)} < ${SIGNIFICANT_Z})`);
    }
    if (i === this.zoom) {
      if (i > 0) lines.push("zoomed in · Esc zooms out");
    } else if (i < this.zoom && t.end[i] > this.zoom) lines.push("click to zoom out to here");
    else if (i > 0) lines.push("click to zoom");
    return lines;
  }
}

// topFunctions aggregates self and total samples per function (name and
// DSO, as perf report keys symbols); total counts each stack once even when
// the function recurses.
export interface FunctionRow {
  name: number; // string index
  dso: number;
  kind: string;
  self: number;
  total: number;
}

// topFunctions lists the functions of node z's subtree (the whole tree for
// the root), as the zoomed flame graph shows them.
export function topFunctions(t: Tree, z = 0): FunctionRow[] {
  const d = t.d;
  const rows = new Map<number, FunctionRow>();
  const key = (i: number) => d.name[i] * 1048576 + d.dso[i];
  const onPath = new Map<number, number>(); // key → times on the current path
  const path: number[] = [];
  const first = Math.max(1, z);
  const base = d.depth[first] - 1; // path[k] holds the node at depth base+k+1
  for (let i = first; i < t.end[z]; i++) {
    const dep = d.depth[i] - base;
    while (path.length >= dep) {
      const k = key(path.pop()!);
      onPath.set(k, (onPath.get(k) ?? 1) - 1);
    }
    const k = key(i);
    let r = rows.get(k);
    if (!r) {
      r = { name: d.name[i], dso: d.dso[i], kind: t.kind(i), self: 0, total: 0 };
      rows.set(k, r);
    }
    r.self += d.self_n[i];
    if (!onPath.get(k)) r.total += d.total_n[i];
    onPath.set(k, (onPath.get(k) ?? 0) + 1);
    path.push(i);
  }
  // Process (comm) frames are grouping nodes, not functions.
  return [...rows.values()].filter((r) => r.kind !== "comm" && r.kind !== "root");
}

// CallerNode is one node of a merged callers (inverted) tree.
export interface CallerNode {
  name: number;
  n: number;
  children: Map<number, CallerNode>;
}

// callers merges the ancestry of every outermost occurrence of function fn
// (in DSO dso) within node z's subtree into an inverted tree rooted at fn:
// its children are its callers, up to the root.
export function callers(t: Tree, fn: number, dso: number, z = 0): CallerNode {
  const d = t.d;
  const root: CallerNode = { name: fn, n: 0, children: new Map() };
  const is = (i: number) => d.name[i] === fn && d.dso[i] === dso;
  for (let i = Math.max(1, z); i < t.end[z]; i++) {
    if (!is(i)) continue;
    let nested = false;
    for (let j = t.parent[i]; j >= z && j > 0; j = t.parent[j]) if (is(j)) nested = true;
    if (nested) continue;
    const w = d.total_n[i];
    root.n += w;
    let cur = root;
    for (let j = t.parent[i]; j > 0; j = t.parent[j]) {
      const nm = d.name[j];
      let c = cur.children.get(nm);
      if (!c) {
        c = { name: nm, n: 0, children: new Map() };
        cur.children.set(nm, c);
      }
      c.n += w;
      cur = c;
    }
  }
  return root;
}
