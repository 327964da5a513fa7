// Formats of numbers, times and CPU lists for labels, tooltips and URLs:
// offsets and durations in integer nanoseconds written as the server writes
// and parses them, counts and percentages as the server's pages write them.

import { PERCENT_DIGITS, PERCENT_FLOOR, PERCENT_WIDE, PERCENT_WIDE_DIGITS } from "./wire";

// fmtInt formats n, rounded, with thousands separators as en-US writes
// them: 1,234,567. It is written out rather than left to toLocaleString,
// which costs a locale lookup per call (tables format thousands of cells).
export function fmtInt(n: number): string {
  const r = Math.round(n);
  if (!Number.isFinite(r)) return String(r);
  return String(r === 0 ? 0 : r).replace(/\B(?=(\d{3})+$)/g, ",");
}

// fmtPct formats a fraction 0..1 as a percentage with the server's
// precision (web.Percent, whose constants wire.ts carries): "0%", "<0.01%",
// two decimals below 10%, else one: "4.25%", "99.8%", "100.0%".
export function fmtPct(f: number): string {
  const p = f * 100;
  if (p === 0) return "0%";
  if (p < PERCENT_FLOOR) return "<" + PERCENT_FLOOR + "%";
  if (p < PERCENT_WIDE) return p.toFixed(PERCENT_DIGITS) + "%";
  return p.toFixed(PERCENT_WIDE_DIGITS) + "%";
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

// fmtTick formats an axis offset: whole seconds without decimals when the
// step is whole seconds, else with the step's precision.
export function fmtTick(ns: number, stepNs: number): string {
  if (ns % 1e9 === 0) return String(ns / 1e9);
  if (stepNs % 1e8 === 0) return (ns / 1e9).toFixed(1);
  if (stepNs % 1e7 === 0) return (ns / 1e9).toFixed(2);
  return (ns / 1e9).toFixed(3);
}

// roundMillis returns ns nanoseconds in whole milliseconds, halves away
// from zero, as query's roundMillis does: in integers, exact for any
// offset a number holds exactly (below 2^53 ns, some 104 days).
function roundMillis(ns: number): number {
  const a = Math.abs(Math.round(ns));
  const r = a % 1e6;
  const q = (a - r) / 1e6 + (r >= 5e5 ? 1 : 0);
  return ns < 0 && q !== 0 ? -q : q;
}

// millis writes ms whole milliseconds as decimal seconds without trailing
// zeros: 1500 → "1.5", -5000 → "-5".
function millis(ms: number): string {
  const a = Math.abs(ms);
  const f = a % 1000;
  const s = String((a - f) / 1000) + (f ? "." + String(f).padStart(3, "0").replace(/0+$/, "") : "");
  return ms < 0 ? "-" + s : s;
}

// displaySeconds writes an offset of ns nanoseconds for people as the
// server does (query.DisplaySeconds): decimal seconds to the millisecond,
// halves away from zero, without trailing zeros: 119998950001 →
// "119.999", -5e9 → "-5". URLs take fmtOffset's exact seconds instead.
export function displaySeconds(ns: number): string {
  return millis(roundMillis(ns));
}

// displayDuration writes a duration of ns nanoseconds for people as the
// server does (query.DisplayDuration): to the millisecond, in seconds below
// a minute ("0.85 s", "59.999 s"), as Go writes a duration from a minute on
// ("1m0s", "1m59.999s", "2h0m5.5s"); "<0.001 s" when shorter than half a
// millisecond but not zero.
export function displayDuration(ns: number): string {
  let ms = roundMillis(ns);
  let sign = "";
  if (ms < 0) {
    sign = "-";
    ms = -ms;
  }
  if (ms === 0 && ns !== 0) return "<0.001 s";
  if (ms < 60_000) return sign + millis(ms) + " s";
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  return sign + (h > 0 ? h + "h" : "") + m + "m" + millis(ms % 60_000) + "s";
}

// displayRange writes the range [start, end) of offsets (ns) for people as
// the server does (query.DisplayRange): "0–119.999 s (1m59.999s)", the
// length being end-start rounded.
export function displayRange(start: number, end: number): string {
  return `${displaySeconds(start)}–${displaySeconds(end)} s (${displayDuration(end - start)})`;
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

// fmtValue writes a host series' value in its kind's unit as the server
// does (web.FormatValue): "97.5%", "1204/s", "3.5/s", "512 MiB", "68680".
export function fmtValue(v: number, unit: string): string {
  switch (unit) {
    case "%":
      return v.toFixed(1) + "%";
    case "/s":
      return (v >= 100 ? v.toFixed(0) : v.toFixed(1)) + "/s";
    case "bytes":
      return (v / (1 << 20)).toFixed(0) + " MiB";
  }
  return String(v);
}
