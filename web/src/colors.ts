// Colour scales for heatmaps, the cores map and flame graphs.

// Sequential scale for sample counts: near-white for few samples to dark red
// for many (FlameScope reads "darker is more"). Stops are [t, r, g, b].
const HEAT: number[][] = [
  [0, 255, 245, 235],
  [0.15, 253, 208, 162],
  [0.35, 253, 141, 60],
  [0.6, 230, 85, 13],
  [0.8, 166, 54, 3],
  [1, 90, 20, 0],
];

// Sequential scale for busy fractions: pale to deep blue-violet, so a pegged
// core is the darkest row of the map.
const BUSY: number[][] = [
  [0, 247, 251, 255],
  [0.2, 198, 219, 239],
  [0.45, 107, 174, 214],
  [0.7, 33, 113, 181],
  [0.9, 8, 48, 107],
  [1, 20, 10, 60],
];

function ramp(stops: number[][], t: number): string {
  if (!(t > 0)) t = 0;
  if (t > 1) t = 1;
  let i = 1;
  while (i < stops.length - 1 && stops[i][0] < t) i++;
  const a = stops[i - 1];
  const b = stops[i];
  const f = (t - a[0]) / (b[0] - a[0] || 1);
  const c = (k: number) => Math.round(a[k] + (b[k] - a[k]) * f);
  return `rgb(${c(1)},${c(2)},${c(3)})`;
}

export const EMPTY_CELL = "#f4f5f7";

export function heatColor(t: number): string {
  return ramp(HEAT, t);
}

export function busyColor(t: number): string {
  return ramp(BUSY, t);
}

// Scale maps a count to 0..1: linear, or "enhanced" (logarithmic) so that
// faint structure next to a hot spot stays visible.
export type Scale = "linear" | "log";

export function scaleValue(v: number, max: number, scale: Scale): number {
  if (v <= 0 || max <= 0) return 0;
  if (scale === "log") return Math.log1p(v) / Math.log1p(max);
  return v / max;
}

// hash is a small stable string hash (FNV-1a) used to vary frame colours.
export function hash(s: string): number {
  let x = 2166136261;
  for (let i = 0; i < s.length; i++) {
    x ^= s.charCodeAt(i);
    x = Math.imul(x, 16777619);
  }
  return (x >>> 0) / 4294967296;
}

// Frame kinds and their base hues, following the flame graph conventions:
// user code red, kernel orange, JIT green, inlined aqua.
export const KIND_STYLE: Record<string, { label: string; h: number; s: number; l: number; dh: number }> = {
  user: { label: "user", h: 4, s: 78, l: 66, dh: 16 },
  kernel: { label: "kernel", h: 28, s: 88, l: 60, dh: 12 },
  jit: { label: "JIT", h: 100, s: 50, l: 58, dh: 22 },
  inlined: { label: "inlined", h: 178, s: 55, l: 58, dh: 14 },
  comm: { label: "process", h: 250, s: 25, l: 80, dh: 20 },
  unknown: { label: "unknown", h: 40, s: 12, l: 72, dh: 8 },
  root: { label: "all", h: 220, s: 8, l: 82, dh: 0 },
};

export function frameColor(kind: string, name: string): string {
  const st = KIND_STYLE[kind] || KIND_STYLE.unknown;
  const v = hash(name);
  const h = st.h + (v - 0.5) * st.dh;
  const l = st.l + (hash(name + "~") - 0.5) * 10;
  return `hsl(${h.toFixed(1)},${st.s}%,${l.toFixed(1)}%)`;
}

export const MATCH_COLOR = "rgb(220,40,220)";

// diffColor colours a node by its change: d in -1..1, red grew, blue shrank.
export function diffColor(d: number): string {
  if (d > 1) d = 1;
  if (d < -1) d = -1;
  const a = Math.abs(d);
  const c = Math.round(245 - 190 * Math.sqrt(a));
  return d >= 0 ? `rgb(250,${c},${c})` : `rgb(${c},${c},250)`;
}
