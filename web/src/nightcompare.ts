// Comparing across a host's night: the host page's Compare panel picks a
// target (a range Shift+dragged on the night's map, whose rows are its CPUs,
// or a hot spot) and a baseline (the same place in the previous capture,
// the same range some minutes earlier, or a second Shift+drag), and opens
// the differential flame graph of the host's two wall-clock ranges
// (/hosts/HOST/diff?cpu&from&to&from2&to2), each across the captures that
// recorded it, whose page says how much of either was not recorded. The
// panel's choices live in the URL (compare_from, compare_to, compare_cpu,
// compare_with, compare_earlier, compare_from2, compare_to2: the table's
// page parameters, query/query.go), so a reload, Back or a shared link
// brings them back.

import { getJSON } from "./api";
import { withQuery } from "./links";
import { $, h } from "./dom";
import { currentParams, rememberBack, updateURL } from "./state";
import { cpuList, displayRange, fmtOffset, parseDuration } from "./format";
import type { CaptureList, NightCapture } from "./wire";
import { PARAMS } from "./params";
import { fmtWallParam, fmtWallRange, parseWallParam, TZ_EVENT, withTZ } from "./wallclock";

// Side is one side of a comparison: [from, to) in wall-clock Unix
// nanoseconds of the host, from the first to the last instant its captures
// caps (in time order) recorded; cap is the one of them holding most of it.
export interface Side {
  cap: NightCapture;
  caps: NightCapture[];
  from: number;
  to: number;
}

type Mode = "previous" | "earlier" | "pick";

// onHost returns the part of [from, to) that the captures of caps record,
// from the first instant one holds to the last, or null when none holds
// any.
export function onHost(caps: NightCapture[], from: number, to: number): Side | null {
  let side: Side | null = null;
  let most = 0;
  for (const cap of caps) {
    const lo = Math.max(from, cap.start_ns);
    const hi = Math.min(to, cap.end_ns);
    if (hi <= lo) continue;
    if (!side) side = { cap, caps: [], from: lo, to: hi };
    side.caps.push(cap);
    side.from = Math.min(side.from, lo);
    side.to = Math.max(side.to, hi);
    if (hi - lo > most) {
      most = hi - lo;
      side.cap = cap;
    }
  }
  return side;
}

// MAX_PER_PAGE is the largest page of a list the server sends (query.MaxPerPage).
const MAX_PER_PAGE = PARAMS.find((p) => p.name === "per_page")!.max;

// allCaptures returns every capture of host, in time order: the pages of
// its capture list, each as large as the server allows, followed by their
// next links.
export async function allCaptures(host: string): Promise<NightCapture[]> {
  const out: NightCapture[] = [];
  let url: string | undefined = withQuery("capturesAPI", new URLSearchParams({ per_page: String(MAX_PER_PAGE) }), host);
  while (url) {
    const page: CaptureList = await getJSON<CaptureList>(url);
    out.push(...(page.captures || []));
    url = page.next;
  }
  return out;
}

// BUCKET is the cores map's resolution, to which the distance between two
// captures' starts is rounded, as the server's hot spots round it.
const BUCKET = 1e8;

// baselineOf returns the baseline of target by mode, or why there is none:
// the same place in the capture before the target's ("previous": the
// target shifted by the difference of the two captures' starts, to 0.1 s),
// the same range minutes earlier ("earlier"), or the range picked on the
// map ("pick").
export function baselineOf(caps: NightCapture[], target: Side, mode: Mode, minutes: number, picked: Side | null): Side | string {
  const len = target.to - target.from;
  switch (mode) {
    case "previous": {
      const i = caps.findIndex((c) => c.id === target.cap.id);
      if (i <= 0) return "the target is in the host's first capture: choose another baseline";
      const prev = caps[i - 1];
      const from = target.from - Math.round((target.cap.start_ns - prev.start_ns) / BUCKET) * BUCKET;
      if (!onHost([prev], from, from + len)) return `${prev.name || prev.id} is shorter than the target's place in its capture: choose another baseline`;
      return onHost(caps, from, from + len)!;
    }
    case "earlier": {
      if (!(minutes > 0)) return "give how many minutes earlier";
      const shift = Math.round(minutes * 60e9);
      const from = target.from - shift;
      return onHost(caps, from, from + len) || `no capture holds ${fmtWallRange(from, from + len)}: choose another baseline`;
    }
    case "pick":
      return picked || "Shift+drag across the map to pick the baseline";
  }
}

// diffURL returns the differential flame graph of host's ranges from base
// to target for the CPUs cpus ("" for all).
export function diffURL(host: string, target: Side, base: Side, cpus: string): string {
  const q = new URLSearchParams();
  if (cpus) q.set("cpu", cpus);
  q.set("from", fmtWallParam(target.from));
  q.set("to", fmtWallParam(target.to));
  q.set("from2", fmtWallParam(base.from));
  q.set("to2", fmtWallParam(base.to));
  return withQuery("hostDiffPage", q, host);
}

