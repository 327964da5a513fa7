// View state lives in the URL query: every view is a link. These helpers read
// and write it and format times the way the server parses them (seconds from
// the profile's T0, decimals allowed, half-open ranges).

import { PARAMS } from "./params";
import type { ViewData } from "./types";

// paramsIn returns the names of a group of query parameters, from the Go
// table (params.ts is generated from query/query.go).
function paramsIn(group: string): string[] {
  return PARAMS.filter((p) => p.group === group).map((p) => p.name);
}

// Names of the query parameters that filter samples; they mean the same in
// every heatmap, cores map, flame graph and export (docs/contracts.md).
export const FILTER_PARAMS = paramsIn("filter");

// Params of the flame graph's range and the differential graph's base range.
export const RANGE_PARAMS = paramsIn("range");

// Params that shape the heatmap and cores map, and the colour scale.
export const HEATMAP_PARAMS = [...paramsIn("heatmap"), ...paramsIn("cores"), "scale"];

export function viewData(): ViewData {
  const el = document.getElementById("view-data");
  if (!el || !el.textContent) return { page: document.body.dataset.page || "" };
  try {
    return JSON.parse(el.textContent) as ViewData;
  } catch {
    return { page: document.body.dataset.page || "" };
  }
}

export function currentParams(): URLSearchParams {
  return new URLSearchParams(location.search);
}

// pick returns a copy of p holding only the named, non-empty parameters.
export function pick(p: URLSearchParams, names: string[]): URLSearchParams {
  const out = new URLSearchParams();
  for (const n of names) {
    const v = p.get(n);
    if (v !== null && v !== "") out.set(n, v);
  }
  return out;
}

// updateURL merges changes into the current query (null or "" deletes) and
// records it with pushState or replaceState.
export function updateURL(changes: Record<string, string | null>, push: boolean): URLSearchParams {
  const p = currentParams();
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === "") p.delete(k);
    else p.set(k, v);
  }
  const qs = p.toString();
  const url = location.pathname + (qs ? "?" + qs : "") + location.hash;
  if (url !== location.pathname + location.search + location.hash) {
    const state = { page: document.body.dataset.page };
    if (push) history.pushState(state, "", url);
    else history.replaceState(state, "", url);
  }
  return p;
}

// heatmapAPI returns the JSON API URL of the offset heatmap that a profile
// page with query p shows.
export function heatmapAPI(api: string, p: URLSearchParams): string {
  return `${api}/heatmap?${pick(p, [...FILTER_PARAMS, "rows", "col"])}`;
}

// flameAPI returns the JSON API URL of the flame graph (or, for diff, the
// differential graph, in format, json by default) that a flame page with
// query p shows. The server's page asks for the same URL from its head
// (server/pages.go's graphJSON).
export function flameAPI(api: string, p: URLSearchParams, diff: boolean, format = "json"): string {
  const q = pick(p, [...RANGE_PARAMS, ...FILTER_PARAMS]);
  q.set("format", format);
  return apiURL(`${api}/${diff ? "diff" : "flamegraph"}`, q);
}

// apiURL returns path with the query q written as the server writes it (Go's
// url.Values.Encode: keys sorted, each key and value escaped as
// url.QueryEscape does), so that a URL the script builds equals, byte for
// byte, the one a page's head preloads, and the fetch takes that answer.
export function apiURL(path: string, q: URLSearchParams): string {
  const parts: string[] = [];
  for (const k of [...new Set(q.keys())].sort()) {
    for (const v of q.getAll(k)) parts.push(queryEscape(k) + "=" + queryEscape(v));
  }
  return parts.length ? path + "?" + parts.join("&") : path;
}

// queryEscape escapes s as Go's url.QueryEscape: letters, digits and -_.~
// stay, a space becomes +, and every other byte of its UTF-8 is %XX.
function queryEscape(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase())
    .replace(/%20/g, "+");
}

// fmtOffset formats an integer nanosecond offset as decimal seconds without
// losing precision: 1500000000 → "1.5".
export function fmtOffset(ns: number): string {
  ns = Math.round(ns);
  const neg = ns < 0;
  if (neg) ns = -ns;
  const s = Math.floor(ns / 1e9);
  const frac = ns - s * 1e9;
  let out = String(s);
  if (frac > 0) out += "." + String(frac).padStart(9, "0").replace(/0+$/, "");
  return (neg ? "-" : "") + out;
}

// fmtMillis writes nanoseconds as decimal seconds rounded to the
// millisecond, as the host page's links and labels give them: 1500000000 →
// "1.5".
export function fmtMillis(ns: number): string {
  return String(Math.round(ns / 1e6) / 1e3);
}

// parseOffset parses decimal seconds into integer nanoseconds; NaN when bad.
export function parseOffset(s: string | null): number {
  if (s === null || !/^\s*-?\d*(\.\d*)?\s*$/.test(s) || s.trim() === "" || s.trim() === ".") return NaN;
  return Math.round(parseFloat(s) * 1e9);
}

