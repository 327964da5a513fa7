// Wall-clock time on the pages. A capture recorded with perf record -k
// CLOCK_REALTIME (or whose header dates it) knows when each sample was
// taken: the pages then show times of day beside the offsets from T0 that
// their URLs use, in UTC or, with tz=local in the URL, in the browser's
// time zone; "≈" marks a time estimated from perf's "# captured on". With
// tz=offset a capture's views show seconds from its start alone, as
// FlameScope does; a host's night, which has no one start, stays in UTC.
// The server renders times as <time data-clock> elements in UTC; localize
// rewrites them in the zone asked for, and the header's Times toggle
// switches it for every view of the page at once. The choice follows the
// user: links carry it (withTZ), and back and forward bring it to the
// pages they return to (followTZ).

import { h, whenIdle } from "./dom";
import { currentParams, updateURL } from "./state";
import { fmtTick } from "./format";
import { API_PREFIX } from "./links";
import type { WallJSON } from "./wire";

// Zone is how the pages show times: times of day in UTC or in the
// browser's zone, or seconds from a capture's start.
export type Zone = "utc" | "local" | "offset";

// TZ_EVENT is dispatched on window when the Times toggle changes the zone.
export const TZ_EVENT = "subsecond:tz";

// TZ_KEY keeps the zone last shown in the tab (sessionStorage), for the
// pages that back and forward return to.
const TZ_KEY = "subsecond.tz";

// zone returns the zone the URL asks for: tz=local, tz=offset, or UTC.
export function zone(p: URLSearchParams = currentParams()): Zone {
  return asZone(p.get("tz")) || "utc";
}

// asZone returns v when it names a zone, else null.
function asZone(v: string | null): Zone | null {
  return v === "utc" || v === "local" || v === "offset" ? v : null;
}

// setTZParam puts z into the query p as a URL carries it: tz=local,
// tz=offset, or nothing for UTC.
function setTZParam(p: URLSearchParams, z: Zone): void {
  if (z === "utc") p.delete("tz");
  else p.set("tz", z);
}

const pad = (n: number, w = 2) => String(n).padStart(w, "0");

// fmtWallParam writes Unix nanoseconds as a URL's wall-clock time (the
// table's walltime, subsecond.ParseWallTime): RFC 3339 in UTC with as many
// decimals as the time needs ("2026-11-30T03:01:10Z", "…:10.25Z"), so that
// parseWallParam gives the same number back.
export function fmtWallParam(ns: number): string {
  const s = Math.floor(ns / 1e9);
  const frac = Math.round(ns - s * 1e9);
  const day = new Date(s * 1000).toISOString().slice(0, 19);
  return day + (frac > 0 ? "." + pad(frac, 9).replace(/0+$/, "") : "") + "Z";
}

// fmtISO writes Unix nanoseconds as an ISO 8601 time in UTC to the
// millisecond ("2026-11-30T03:01:10.250Z"), as the host page's URLs give it.
export function fmtISO(ns: number): string {
  return new Date(Math.round(ns / 1e6)).toISOString();
}

