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

// Cores-map scales: busy time in user mode runs pale to a mid steel blue,
// busy time in the kernel (system) pale to a hot red that is darker and more
// saturated than any blue, so that a core pegged in the kernel stands apart
// from cores busy in user code at the same load.
const USER: number[][] = [
  [0, 247, 251, 255],
  [0.2, 206, 225, 242],
  [0.45, 150, 190, 226],
  [0.7, 100, 150, 205],
  [0.9, 66, 120, 185],
  [1, 50, 100, 170],
];

const SYSTEM: number[][] = [
  [0, 255, 247, 240],
  [0.2, 253, 212, 170],
  [0.45, 252, 146, 72],
  [0.7, 238, 78, 28],
  [0.9, 214, 24, 16],
  [1, 185, 0, 8],
];

// In dark mode (the system's setting) the scales run from the dark page
// up to bright colours: more is brighter, as more is darker on white.
const HEAT_DARK: number[][] = [
  [0, 78, 42, 30],
  [0.15, 128, 52, 22],
  [0.35, 184, 72, 16],
  [0.6, 230, 112, 22],
  [0.8, 250, 170, 52],
  [1, 255, 232, 150],
];

const USER_DARK: number[][] = [
  [0, 36, 46, 66],
  [0.2, 40, 64, 104],
  [0.45, 50, 94, 154],
  [0.7, 72, 132, 204],
  [0.9, 110, 170, 236],
  [1, 150, 200, 255],
];

const SYSTEM_DARK: number[][] = [
  [0, 66, 34, 32],
  [0.2, 106, 38, 32],
  [0.45, 164, 46, 32],
  [0.7, 218, 56, 36],
  [0.9, 250, 72, 52],
  [1, 255, 100, 84],
];

const darkQuery = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;

// isDark reports whether the page follows a dark system setting.
export function isDark(): boolean {
  return !!darkQuery && darkQuery.matches;
}

// onSchemeChange calls f when the system switches between light and dark.
export function onSchemeChange(f: () => void): void {
  darkQuery?.addEventListener("change", f);
}

function rampRGB(stops: number[][], t: number): [number, number, number] {
  if (!(t > 0)) t = 0;
  if (t > 1) t = 1;
  let i = 1;
  while (i < stops.length - 1 && stops[i][0] < t) i++;
  const a = stops[i - 1];
  const b = stops[i];
  const f = (t - a[0]) / (b[0] - a[0] || 1);
  const c = (k: number) => a[k] + (b[k] - a[k]) * f;
  return [c(1), c(2), c(3)];
}

function rgb(c: [number, number, number]): string {
  return `rgb(${Math.round(c[0])},${Math.round(c[1])},${Math.round(c[2])})`;
}

function ramp(stops: number[][], t: number): string {
  return rgb(rampRGB(stops, t));
}

// emptyCell is the colour of a cell without samples.
export function emptyCell(): string {
  return isDark() ? "#1e2229" : "#f4f5f7";
}

export function heatColor(t: number): string {
  return ramp(isDark() ? HEAT_DARK : HEAT, t);
}

export function userColor(t: number): string {
  return ramp(isDark() ? USER_DARK : USER, t);
}

export function systemColor(t: number): string {
  return ramp(isDark() ? SYSTEM_DARK : SYSTEM, t);
}

// systemWeight maps the system share of busy time (0..1) to how far a cell's
// hue moves from user blue to system red. Mixed cells (a syscall-heavy
// process, softirq on a busy core) stay violet; only time that is almost all
// kernel reads as hot red.
export function systemWeight(share: number): number {
  const x = Math.min(1, Math.max(0, (share - 0.55) / 0.4));
  return x * x * (3 - 2 * x);
}

// coreColor colours a cores-map cell: lightness by t (the scaled busy
// fraction), hue from user blue to system red by the system share of it.
export function coreColor(t: number, share: number): string {
  const dark = isDark();
  const u = rampRGB(dark ? USER_DARK : USER, t);
  const k = rampRGB(dark ? SYSTEM_DARK : SYSTEM, t);
  const w = systemWeight(share);
  return rgb([u[0] + (k[0] - u[0]) * w, u[1] + (k[1] - u[1]) * w, u[2] + (k[2] - u[2]) * w]);
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

// CURRENT_COLOR outlines the search's current match.
export const CURRENT_COLOR = "rgb(255,170,0)";

// HIGHLIGHT_COLOR outlines a frame that another view points at.
export const HIGHLIGHT_COLOR = "rgb(0,90,255)";

// diffColor colours a node by its change: d in -1..1, red grew, blue shrank.
export function diffColor(d: number): string {
  if (d > 1) d = 1;
  if (d < -1) d = -1;
  const a = Math.abs(d);
  const c = Math.round(245 - 190 * Math.sqrt(a));
  return d >= 0 ? `rgb(250,${c},${c})` : `rgb(${c},${c},250)`;
}
