// A capture's lanes: the series of its host (lanes.ts) over the capture's
// wall-clock span, under its cores map and on that map's time axis. The
// map's columns are offsets from the capture's T0 (0.1 s by default), a
// lane's whole seconds of wall clock (the series API's finest bucket), so
// each lane column is drawn over the x range its wall-clock second takes
// on the map (a sample at capture time t is at wall time t + offset_ns):
// a second of series lies under the same second of samples, whatever the
// map's bucket, and follows the map as it is drawn again, resized or
// scrolled sideways. A capture without a host or wall clock has no lanes
// (the page has no section for them); a host without series of the kinds
// shown leaves the section hidden.

import type { CoresPlacement, DrawnCores } from "./cores";
import { type LaneMap, Lanes } from "./lanes";
import { wallTicks } from "./nightaxis";
import { fmtWallParam } from "./wallclock";
import type { ProfileSummary } from "./wire";

const SECOND = 1e9;

// CaptureLanes draws a capture's lanes into section, under the cores map
// whose placement cores gives.
export class CaptureLanes {
  private lanes: Lanes<DrawnCores>;
  private box: HTMLElement;
  private span = ""; // the wall-clock span the lanes were asked for, "from|to"
  private frame = 0; // a redraw awaiting the next animation frame

  private constructor(
    private section: HTMLElement,
    private offset: number, // the capture's wall-clock offset: wall = t + offset
    private cores: () => CoresPlacement | null,
    host: string,
  ) {
    this.box = section.querySelector<HTMLElement>("[data-testid=lanes]") ?? section;
    this.lanes = new Lanes<DrawnCores>(this.box, section.querySelector("fieldset"), {
      host,
      map: () => this.map(),
      onNone: (none) => {
        section.hidden = none;
      },
    });
  }

  // create returns the lanes of prof in section, or null when the page
  // has no section for them or the capture no host or wall clock.
  static create(section: HTMLElement | null, prof: ProfileSummary, cores: () => CoresPlacement | null): CaptureLanes | null {
    if (!section || !prof.host || !prof.wall?.source) return null;
    return new CaptureLanes(section, prof.wall.offset_ns, cores, prof.host);
  }

  // follow keeps the lanes under the cores map as drawn now: asked for
  // again when the map's wall-clock span changes, else drawn again where
  // it lies (once per animation frame, as a scroll moves it often).
  follow(): void {
    const p = this.cores();
    if (!p) return;
    const d = p.data;
    const from = Math.floor((d.t0_ns + this.offset) / SECOND) * SECOND;
    const to = Math.ceil((d.t0_ns + this.offset + d.buckets * d.bucket_ns) / SECOND) * SECOND;
    Object.assign(this.section.dataset, { mapFromNs: String(d.t0_ns + this.offset), mapBucketNs: String(d.bucket_ns) });
    const span = `${from}|${to}`;
    if (span !== this.span) {
      this.span = span;
      const q = new URLSearchParams({ from: fmtWallParam(from), to: fmtWallParam(to), bucket: "1" });
      void this.lanes.load(q, Promise.resolve(d));
      return;
    }
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.lanes.draw();
    });
  }

  // map is where the lanes lie under the cores map now: its columns'
  // edges in the lanes' own x, the map's columns in view as their plot (a
  // lane's first and last seconds may reach past the map's range).
  private map(): LaneMap | null {
    const p = this.cores();
    if (!p || this.section.hidden) return null;
    const d = p.data;
    const box = this.box.getBoundingClientRect().left;
    const from = d.t0_ns + this.offset; // the wall-clock start of the map's first column
    const to = from + d.buckets * d.bucket_ns;
    const x0 = p.x0 - box;
    const perNs = p.cellW / d.bucket_ns;
    return {
      from_ns: from,
      to_ns: to,
      bucket_ns: d.bucket_ns,
      cpus: d.cpus,
      rowH: p.rowH,
      // The plot: the map's columns in view.
      left: Math.max(0, Math.max(p.left, p.x0) - box),
      width: Math.max(0, Math.min(p.right, p.x0 + d.buckets * p.cellW) - box),
      x: (t) => x0 + (t - from) * perNs,
      time: (x) => from + (x - x0) / perNs,
      ticks: wallTicks(from, to, d.buckets * p.cellW).map((t) => t.ns),
    };
  }
}