// describe writes a side for the panel: "03:01:10–03:01:20 UTC in
// capture-1, 10–20 s (10 s)", or across a rotation point "03:00:58–03:01:03 UTC
// across capture-0 and capture-1".
function describe(s: Side): string {
  const wall = fmtWallRange(s.from, s.to, s.caps.some((c) => c.approximate), true);
  if (s.caps.length > 1) {
    const names = s.caps.map((c) => c.name || c.id);
    return `${wall} across ${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
  }
  const base = s.cap.offset_ns + s.cap.t0_ns;
  return `${wall} in ${s.cap.name || s.cap.id}, ${displayRange(s.from - base, s.to - base)}`;
}

// NightCompare is the host page's Compare panel and its marks on the map.
export class NightCompare {
  private caps: Promise<NightCapture[]> | null = null;
  private loaded: NightCapture[] = []; // the captures, once fetched
  private target: Side | null = null;
  private picked: Side | null = null;
  private marks: Record<"target" | "base", HTMLElement>;
  private place: ((t: number) => number) | null = null;
  private height = "0px";
  // ready is false until the panel has read its choices from the URL; it
  // writes them back only then.
  private ready = false;

  constructor(
    private host: string,
    map: HTMLElement,
  ) {
    this.marks = {
      target: h("div", { class: "night-pick target", text: "target", attrs: { "data-testid": "pick-target" } }),
      base: h("div", { class: "night-pick base", text: "baseline", attrs: { "data-testid": "pick-base" } }),
    };
    for (const m of Object.values(this.marks)) {
      m.hidden = true;
      map.append(m);
    }
    this.mode()?.addEventListener("change", () => this.show());
    this.minutes()?.addEventListener("input", () => this.show());
    this.cpus()?.addEventListener("input", () => this.show());
    $("#compare-clear")?.addEventListener("click", () => {
      this.target = this.picked = null;
      const cpus = this.cpus();
      if (cpus) cpus.value = "";
      this.show();
    });
    $("#compare-open")?.addEventListener("click", (ev) => {
      const a = ev.currentTarget as HTMLAnchorElement;
      if (!a.getAttribute("href")) ev.preventDefault();
      else rememberBack(a.href, location.href);
    });
    window.addEventListener(TZ_EVENT, () => {
      if (map.isConnected) this.render();
    });
    window.addEventListener("popstate", () => {
      if (map.isConnected) this.restore();
    });
    this.render();
    this.restore();
  }

  // restore sets the panel's choices from the URL: on load, and when Back
  // or Forward returns to another of the page's entries.
  private restore(): void {
    const p = currentParams();
    const mode = this.mode();
    const chosen = p.get("compare_with");
    if (mode) mode.value = chosen === "earlier" || chosen === "pick" ? chosen : "previous";
    const minutes = this.minutes();
    const earlier = parseDuration(p.get("compare_earlier"));
    if (minutes) minutes.value = earlier > 0 ? String(earlier / 60e9) : minutes.defaultValue;
    const cpus = this.cpus();
    if (cpus) cpus.value = p.get("compare_cpu") || "";
    const from = parseWallParam(p.get("compare_from"));
    const to = parseWallParam(p.get("compare_to"));
    const from2 = parseWallParam(p.get("compare_from2"));
    const to2 = parseWallParam(p.get("compare_to2"));
    this.ready = false;
    void this.captures().then(
      (caps) => {
        this.loaded = caps;
        this.target = to > from ? onHost(caps, from, to) : null;
        this.picked = this.target && to2 > from2 ? onHost(caps, from2, to2) : null;
        this.ready = true;
        this.render();
        if (to > from && !this.target) this.say(`No capture holds the link's target range ${fmtWallRange(from, to)}: pick another.`);
      },
      (e) => this.say(String(e)),
    );
  }

  // save writes the panel's choices into the URL with replaceState: unlike
  // a zoom, which pushes an entry, they are settings of the view, not steps
  // that Back should undo.
  private save(): void {
    if (!this.ready) return;
    const t = this.target;
    const mode = this.chosenMode();
    const minutes = this.chosenMinutes();
    const picked = t && mode === "pick" ? this.picked : null;
    updateURL(
      {
        compare_from: t ? fmtWallParam(t.from) : null,
        compare_to: t ? fmtWallParam(t.to) : null,
        compare_cpu: t ? this.chosenCPUs() : null,
        compare_with: mode === "previous" ? null : mode,
        compare_earlier: mode === "earlier" && minutes > 0 ? fmtOffset(Math.round(minutes * 60e9)) : null,
        compare_from2: picked ? fmtWallParam(picked.from) : null,
        compare_to2: picked ? fmtWallParam(picked.to) : null,
      },
      false,
    );
  }

  private mode = () => $<HTMLSelectElement>("#compare-mode");
  private minutes = () => $<HTMLInputElement>("#compare-minutes");
  private cpus = () => $<HTMLInputElement>("#compare-cpu");
  // chosenMode, chosenMinutes and chosenCPUs read the panel's choices.
  private chosenMode = (): Mode => (this.mode()?.value as Mode) || "previous";
  private chosenMinutes = () => parseFloat(this.minutes()?.value || "");
  private chosenCPUs = () => (this.cpus()?.value || "").trim();

  // captures returns the host's captures, fetched once.
  private captures(): Promise<NightCapture[]> {
    this.caps ??= allCaptures(this.host);
    return this.caps;
  }

  // pick takes a range Shift+dragged on the map, [from, to) on the wall
  // clock across CPUs cpus (null: all): the baseline when the panel waits
  // for one, else the target.
  async pick(from: number, to: number, cpus: number[] | null): Promise<void> {
    const side = onHost(await this.captures(), from, to);
    if (!side) {
      this.say("No capture holds that range: pick one on a capture, not in a gap.");
      return;
    }
    if (this.target && this.chosenMode() === "pick") this.picked = side;
    else this.setTarget(side, cpus);
    this.show();
  }

  // pickSpot takes a hot spot as the target: its CPU over the host's
  // range [from, to).
  async pickSpot(cpu: number, from: number, to: number): Promise<void> {
    const side = onHost(await this.captures(), from, to);
    if (!side) return;
    this.setTarget(side, [cpu]);
    this.show();
    $("#night-compare")?.scrollIntoView({ block: "nearest" });
  }

  private setTarget(side: Side, cpus: number[] | null): void {
    this.target = side;
    this.picked = null;
    const input = this.cpus();
    if (input) input.value = cpus ? cpuList(cpus) : "";
  }

  // layout places the marks: t maps wall-clock time to x in the map, and
  // height is the map's.
  layout(t: (ns: number) => number, height: string): void {
    this.place = t;
    this.height = height;
    this.drawMarks();
  }

  // drawMarks places the target's mark and its baseline's (base, unless
  // the caller has it already).
  private drawMarks(base: Side | string = this.baseline()): void {
    for (const [k, s] of [
      ["target", this.target],
      ["base", typeof base === "string" ? null : base],
    ] as const) {
      const m = this.marks[k];
      m.hidden = !s || !this.place;
      if (!s || !this.place) continue;
      const a = this.place(s.from);
      const b = this.place(s.to);
      m.style.left = a + "px";
      m.style.width = Math.max(2, b - a) + "px";
      m.style.height = this.height;
    }
  }

  // baseline returns the target's baseline as the panel asks for it, or
  // why there is none.
  private baseline(): Side | string {
    if (!this.target) return "";
    return baselineOf(this.loaded, this.target, this.chosenMode(), this.chosenMinutes(), this.picked);
  }

  private say(text: string): void {
    const el = $("#compare-hint");
    if (el) el.textContent = text;
  }

  // show writes the panel: the target, the baseline or why there is none,
  // and the link to the differential flame graph.
  private show(): void {
    void this.captures().then((caps) => {
      this.loaded = caps;
      this.render();
    }, (e) => this.say(String(e)));
  }

  private render(): void {
    const mode = this.chosenMode();
    const body = $("#compare-body");
    if (body) body.hidden = !this.target;
    const minutes = $("#compare-minutes-label");
    if (minutes) minutes.hidden = mode !== "earlier";
    const targetEl = $("#compare-target");
    const baseEl = $("#compare-base");
    const open = $<HTMLAnchorElement>("#compare-open");
    const base = this.baseline();
    if (targetEl) targetEl.textContent = this.target ? describe(this.target) : "none yet";
    if (baseEl) baseEl.textContent = typeof base === "string" ? base : describe(base);
    if (open) {
      if (this.target && typeof base !== "string") {
        open.href = withTZ(diffURL(this.host, this.target, base, this.chosenCPUs()));
        open.removeAttribute("aria-disabled");
      } else {
        open.removeAttribute("href");
        open.setAttribute("aria-disabled", "true");
      }
    }
    this.say(
      !this.target
        ? "Shift+drag across the map to pick the target range (the rows it crosses are its CPUs), or a hot spot's compare…; then choose its baseline."
        : mode === "pick"
          ? "Shift+drag across the map to pick the baseline; Clear to start again."
          : "The target and its baseline; Clear to start again.",
    );
    this.drawMarks(base);
    this.save();
  }
}