// parseWallParam reads a URL's wall-clock time, RFC 3339 or Unix seconds,
// as Unix nanoseconds; NaN when it is neither.
export function parseWallParam(v: string | null): number {
  const t = (v || "").trim();
  if (/^\d+(\.\d*)?$/.test(t)) return Math.round(parseFloat(t) * 1e9);
  const m = /^(\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?([Zz]|[+-]\d\d:\d\d)$/.exec(t);
  if (!m) return NaN;
  const ms = Date.parse(m[1].replace(/[t ]/, "T") + (m[3].toUpperCase() === "Z" ? "Z" : m[3]));
  return Number.isNaN(ms) ? NaN : ms * 1e6 + Number((m[2] || "").padEnd(9, "0"));
}

// fmtClock writes Unix nanoseconds as a time of day to the millisecond,
// without trailing zeros ("00:17:05.5", "00:17:07"), with date first when
// asked ("2026-11-30 00:17:05.5"), in zone z (UTC unless "local"): as the
// server's web.Clock does for UTC. digits rounds to fewer decimals (axis
// ticks need fewer). The rounding is done in whole milliseconds, which a
// number holds exactly, unlike Unix nanoseconds.
export function fmtClock(ns: number, date = false, z: Zone = zone(), digits = 3): string {
  const unit = 10 ** (3 - digits);
  const d = new Date(Math.round(Math.round(ns / 1e6) / unit) * unit);
  const local = z === "local";
  const Y = local ? d.getFullYear() : d.getUTCFullYear();
  const M = (local ? d.getMonth() : d.getUTCMonth()) + 1;
  const D = local ? d.getDate() : d.getUTCDate();
  const hh = local ? d.getHours() : d.getUTCHours();
  const mm = local ? d.getMinutes() : d.getUTCMinutes();
  const ss = local ? d.getSeconds() : d.getUTCSeconds();
  const ms = local ? d.getMilliseconds() : d.getUTCMilliseconds();
  let t = `${pad(hh)}:${pad(mm)}:${pad(ss)}`;
  const frac = pad(ms, 3).slice(0, digits).replace(/0+$/, "");
  if (frac) t += "." + frac;
  return date ? `${Y}-${pad(M)}-${pad(D)} ${t}` : t;
}

// zoneName names the zone times of day are written in for labels: "UTC",
// or with z "local" the browser's zone as it abbreviates it at Unix time ns
// ("CET", "GMT+5:30").
export function zoneName(z: Zone = zone(), ns = Date.now() * 1e6): string {
  if (z !== "local") return "UTC";
  try {
    const parts = new Intl.DateTimeFormat(undefined, { timeZoneName: "short" }).formatToParts(new Date(ns / 1e6));
    return parts.find((p) => p.type === "timeZoneName")?.value || "local";
  } catch {
    return "local";
  }
}

// fmtWallRange writes [from, to) (Unix nanoseconds) as times of day with
// the zone's name, "≈" first when approximate and the date first when
// asked: "≈ 2026-11-30 00:17:05.5–00:17:07 UTC".
export function fmtWallRange(from: number, to: number, approximate = false, date = false): string {
  // With dates, the end's too when it falls on another day.
  const toDate = date && fmtClock(from, true).slice(0, 10) !== fmtClock(to, true).slice(0, 10);
  return `${approximate ? "≈ " : ""}${fmtClock(from, date)}–${fmtClock(to, toDate)} ${zoneName(zone(), from)}`;
}

// wallSpan builds what the server's wallRange component writes: [from, to)
// (Unix nanoseconds) as <time> elements, which localize rewrites, and the
// zone's name; "≈" first when approximate.
export function wallSpan(from: number, to: number, approximate: boolean, testid: string): HTMLElement {
  const time = (ns: number) =>
    h("time", { text: fmtClock(ns), attrs: { datetime: new Date(Math.round(ns / 1e6)).toISOString(), "data-clock": "time" } });
  return h(
    "span",
    { class: "wall", attrs: { "data-testid": testid } },
    approximate ? "≈ " : null,
    time(from),
    "–",
    time(to),
    " ",
    h("span", { text: zoneName(zone(), from), attrs: { "data-zone": "" } }),
  );
}

// Clock ties a profile's offsets from its T0 to the wall clock, when the
// profile has one.
export class Clock {
  constructor(
    readonly t0: number, // the profile's T0, on its own clock
    private wall: WallJSON | null | undefined,
  ) {}

  // known reports whether the profile's samples have wall-clock times.
  get known(): boolean {
    return !!this.wall && !!this.wall.source;
  }

  // shown reports whether the views show times of day: the clock is known
  // and the URL does not ask for seconds from the start alone.
  get shown(): boolean {
    return this.known && zone() !== "offset";
  }

  // approximate reports whether the times are estimates.
  get approximate(): boolean {
    return !!this.wall?.approximate;
  }

  // mark is "≈ " when the times are estimates, else "".
  get mark(): string {
    return this.approximate ? "≈ " : "";
  }

  // at returns the Unix nanoseconds of offset ns from T0.
  at(offset: number): number {
    return this.t0 + offset + (this.wall?.offset_ns || 0);
  }

  // tick labels an axis at offset with the decimals its step needs, and
  // more when the time itself needs them to the millisecond (an estimated
  // clock's ticks fall between whole seconds): "00:17:05", "00:17:05.5",
  // "00:17:05.51".
  tick(offset: number, stepNs: number): string {
    const ms = Math.round(this.at(offset) / 1e6);
    let digits = stepNs % 1e9 === 0 ? 0 : stepNs % 1e8 === 0 ? 1 : stepNs % 1e7 === 0 ? 2 : 3;
    while (digits < 3 && ms % 10 ** (3 - digits) !== 0) digits++;
    return fmtClock(ms * 1e6, false, zone(), digits);
  }

  // axisTitle names an axis of times of day: "UTC", "≈ UTC", "CET".
  axisTitle(): string {
    return this.mark + zoneName(zone(), this.at(0));
  }

  // range writes [s, e) (offsets) as times of day, with the zone:
  // "≈ 00:17:05.5–00:17:07 UTC"; "" when the wall clock is unknown.
  range(s: number, e: number): string {
    if (!this.known) return "";
    return fmtWallRange(this.at(s), this.at(e), this.approximate);
  }

  // suffix is range(s, e) to follow a range in seconds when times of day
  // are shown: " · ≈ 00:17:05.5–00:17:07 UTC", or "".
  suffix(s: number, e: number): string {
    return this.shown ? " · " + this.range(s, e) : "";
  }
}

// Axis is how a time axis labels its ticks: times of day when the clock
// shows them, else seconds from T0; gap is the least room a label needs
// (px) and unit names the axis ("s", "UTC", "≈ CET").
export interface Axis {
  label(offset: number): string;
  gap: number;
  unit: string;
}

// axis returns the time axis of ticks stepNs apart for clock (none: seconds
// from T0), leaving at least gap px between labels in seconds.
export function axis(clock: Clock | null | undefined, stepNs: number, gap = 44): Axis {
  if (clock && clock.shown) return { label: (o) => clock.tick(o, stepNs), gap: Math.max(gap, 64), unit: clock.axisTitle() };
  return { label: (o) => fmtTick(o, stepNs), gap, unit: "s" };
}

// localize rewrites the server's <time data-clock> elements and zone names
// ([data-zone]) under root in the zone the URL asks for, and marks the
// body with it (data-tz) for the style sheet.
export function localize(root: ParentNode = document): void {
  const z = zone();
  document.body.dataset.tz = z;
  for (const el of Array.from(root.querySelectorAll<HTMLTimeElement>("time[data-clock]"))) {
    const ms = Date.parse(el.dateTime);
    if (Number.isNaN(ms)) continue;
    el.textContent = fmtClock(ms * 1e6, el.dataset.clock === "date", z);
  }
  for (const el of Array.from(root.querySelectorAll<HTMLElement>("[data-zone]"))) {
    const t = el.closest("[data-testid]")?.querySelector<HTMLTimeElement>("time[data-clock]");
    el.textContent = zoneName(z, t ? Date.parse(t.dateTime) * 1e6 : undefined);
  }
}

// remember keeps z as the tab's zone (TZ_KEY).
function remember(z: Zone): void {
  try {
    sessionStorage.setItem(TZ_KEY, z);
  } catch {
    /* storage disabled: links still carry the zone */
  }
}

function remembered(): Zone | null {
  try {
    return asZone(sessionStorage.getItem(TZ_KEY));
  } catch {
    return null;
  }
}

// setZone puts z in the URL (nothing for UTC) without a new history
// entry, rewrites the page's times and tells its views (TZ_EVENT).
function setZone(z: Zone): void {
  remember(z);
  updateURL({ tz: z === "utc" ? null : z }, false);
  localize();
  const sel = document.querySelector<HTMLSelectElement>("select[data-testid=tz]");
  if (sel) sel.value = optionFor(sel, z);
  window.dispatchEvent(new Event(TZ_EVENT));
}

// optionFor returns the toggle's option for z: a host's pages, which have
// no seconds from a start, show UTC for tz=offset.
function optionFor(sel: HTMLSelectElement, z: Zone): Zone {
  return Array.from(sel.options).some((o) => o.value === z) ? z : "utc";
}

// setupTZ fits the page to the zone in the URL and wires the header's
// Times toggle: a change goes into the URL (tz=local, tz=offset, or
// nothing for UTC), rewrites the server's times and tells the page's
// views (TZ_EVENT).
export function setupTZ(): void {
  const z = zone();
  remember(z);
  localize();
  const sel = document.querySelector<HTMLSelectElement>("select[data-testid=tz]");
  if (!sel) return;
  // Naming the zone loads the browser's time-zone names (some 10 ms on a
  // tab's first page), so the local choice is named once the page's views
  // are drawn, or as soon as the list is reached.
  const local = sel.querySelector<HTMLOptionElement>("option[value=local]");
  let named = false;
  const name = () => {
    if (named || !local) return;
    named = true;
    local.textContent = `local (${zoneName("local")})`;
  };
  whenIdle(name);
  sel.addEventListener("focus", name);
  sel.addEventListener("pointerdown", name);
  sel.value = optionFor(sel, z);
  sel.addEventListener("change", () => setZone(asZone(sel.value) || "utc"));
}

// followTZ makes back and forward keep the zone last chosen in the tab:
// the entry returned to gets it in its URL before the page reads that URL
// (followTZ must run before the page boots and before any other popstate
// listener), and a page restored from the back-forward cache is shown in
// it.
export function followTZ(): void {
  const follow = (state: unknown) => {
    const z = remembered();
    if (!z || z === zone()) return;
    const p = currentParams();
    setTZParam(p, z);
    const qs = p.toString();
    history.replaceState(state, "", location.pathname + (qs ? "?" + qs : "") + location.hash);
  };
  const nav = performance.getEntriesByType?.("navigation")[0] as PerformanceNavigationTiming | undefined;
  if (nav?.type === "back_forward") follow(history.state);
  window.addEventListener("popstate", (ev) => follow(ev.state));
  window.addEventListener("pageshow", (ev) => {
    const z = remembered();
    if (ev.persisted && z && z !== zone()) setZone(z);
  });
}

// withTZ returns the same-site page link href carrying the page's zone
// (tz=local, tz=offset, or none for UTC), so that the zone follows the
// user from page to page; other links as they are.
export function withTZ(href: string): string {
  try {
    const u = new URL(href, location.href);
    if (u.origin !== location.origin || u.pathname.startsWith(API_PREFIX)) return href;
    const z = zone();
    const had = u.searchParams.get("tz");
    setTZParam(u.searchParams, z);
    if (had === u.searchParams.get("tz")) return href;
    return u.pathname + u.search + u.hash;
  } catch {
    return href;
  }
}

// keepTZOnLinks makes every same-site link followed from the page carry
// the zone (withTZ), whoever rendered it.
export function keepTZOnLinks(): void {
  document.addEventListener(
    "click",
    (ev) => {
      const a = ev.target instanceof Element ? ev.target.closest<HTMLAnchorElement>("a[href]") : null;
      if (!a || a.hasAttribute("download")) return;
      const to = withTZ(a.getAttribute("href") || "");
      if (to !== a.getAttribute("href")) a.setAttribute("href", to);
    },
    true,
  );
}
