// The profile page: the offset heatmap and the cores map for the filters in
// the URL, the lanes of the host's series under the cores map on its time
// axis, the hot-spots list, and selection that opens a flame graph. The
// page builds its widgets (ProfileMaps, CaptureLanes, Hotspots,
// FilterForm) and reloads them when the URL changes.

import { errorMessage, getJSON } from "./api";
import { CaptureLanes } from "./capturelanes";
import { onSchemeChange, type Scale } from "./colors";
import { autoBucket, type CoresPlacement, CoresView, type DrawnCores, measureOf } from "./cores";
import { $ } from "./dom";
import { FilterForm } from "./filterform";
import { cpuList, fmtOffset, parseDuration, parseOffset } from "./format";
import { HeatmapView } from "./heatmap";
import { Hotspots } from "./hotspots";
import { withQuery } from "./links";
import { fetchJSON, navigate, prefetchJSON } from "./nav";
import { currentParams, FILTER_PARAMS, flameAPI, handOff, heatmapAPI, now, pick, recordTiming, rememberBack, takeHandOff, updateURL } from "./state";
import { Clock, parseWallParam, TZ_EVENT } from "./wallclock";
import type { CoresJSON, HeatmapJSON, ProfileSummary, ViewData } from "./wire";

export function profilePage(vd: ViewData, boot: () => void): void {
  const prof = vd.profile;
  if (!prof) return;
  const clock = new Clock(prof.t0_ns, prof.wall);
  const marks = { upload: takeHandOff("upload"), sent: takeHandOff("upload-sent"), stored: takeHandOff("upload-stored") };

  // open shows the flame graph of a selection, fetching its JSON while the
  // page itself loads.
  const open = (extra: Record<string, string>) => {
    const q = pick(currentParams(), FILTER_PARAMS);
    for (const [k, v] of Object.entries(extra)) q.set(k, v);
    handOff("select");
    prefetchJSON(flameAPI(prof.id, q, false));
    const target = withQuery("flamePage", q, prof.id);
    rememberBack(target, here());
    void navigate(target, boot);
  };
  // A hot spot's link leads back here too.
  const hotEl = $("ol[data-testid=hotspots]");
  const hotspots = hotEl ? new Hotspots(hotEl, { id: prof.id, clock, onFollow: (href) => rememberBack(href, here()) }) : null;
  const refreshHotspots = (p: URLSearchParams, initial: boolean) => hotspots?.refresh(p, initial) ?? Promise.resolve();
  const lanes = CaptureLanes.create($("#profile-lanes"), prof, () => maps.coresPlacement());
  const maps: ProfileMaps = new ProfileMaps($("#heatmap"), $("#cores"), {
    prof,
    clock,
    marks,
    onSelect: open,
    onRows: (rows) => {
      if (filters?.setField("rows", String(rows))) filters.submit();
    },
    onMeasure: () => void refreshHotspots(currentParams(), false),
    onCoresDrawn: () => lanes?.follow(),
  });

  const formEl = $<HTMLFormElement>("form#filters");
  // Without a bucket in the URL, fit the cores map to the screen, and say so
  // in the URL so that the link reproduces this picture.
  if (maps.hasCores && !currentParams().get("bucket")) {
    const bucket = autoBucket(prof.end_ns - prof.t0_ns, maps.coresWidth() - 60);
    updateURL({ bucket }, false);
    const field = formEl?.elements.namedItem("bucket");
    if (field instanceof HTMLInputElement) field.value = bucket;
  }
  let ctl: AbortController | null = null;
  let initial = true;
  const load = async () => {
    const p = currentParams();
    if (ctl) ctl.abort();
    ctl = new AbortController();
    const signal = ctl.signal;
    const t0 = performance.now();
    document.body.dataset.rendered = "0";
    const jobs = maps.load(p, signal, t0);
    jobs.push(refreshHotspots(p, initial));
    initial = false;
    await Promise.all(jobs);
    if (!signal.aborted) document.body.dataset.rendered = "1";
  };
  const filters = formEl ? new FilterForm(formEl, () => void load()) : null;

  // The maps' scales follow the system's light or dark setting.
  onSchemeChange(() => {
    if (maps.detached()) return;
    maps.restyle();
  });
  // The Times toggle redraws the axes in the zone asked for.
  window.addEventListener(TZ_EVENT, () => {
    if (maps.detached()) return;
    maps.render();
  });
  let resizeTimer = 0;
  window.addEventListener("resize", () => {
    if (maps.detached()) return;
    clearTimeout(resizeTimer);
    resizeTimer = window.setTimeout(() => maps.render(), 120);
  });
  void load();
}

// here is the current page's path and query.
function here(): string {
  return location.pathname + location.search;
}

// noSamples says that the filters in p leave nothing to draw, naming them.
function noSamples(p: URLSearchParams): string {
  const f = [...pick(p, FILTER_PARAMS)].map(([k, v]) => `${k}=${v}`).join(" ");
  return f ? `No samples match ${f}.` : "No samples to show.";
}

const scaleOf = (p: URLSearchParams): Scale => (p.get("scale") === "log" ? "log" : "linear");

export interface ProfileMapsOptions {
  prof: ProfileSummary;
  clock: Clock;
  // The hand-over marks of an upload that opened the page (takeHandOff):
  // when it began, when its body was sent, when it was stored.
  marks: { upload: number | null; sent: number | null; stored: number | null };
  onSelect: (extra: Record<string, string>) => void; // open the flame graph of a selection: start, end, cpu
  onRows: (rows: number) => void; // the heatmap's rows were dragged to rows
  onMeasure: () => void; // the cores map's measure changed
  onCoresDrawn?: () => void; // the cores map was drawn, or moved (CoresOptions.onDrawn)
}

