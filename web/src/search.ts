// SearchBar is the flame graph's search: a regular expression that ignores
// case unless "Aa" is pressed, the share of samples it matches, how many
// frames match, and next and previous to step through them (Enter and
// Shift+Enter in the box do the same). Pattern and case live in the URL.

import { h } from "./dom";
import { fmtPct } from "./format";
import { updateURL } from "./state";

// SearchTarget is what the bar searches: apply marks the frames matching
// re (null clears) and returns the share of samples they cover and the
// matching frames in order; focus points at one of them (-1: none).
export interface SearchTarget {
  apply(re: RegExp | null): { fraction: number; frames: number[] };
  focus(node: number): void;
}

export class SearchBar {
  private frames: number[] = [];
  private fraction = 0;
  private current = -1; // index into frames, -1 before the first step
  private caseBtn: HTMLButtonElement;
  private prevBtn: HTMLButtonElement;
  private nextBtn: HTMLButtonElement;
  private timer = 0;

  constructor(
    private input: HTMLInputElement,
    private status: HTMLElement,
    private target: SearchTarget,
    params: URLSearchParams,
  ) {
    this.caseBtn = h("button", { class: "seg case", text: "Aa", attrs: { type: "button", "data-testid": "search-case", title: "match case", "aria-label": "match case" } });
    this.prevBtn = h("button", { class: "seg", text: "↑", attrs: { type: "button", "data-testid": "search-prev", title: "previous match (Shift+Enter)", "aria-label": "previous match" } });
    this.nextBtn = h("button", { class: "seg", text: "↓", attrs: { type: "button", "data-testid": "search-next", title: "next match (Enter)", "aria-label": "next match" } });
    // Beside the box's label, not in it: a label holds one control.
    (input.closest("label") ?? input).after(h("span", { class: "segmented search-tools" }, this.caseBtn, this.prevBtn, this.nextBtn));
    input.setAttribute("aria-describedby", status.id || "search-match");
    input.placeholder = "regex, any case";
    status.setAttribute("aria-live", "polite");
    this.setCase(params.get("match_case") === "1");
    input.value = params.get("search") ?? "";
    input.addEventListener("input", () => {
      clearTimeout(this.timer);
      this.timer = window.setTimeout(() => {
        this.run();
        updateURL({ search: input.value || null }, false);
      }, 120);
    });
    input.addEventListener("keydown", (ev) => {
      if (ev.key !== "Enter") return;
      ev.preventDefault();
      clearTimeout(this.timer);
      if (this.pattern() !== input.value) {
        this.run();
        updateURL({ search: input.value || null }, false);
      }
      this.step(ev.shiftKey ? -1 : 1);
    });
    input.form?.addEventListener("submit", (ev) => ev.preventDefault());
    this.caseBtn.addEventListener("click", () => {
      this.setCase(this.caseBtn.getAttribute("aria-pressed") !== "true");
      updateURL({ match_case: this.matchCase() ? "1" : null }, false);
      this.run();
    });
    this.prevBtn.addEventListener("click", () => this.step(-1));
    this.nextBtn.addEventListener("click", () => this.step(1));
  }

  private ran = "";

  private pattern(): string {
    return this.ran;
  }

  private matchCase(): boolean {
    return this.caseBtn.getAttribute("aria-pressed") === "true";
  }

  private setCase(on: boolean): void {
    this.caseBtn.setAttribute("aria-pressed", String(on));
    this.caseBtn.classList.toggle("on", on);
  }

  // sync reads pattern and case from URL parameters p (back and forward).
  sync(p: URLSearchParams): void {
    this.input.value = p.get("search") ?? "";
    this.setCase(p.get("match_case") === "1");
    this.run();
  }

  // run searches for the box's pattern, as after a change of the graph
  // (zoom): the count and share are of what the graph shows.
  run(): void {
    const pattern = this.input.value;
    this.ran = pattern;
    this.input.classList.remove("invalid");
    this.current = -1;
    this.target.focus(-1);
    if (!pattern) {
      this.frames = [];
      this.target.apply(null);
      this.show();
      return;
    }
    let re: RegExp;
    try {
      re = new RegExp(pattern, this.matchCase() ? "" : "i");
    } catch {
      this.input.classList.add("invalid");
      this.frames = [];
      this.target.apply(null);
      this.status.textContent = "invalid regular expression";
      this.enable();
      return;
    }
    const r = this.target.apply(re);
    this.frames = r.frames;
    this.fraction = r.fraction;
    this.show();
  }

  // find searches for the function named name exactly, case and all.
  find(name: string): void {
    this.input.value = "^" + name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "$";
    this.setCase(true);
    updateURL({ search: this.input.value, match_case: "1" }, false);
    this.run();
  }

  // step moves to the next (1) or previous (-1) matching frame, wrapping.
  private step(dir: number): void {
    const n = this.frames.length;
    if (!n) return;
    this.current = this.current < 0 ? (dir > 0 ? 0 : n - 1) : (this.current + dir + n) % n;
    this.target.focus(this.frames[this.current]);
    this.show();
  }

  private show(): void {
    const n = this.frames.length;
    if (!this.input.value) this.status.textContent = "";
    else if (!n) this.status.textContent = "No match";
    else {
      const which = this.current >= 0 ? `${this.current + 1} of ${n}` : String(n);
      this.status.textContent = `Matched: ${fmtPct(this.fraction)} · ${which} frame${n === 1 ? "" : "s"}`;
    }
    this.enable();
  }

  private enable(): void {
    const none = this.frames.length === 0;
    this.prevBtn.disabled = none;
    this.nextBtn.disabled = none;
  }
}
