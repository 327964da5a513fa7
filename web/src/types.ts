// Shapes shared with the Go server: the view-data JSON each page embeds and
// the JSON API responses (docs/contracts.md). Times are integer nanoseconds;
// every range is half-open [start, end).

import type { WallJSON } from "./wallclock";

export interface EventCount {
  name: string;
  samples: number;
}

export interface ProfileSummary {
  id: string;
  name: string;
  t0_ns: number;
  start_ns: number;
  end_ns: number;
  samples: number;
  cpus: number;
  frequency_hz: number;
  events?: EventCount[] | string[] | null;
  wall?: WallJSON; // the wall-clock anchor, when known
}

export interface ViewData {
  page: string;
  profile?: ProfileSummary | null;
  params?: Record<string, string> | null;
  api?: string;
  readOnly?: boolean;
  host?: string;
}

// HeatmapJSON is the offset heatmap: counts[col][row]; row 0 starts each column.
export interface HeatmapJSON {
  t0_ns: number;
  col_ns: number;
  rows: number;
  cols: number;
  counts: number[][];
  max: number;
  total: number;
}

// CoresJSON is the cores × time map: samples[cpu][bucket]; busy and system
// in 0..1, system being the part of busy whose leaf frame is in the kernel.
export interface CoresJSON {
  t0_ns: number;
  bucket_ns: number;
  buckets: number;
  cpus: number[] | null; // null when no CPU's samples pass the filters
  samples: number[][];
  busy: number[][];
  system: number[][];
  expected: number;
}

// FlameJSON is a flame tree in depth-first pre-order; node 0 is the root.
export interface FlameJSON {
  start_ns: number;
  end_ns: number;
  total: number;
  strings: string[];
  kinds: string[];
  name: number[];
  dso: number[];
  kind: number[];
  depth: number[];
  total_n: number[];
  self_n: number[];
  base_start_ns?: number;
  base_end_ns?: number;
  base_total?: number;
  base_n?: number[];
  base_self_n?: number[];
}

// FunctionChange is one row of a differential graph's function table
// (format=functions): counts on each side, changes in percentage points of
// each side's total, and the z-score of the change in total share.
export interface FunctionChange {
  name: string;
  dso: string;
  kind: string;
  self: number;
  total: number;
  base_self: number;
  base_total: number;
  self_delta_pts: number;
  total_delta_pts: number;
  z: number;
  significant: boolean;
}

// FunctionTable is the function table of a graph (format=functions).
export interface FunctionTable {
  total: number;
  base_total?: number;
  functions: FunctionChange[];
}

// HotspotReport is the hot-spots endpoint's answer (subsecond.HotspotReport,
// docs/hotspots.md): the episodes, what they were found with, and the note
// naming the cores a filter hides.
export interface HotspotReport {
  t0_ns: number;
  start_ns?: number; // the range searched, when less than the capture
  end_ns?: number;
  measure: "busy" | "system";
  threshold: number;
  min_ns: number;
  found: number;
  hidden?: number[];
  note?: string;
  hotspots: Hotspot[];
}

// Hotspot is one busy episode from the hot-spots endpoint (whose report,
// {t0_ns, found, hotspots, cells}, is what `subsecond hotspots --format json`
// prints): a CPU (-1 for the whole host) busy for [start_ns, end_ns), with
// the URL of its flame graph.
export interface Hotspot {
  cpu: number;
  start_ns: number;
  end_ns: number;
  busy: number;
  system: number;
  user: number;
  samples: number;
  comm?: string;
  comm_share?: number;
  top_stack?: string;
  top_stack_share?: number;
  top_function?: string;
  top_function_share?: number;
  usual?: number;
  score?: number;
  url?: string;
}

// SamplesJSON is the stack chart's samples of a range (GET .../samples):
// in time order, times in ns after start_ns, each with the node of the same
// range's flame graph its stack ends at; nodes is that graph's node count.
export interface SamplesJSON {
  start_ns: number;
  end_ns: number;
  nodes: number;
  count: number;
  strings: string[];
  time: number[];
  cpu: number[];
  pid: number[];
  tid: number[];
  comm: number[];
  leaf: number[];
}
