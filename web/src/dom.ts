// Small DOM helpers. Every string reaches the page through text nodes or
// textContent: symbol names and comms are hostile input.

type Child = Node | string | null | undefined | false;

export interface Props {
  class?: string;
  text?: string;
  attrs?: Record<string, string>;
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (props) {
    if (props.class) e.className = props.class;
    if (props.text !== undefined) e.textContent = props.text;
    if (props.attrs) for (const [k, v] of Object.entries(props.attrs)) e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return e;
}

// $ returns the element matching sel, or null.
export function $<E extends Element = HTMLElement>(sel: string, root: ParentNode = document): E | null {
  return root.querySelector<E>(sel);
}

export function clear(e: Element): void {
  while (e.firstChild) e.removeChild(e.firstChild);
}

// setupCanvas sizes a canvas to css pixels w×h at the device pixel ratio and
// returns its 2D context scaled so that drawing uses css pixels.
export function setupCanvas(c: HTMLCanvasElement, w: number, hgt: number): CanvasRenderingContext2D {
  const dpr = sizeCanvas(c, w, hgt);
  const ctx = c.getContext("2d");
  if (!ctx) throw new Error("canvas 2D context unavailable");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

// sizeCanvas sizes a canvas to css pixels w×h at the device pixel ratio,
// which it returns, without asking for its context: a canvas's pixels are
// allocated when first drawn on, which an overlay may never be.
export function sizeCanvas(c: HTMLCanvasElement, w: number, hgt: number): number {
  const dpr = window.devicePixelRatio || 1;
  c.width = Math.max(1, Math.round(w * dpr));
  c.height = Math.max(1, Math.round(hgt * dpr));
  c.style.width = w + "px";
  c.style.height = hgt + "px";
  return dpr;
}

// Pointer is where a pointer event happened, in viewport pixels.
export interface Pointer {
  clientX: number;
  clientY: number;
}

// Tooltip is a floating box positioned near the pointer, filled by lines of text.
export class Tooltip {
  readonly el: HTMLDivElement;
  constructor() {
    this.el = h("div", { class: "tooltip", attrs: { role: "tooltip", "data-testid": "tooltip" } });
    this.el.hidden = true;
    document.body.append(this.el);
  }
  show(ev: Pointer, lines: string[]): void {
    clear(this.el);
    lines.forEach((l, i) => this.el.append(h("div", { class: i === 0 ? "tt-title" : "tt-line", text: l })));
    this.el.hidden = false;
    const pad = 14;
    const r = this.el.getBoundingClientRect();
    let x = ev.clientX + pad;
    let y = ev.clientY + pad;
    if (x + r.width > window.innerWidth - 4) x = ev.clientX - r.width - pad;
    if (y + r.height > window.innerHeight - 4) y = ev.clientY - r.height - pad;
    this.el.style.left = Math.max(4, x) + window.scrollX + "px";
    this.el.style.top = Math.max(4, y) + window.scrollY + "px";
  }
  hide(): void {
    this.el.hidden = true;
  }
}

// onNextFrame returns a function that asks for draw to run at the next
// animation frame, once however often it is asked before then.
export function onNextFrame(draw: () => void): () => void {
  let pending = false;
  return () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      draw();
    });
  };
}

// afterFrame resolves once the browser has rendered its next frame, so that
// work awaited after it does not hold back what was drawn before it.
export function afterFrame(): Promise<void> {
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

// whenIdle calls f once the browser is idle (within timeout ms at most), for
// work that may wait until a page's views are drawn.
export function whenIdle(f: () => void, timeout = 2000): void {
  if (typeof requestIdleCallback === "function") requestIdleCallback(() => f(), { timeout });
  else setTimeout(f, 200);
}