// ProfileMaps is the profile page's offset heatmap and cores map, either of
// which the page may lack; load fetches and draws both for a query, with
// the range the URL links to marked on them.
export class ProfileMaps {
  private heat: HeatmapView | null;
  private cores: CoresView | null;

  constructor(
    private heatEl: HTMLElement | null,
    private coresEl: HTMLElement | null,
    private opt: ProfileMapsOptions,
  ) {
    const { prof, clock } = opt;
    const origin = prof.t0_ns;
    this.heat = heatEl
      ? new HeatmapView(heatEl, {
          originNs: origin,
          clock,
          scale: scaleOf(currentParams()),
          onSelect: (s) => opt.onSelect({ start: fmtOffset(s.startNs), end: fmtOffset(s.endNs) }),
          onRows: opt.onRows,
        })
      : null;
    this.cores = coresEl
      ? new CoresView(coresEl, {
          originNs: origin,
          clock,
          onSelect: (s) => opt.onSelect({ start: fmtOffset(s.startNs), end: fmtOffset(s.endNs), cpu: cpuList(s.cpus) }),
          onMeasure: opt.onMeasure,
          onDrawn: opt.onCoresDrawn,
        })
      : null;
  }

  // coresPlacement returns where the cores map's columns are on the
  // screen; null without a drawn map.
  coresPlacement(): CoresPlacement | null {
    return this.cores?.placement() ?? null;
  }

  get hasCores(): boolean {
    return this.coresEl !== null;
  }

  // coresWidth returns the cores map's width; 0 without one.
  coresWidth(): number {
    return this.coresEl?.clientWidth ?? 0;
  }

  // detached reports that the heatmap has left the page (another page was
  // opened in place).
  detached(): boolean {
    return !!this.heatEl && !this.heatEl.isConnected;
  }

  render(): void {
    this.heat?.render();
    this.cores?.render();
  }

  restyle(): void {
    this.heat?.render();
    this.cores?.restyle();
  }

  // load fetches and draws the maps of query p, recording their timings
  // from t0; it returns a job per map.
  load(p: URLSearchParams, signal: AbortSignal, t0: number): Promise<void>[] {
    const { prof, marks } = this.opt;
    const heat = this.heat;
    const cores = this.cores;
    const cq = pick(p, [...FILTER_PARAMS, "bucket"]);
    const range = this.linked(p);
    const jobs: Promise<void>[] = [];
    cores?.setMeasure(measureOf(p));
    if (heat) {
      heat.setScale(scaleOf(p));
      jobs.push(
        // After an upload, the upload page has fetched it already.
        fetchJSON<HeatmapJSON>(heatmapAPI(prof.id, p), signal).then(
          (d) => {
            if (signal.aborted) return;
            if (d.total === 0) heat.showMessage(noSamples(p), "empty");
            else {
              heat.setData(d);
              if (range) heat.mark(...range);
            }
            recordTiming("heatmap", performance.now() - t0);
            if (marks.upload !== null) {
              recordTiming("upload-to-heatmap", now() - marks.upload);
              // Where the time went: the server parses the body as it reads it,
              // then finishes the import before it answers.
              if (marks.sent !== null) recordTiming("upload-send", marks.sent - marks.upload);
              if (marks.sent !== null && marks.stored !== null) recordTiming("upload-ingest", marks.stored - marks.sent);
            }
          },
          (e) => {
            if (!signal.aborted) heat.showMessage(errorMessage(e));
          },
        ),
      );
    }
    if (cores) {
      jobs.push(
        getJSON<CoresJSON>(withQuery("coresAPI", cq, prof.id), signal).then(
          (d) => {
            // A filter that no CPU's samples pass: no rows to draw.
            if (!d.cpus || d.cpus.length === 0) cores.showMessage(noSamples(p), "empty");
            else {
              const drawn: DrawnCores = { ...d, cpus: d.cpus };
              if (TEST_HOOKS) (window as unknown as { __cores: DrawnCores }).__cores = drawn;
              cores.setData(drawn);
              if (range) cores.mark(...range);
            }
            recordTiming("cores", performance.now() - t0);
          },
          (e) => {
            if (!signal.aborted) cores.showMessage(errorMessage(e));
          },
        ),
      );
    }
    return jobs;
  }

  // linked returns the range the page's URL gives (start, end, or from, to
  // on the wall clock; a host's night links here so) as offsets from T0,
  // which the maps show as their selection; null when it gives none.
  private linked(p: URLSearchParams): [number, number] | null {
    const prof = this.opt.prof;
    const origin = prof.t0_ns;
    const wall = (name: string) => (prof.wall ? parseWallParam(p.get(name)) - prof.wall.offset_ns - origin : NaN);
    const offset = (name: string, wallName: string) => {
      const v = p.get(name);
      if (!v) return wall(wallName);
      const n = parseOffset(v);
      return Number.isNaN(n) ? parseDuration(v) : n;
    };
    const s = offset("start", "from");
    const e = offset("end", "to");
    if (Number.isNaN(s) && Number.isNaN(e)) return null;
    return [Number.isNaN(s) ? 0 : s, Number.isNaN(e) ? prof.end_ns - origin + 1 : e];
  }
}
