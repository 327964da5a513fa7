// The host page's time axes (the night map's and the comm share line's):
// ticks on round wall-clock times in the page's zone (…:00, :15, :30 at
// hour scales, round minutes or seconds finer), written as text in the
// page so that they follow its colours and can be read and measured, with
// the date under a tick when the range crosses midnight or a session
// boundary.

import { clear, h } from "./dom";
import { fmtClock, zone, zoneName, type Zone } from "./wallclock";

// Tick is one labelled time of an axis: Unix ns, its time of day, and its
// date when the axis shows dates and it is the first tick of its day.
export interface Tick {
  ns: number;
  label: string;
  date: string | null;
}

// STEPS are the spacings ticks may have, in seconds: each divides the next
// larger unit, so ticks fall on round times.
const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800];

// MIN_GAP is the least distance between two labels, css px: room for a
// date and a gap.
const MIN_GAP = 110;

// zoneOffset is what to add to Unix ns for the zone's wall clock read as
// UTC.
function zoneOffset(ns: number, z: Zone): number {
  return z === "local" ? -new Date(ns / 1e6).getTimezoneOffset() * 60e9 : 0;
}

// dayOf is the date of Unix ns in zone z, "2026-11-30".
function dayOf(ns: number, z: Zone): string {
  return fmtClock(ns, true, z, 0).slice(0, 10);
}

// wallTicks returns the ticks of [from, to) drawn px wide in zone z: the
// roundest spacing that keeps labels MIN_GAP apart. Dates are shown when
// the range crosses midnight in z, or when dates is set (the caller's
// range crosses a session boundary).
export function wallTicks(from: number, to: number, px: number, dates = false, z: Zone = zone()): Tick[] {
  const span = to - from;
  if (!(span > 0) || !(px > 0)) return [];
  const least = (span * MIN_GAP) / px / 1e9;
  const step = (STEPS.find((s) => s >= least) ?? Math.ceil(least / 604800) * 604800) * 1e9;
  const withDates = dates || dayOf(from, z) !== dayOf(to - 1, z);
  const out: Tick[] = [];
  let lastDay = "";
  // Steps are counted on the zone's clock, so that a local tick falls on
  // a round local time.
  const off = zoneOffset(from, z);
  for (let local = Math.ceil((from + off) / step) * step; ; local += step) {
    const ns = local - zoneOffset(local - off, z);
    if (ns >= to) break;
    if (ns < from) continue;
    const day = dayOf(ns, z);
    const label = fmtClock(ns, false, z, 0);
    out.push({ ns, label: step >= 60e9 ? label.slice(0, 5) : label, date: withDates && day !== lastDay ? day : null });
    lastDay = day;
  }
  return out;
}

// drawAxis writes ticks into box, an element as wide as the plot plus its
// left margin (left px), each label centred on its time but kept inside
// the box, and the axis title (the zone's name) in its own line below
// them, where no label can cover it.
export function drawAxis(box: HTMLElement, ticks: Tick[], x: (ns: number) => number): void {
  clear(box);
  const width = box.clientWidth;
  const labels: HTMLElement[] = [];
  for (const t of ticks) {
    const el = h("span", { class: "tick", attrs: { "data-ns": String(t.ns) } }, h("span", { text: t.label }));
    if (t.date) el.append(h("span", { class: "date", text: t.date }));
    box.append(el);
    labels.push(el);
  }
  ticks.forEach((t, i) => {
    const el = labels[i];
    const w = el.offsetWidth;
    el.style.left = Math.max(0, Math.min(width - w, x(t.ns) - w / 2)) + "px";
  });
  const from = ticks[0]?.ns ?? Date.now() * 1e6;
  box.append(h("div", { class: "axis-title", text: `time of day (${zoneName(zone(), from)})` }));
}
