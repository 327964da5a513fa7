// View state lives in the URL query: every view is a link. These helpers read
// and write it, build the API's URLs from it as the server builds them, and
// keep the timing marks and the ways back that outlive a page. Times in the
// URL are written by format.ts (seconds from the profile's T0, decimals
// allowed, half-open ranges).

import { path, withQuery } from "./links";
import { PARAMS } from "./params";
import type { ViewData } from "./wire";

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

// viewData returns the page's view data (the view-data script), or when it
// has none that of a page named by its body alone.
export function viewData(): ViewData {
  const bare = (): ViewData => ({ page: document.body.dataset.page || "", params: null, readOnly: false, tokenRequired: false });
  const el = document.getElementById("view-data");
  if (!el || !el.textContent) return bare();
  try {
    return JSON.parse(el.textContent) as ViewData;
  } catch {
    return bare();
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

// heatmapAPI returns the JSON API URL of the offset heatmap of profile id
// that a profile page with query p shows.
export function heatmapAPI(id: string, p: URLSearchParams): string {
  return withQuery("heatmapAPI", pick(p, [...FILTER_PARAMS, "rows", "col"]), id);
}

// flameAPI returns the JSON API URL of profile id's flame graph (or, for
// diff, its differential graph, in format, json by default) that a flame
// page with query p shows; with host, that of the host's wall-clock range
// across its captures (from, to) instead. The server's page asks for the
// same URL from its head (server/pages.go's graphJSON).
export function flameAPI(id: string, p: URLSearchParams, diff: boolean, format = "json", host = ""): string {
  const q = pick(p, [...RANGE_PARAMS, ...FILTER_PARAMS]);
  q.set("format", format);
  if (host) return apiURL(path(diff ? "hostDiffAPI" : "hostFlameAPI", host), q);
  return apiURL(path(diff ? "diffAPI" : "flameAPI", id), q);
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