// parseDuration parses a duration as the URLs write it, seconds ("600",
// "0.5") or with units as Go writes them ("10m", "1m30s", "1500ms"), into
// nanoseconds; NaN when bad.
export function parseDuration(s: string | null): number {
  const t = (s || "").trim();
  if (/^\d+(\.\d*)?$/.test(t)) return Math.round(parseFloat(t) * 1e9);
  const unit: Record<string, number> = { h: 3600e9, m: 60e9, s: 1e9, ms: 1e6, us: 1e3, "µs": 1e3, ns: 1 };
  let ns = 0;
  let rest = t;
  while (rest) {
    const m = /^(\d+(?:\.\d*)?)(h|ms|m|s|us|µs|ns)/.exec(rest);
    if (!m) return NaN;
    ns += parseFloat(m[1]) * unit[m[2]];
    rest = rest.slice(m[0].length);
  }
  return t ? Math.round(ns) : NaN;
}

// fmtSeconds formats seconds for labels, with precision suited to the span.
export function fmtSeconds(ns: number, spanNs = ns): string {
  const s = ns / 1e9;
  if (spanNs >= 10e9) return s.toFixed(1);
  if (spanNs >= 1e9) return s.toFixed(2);
  return s.toFixed(3);
}

// fmtTick formats an axis offset: whole seconds without decimals when the
// step is whole seconds, else with the step's precision.
export function fmtTick(ns: number, stepNs: number): string {
  if (ns % 1e9 === 0) return String(ns / 1e9);
  if (stepNs % 1e8 === 0) return (ns / 1e9).toFixed(1);
  if (stepNs % 1e7 === 0) return (ns / 1e9).toFixed(2);
  return (ns / 1e9).toFixed(3);
}

// fmtDuration formats a nanosecond duration: "340 ms", "2.5 s".
export function fmtDuration(ns: number): string {
  if (ns >= 1e9) return (ns / 1e9).toFixed(ns >= 10e9 ? 1 : 2).replace(/\.?0+$/, "") + " s";
  if (ns >= 1e6) return (ns / 1e6).toFixed(ns >= 10e6 ? 0 : 1).replace(/\.0$/, "") + " ms";
  return (ns / 1e3).toFixed(0) + " µs";
}

// cpuList formats sorted CPU ids compactly: [0,1,2,5] → "0-2,5".
export function cpuList(ids: number[]): string {
  const s = [...new Set(ids)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < s.length; ) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j] + 1) j++;
    parts.push(j > i ? `${s[i]}-${s[j]}` : String(s[i]));
    i = j + 1;
  }
  return parts.join(",");
}

// recordTiming records that name took ms milliseconds, ending at end (by
// default now), as a User Timing measure "subsecond:NAME": the browser's
// performance tools show it, and the browser tests read it with
// performance.getEntriesByType.
export function recordTiming(name: string, ms: number, end = performance.now()): void {
  try {
    performance.measure("subsecond:" + name, { end, duration: ms });
  } catch {
    /* an old browser without User Timing level 3: no record */
  }
}

// now returns milliseconds since the epoch with sub-millisecond precision, so
// a mark taken on one page can be compared on the next.
export function now(): number {
  return performance.timeOrigin + performance.now();
}

// opened is when the page shown began to open, on performance.now()'s
// clock: 0, the start of its navigation, for a page the browser loaded.
let opened = 0;

// pageStart returns when the page shown began to open, in milliseconds on
// performance.now()'s clock: 0 (its navigation's start) for a page the
// browser loaded, or when openingPage was last called for one opened in
// place.
export function pageStart(): number {
  return opened;
}

// openingPage records that a page begins to open in place, now.
export function openingPage(): void {
  opened = performance.now();
}

// handOff stores a mark for the next page; takeHandOff reads and clears it.
export function handOff(name: string): void {
  try {
    sessionStorage.setItem("subsecond." + name, String(now()));
  } catch {
    /* storage disabled: no timing */
  }
}

export function takeHandOff(name: string): number | null {
  try {
    const v = sessionStorage.getItem("subsecond." + name);
    sessionStorage.removeItem("subsecond." + name);
    return v === null ? null : parseFloat(v);
  } catch {
    return null;
  }
}

// Ways back: a flame or diff page opened from a profile view leads back to
// that very view (its bucket, rows, scale and filters), not to one rebuilt
// from its own URL, which holds the selection's CPUs and lacks the maps'
// shape. The way back is kept in sessionStorage by the target's path, range
// and filters, so zooming, searching or reloading the target keeps it.
const BACK_KEY = "subsecond.back";
const BACK_MAX = 50;

function backKey(target: string): string {
  const u = new URL(target, location.href);
  const q = pick(u.searchParams, ["start", "end", "start2", "end2", ...FILTER_PARAMS]);
  q.sort();
  return u.pathname + "?" + q.toString();
}

function backs(): [string, string][] {
  try {
    const v = JSON.parse(sessionStorage.getItem(BACK_KEY) || "[]");
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

// rememberBack records that target was opened from the page at from.
export function rememberBack(target: string, from: string): void {
  const k = backKey(target);
  const list = backs().filter(([key]) => key !== k);
  list.push([k, from]);
  try {
    sessionStorage.setItem(BACK_KEY, JSON.stringify(list.slice(-BACK_MAX)));
  } catch {
    /* storage disabled: the server's link back stays */
  }
}

// recallBack returns the page target was opened from, or null.
export function recallBack(target: string): string | null {
  const k = backKey(target);
  const hit = backs().find(([key]) => key === k);
  return hit ? hit[1] : null;
}
