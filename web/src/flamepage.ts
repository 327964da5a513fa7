// The flame graph, differential and stack-chart pages: fetch the tree for
// the range and filters in the URL (and, for the stack chart, the range's
// samples), draw them, and keep zoom, search and view mode in the URL.

import { errorMessage, getJSON } from "./api";
import { fetchJSON, navigate, prefetchJSON } from "./nav";
import { MiniTimeline } from "./timeline";
import { onSchemeChange } from "./colors";
import { compareForm } from "./compareform";
import { $, afterFrame, clear, h } from "./dom";
import { displayRange, fmtInt, fmtOffset, parseOffset } from "./format";
import { FrameTable } from "./frametable";
import { SearchBar } from "./search";
import { TopTable } from "./toptable";
import { FlameToolbar } from "./flametoolbar";
import { DiffTable } from "./difftable";
import { FlameGraph, type Shape, Tree } from "./flame";
import { path } from "./links";
import { apiURL, currentParams, FILTER_PARAMS, flameAPI, handOff, heatmapAPI, now, pageStart, pick, recallBack, recordTiming, rememberBack, takeHandOff, updateURL } from "./state";
import { type LaneGroup, StackChart, type StackChartOptions } from "./stackchart";
import { type FlameJSON, type FunctionTable, type HeatmapJSON, type ProfileSummary, type SamplesJSON, type ViewData } from "./wire";
import { Clock, TZ_EVENT } from "./wallclock";

// PageMode is which page is shown: a flame graph, a differential flame
// graph, or the stack chart above the range's flame graph.
export type PageMode = "flame" | "diff" | "stacks";

export async function flamePage(vd: ViewData, mode: PageMode, boot: () => void): Promise<void> {
  const diff = mode === "diff";
  const box = $("#flame");
  const prof = vd.profile;
  if (!box || !prof) return;
  const id = prof.id;
  // A host's range across its captures (vd.host) has the views of a
  // capture's range, from the host's APIs, and no capture's strip.
  const host = vd.host ?? "";
  // The strip's counts are fetched once the page's own data is in, so that
  // they never hold up the graph or the stack chart.
  const loadStrip = host ? null : timeline(prof, mode, boot);
  const selectMark = takeHandOff("select");
  // "← heatmaps" leads to the view this page was opened from, when known.
  const backLink = $<HTMLAnchorElement>("[data-testid=range] a");
  const from = recallBack(location.href);
  if (backLink && from) backLink.href = from;
  const t0 = performance.now();
  const p = currentParams();
  clear(box);
  const status = h("p", { class: "flame-status", text: "Loading flame graph…" });
  box.append(status);
  // The stack chart's samples come in parallel with the tree (the page's
  // head asked for both before this script loaded).
  const samples = mode === "stacks" ? fetchJSON<SamplesJSON>(samplesAPI(id, p, host)) : null;
  samples?.catch(() => {}); // reported where it is awaited
  const stacksBox = samples ? $("#stacks") : null;
  if (stacksBox) {
    clear(stacksBox);
    stacksBox.append(h("p", { class: "flame-status", text: "Loading samples…" }));
  }
  let data: FlameJSON;
  try {
    data = await fetchJSON<FlameJSON>(flameAPI(id, p, diff, "json", host));
  } catch (e) {
    status.textContent = errorMessage(e);
    status.classList.add("error");
    if (stacksBox) clear(stacksBox);
    return;
  }
  const fetched = performance.now();
  const tree = new Tree(data, shapeOf(diff, p));
  // The stack chart, the first view of its page, is drawn as soon as its
  // samples are in and shown before the flame graph below it is built: the
  // graph, its tables and their layout would otherwise come first.
  let outline: ((node: number) => void) | null = null; // the graph's, once built
  let view: FlameView | null = null;
  const chart =
    samples && stacksBox
      ? await stackChart(stacksBox, samples, tree, prof, p, t0, {
          onHover: (i) => outline?.(i),
          onClick: (i) => view?.zoomTo(i, true),
        })
      : null;
  if (chart) await afterFrame();
  clear(box);
  view = new FlameView(box, tree, p, diff, chart);
  outline = (i) => view.graph.highlight(i);
  view.toolbar.setSummary(`${fmtInt(data.total)} samples${diff && data.base_total !== undefined ? ` vs ${fmtInt(data.base_total)} baseline` : ""} · ${fmtInt(tree.n)} nodes`);
  const graph = view.graph;
  // A handle for the browser tests: where a frame is drawn, and drawing
  // costs. The production build leaves it out.
  if (TEST_HOOKS) {
    (window as unknown as { __flame: unknown }).__flame = {
      locate: (name: string) => graph.locate(name),
      nodes: tree.n,
      stats: () => ({ drawn: graph.drawn, drawMs: graph.drawMs, draws: graph.draws, overlayDraws: graph.overlayDraws, overlayMs: graph.overlayMs }),
      sandwich: () => view.sandwichStats(),
    };
  }
  view.applyURL();

  // First frame drawn: record timings for the browser tests.
  graph.onDrawn = () => {
    graph.onDrawn = null;
    void Promise.resolve(samples)
      .catch(() => {})
      .then(() => loadStrip?.());
    recordTiming("flame-fetch", fetched - t0);
    recordTiming("flame-render", performance.now() - t0);
    if (selectMark !== null) recordTiming("select-to-flame", now() - selectMark);
    box.dataset.nodes = String(tree.n);
    // The table comes after the graph's first frame, which it would delay.
    // A table row highlights its function in the graph.
    const top = $("#top");
    if (top && !diff) view.showTable(top);
    const changes = $("#changes");
    if (changes && diff) void changeTable(changes, id, host, p, (name) => view.find(name));
    document.body.dataset.rendered = "1";
  };
  if (!diff && !host) compareForm(view.toolbar.el, prof, p);
}

// FlameView is a page's flame graph with its toolbar, its frame table, the
// search bar over it and, once shown, its top-functions table, kept in step
// with the stack chart above it when there is one. Its state is the graph's:
// the view (flame or icicle), the shape, the zoom and the search, which the
// URL holds (view, shape, zoom, search, match_case), and the function whose
// sandwich the table shows (sandwich).
class FlameView {
  readonly toolbar: FlameToolbar;
  readonly graph: FlameGraph;
  private frames: FrameTable;
  private table: TopTable | null = null;
  private bar: SearchBar | null;
  private searchBox = $<HTMLInputElement>("#search");

  constructor(
    private box: HTMLElement,
    private tree: Tree,
    p: URLSearchParams,
    private diff: boolean,
    private chart: StackChart | null,
  ) {
    this.toolbar = new FlameToolbar({
      diff,
      onView: (icicle) => this.setView(icicle, true),
      onShape: (shape) => this.setShape(shape, true),
      onReset: () => this.zoomTo(0, true),
    });
    const graph = (this.graph = new FlameGraph(tree, {
      icicle: p.get("view") === "icicle",
      diff,
      onZoom: (i) => this.zoomTo(i, true),
    }));
    if (chart) graph.onHover = (i) => chart.highlight(i);
    this.frames = new FrameTable(tree);
    box.append(this.toolbar.el, graph.el, this.frames.el);

    // Search: a regular expression, any case unless asked, with the share of
    // samples and the frames it matches, stepped through with next and
    // previous; pattern and case in the URL.
    const searchBox = this.searchBox;
    const searchStatus = $("#search-match");
    this.bar =
      searchBox && searchStatus
        ? new SearchBar(
            searchBox,
            searchStatus,
            {
              apply: (re) => {
                const fraction = graph.search(re);
                chart?.setMatch(graph.matches());
                this.table?.search(re);
                return { fraction, frames: graph.matchList() };
              },
              focus: (i) => {
                graph.setCurrent(i);
                chart?.highlight(i);
              },
            },
            p,
          )
        : null;

    // Keys: Escape zooms out to the whole graph, "/" jumps to the search box.
    document.addEventListener("keydown", (ev) => {
      if (!box.isConnected || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      const typing = ev.target instanceof HTMLInputElement || ev.target instanceof HTMLTextAreaElement;
      if (ev.key === "Escape" && !typing && graph.zoom !== 0) this.zoomTo(0, true);
      else if (ev.key === "/" && !typing && searchBox) {
        ev.preventDefault();
        searchBox.focus();
        searchBox.select();
      }
    });
    window.addEventListener("popstate", () => this.applyURL());
  }

  // applyURL sets the view, shape, zoom and search from the URL.
  applyURL(): void {
    if (!this.box.isConnected) return;
    const cur = currentParams();
    this.setView(cur.get("view") === "icicle", false);
    this.setShape(shapeOf(this.diff, cur), false);
    const z = this.tree.find(cur.get("zoom") ?? "");
    this.zoomTo(z < 0 ? 0 : z, false);
    this.bar?.sync(cur);
    this.table?.pickName(cur.get("sandwich") ?? "");
  }

  // showTable shows the top-functions table in top; a row finds its
  // function in the graph.
  showTable(top: HTMLElement): void {
    this.table = new TopTable(top, this.tree, (name) => this.find(name), this.graph.zoom, (name) => updateURL({ sandwich: name }, true));
    this.table.pickName(currentParams().get("sandwich") ?? "");
    this.runSearch();
  }

  // find searches for the function name.
  find(name: string): void {
    this.bar?.find(name);
  }

  sandwichStats(): ReturnType<TopTable["sandwichStats"]> | null {
    return this.table?.sandwichStats() ?? null;
  }

  private runSearch(): void {
    this.bar?.run();
  }

  // setView draws the graph, and the stack chart above it, as a flame
  // graph (roots at the bottom) or an icicle (roots on top).
  private setView(icicle: boolean, record: boolean): void {
    this.graph.setIcicle(icicle);
    this.chart?.setIcicle(icicle);
    this.toolbar.showView(icicle);
    if (record) updateURL({ view: icicle ? "icicle" : null }, false);
  }

  private setShape(shape: Shape, record: boolean): void {
    if (!this.diff) return;
    if (shape !== this.tree.shape) {
      this.tree.layout(shape);
      this.graph.invalidate();
      this.runSearch();
    }
    this.toolbar.showShape(shape);
    if (record) updateURL({ shape: shape === "base" ? "base" : null }, false);
  }

  zoomTo(i: number, record: boolean): void {
    const tree = this.tree;
    this.graph.setZoom(i);
    const path = i > 0 ? tree.path(i) : "";
    this.toolbar.showZoom(i > 0 ? tree.name(i) : "", path);
    if (record) updateURL({ zoom: path || null }, true);
    this.runSearch();
    this.table?.setScope(this.graph.zoom);
    this.frames.setScope(this.graph.zoom);
  }
}

// shapeOf reads a differential page's shape from its URL: shape=base draws
// the baseline's widths, else the target's.
function shapeOf(diff: boolean, p: URLSearchParams): Shape {
  return diff && p.get("shape") === "base" ? "base" : "target";
}

// changeTable fetches the differential graph's function table and shows it
// in box; box says so when the fetch fails.
async function changeTable(box: HTMLElement, id: string, host: string, p: URLSearchParams, onSearch: (name: string) => void): Promise<void> {
  box.textContent = "Loading the changes by function…";
  try {
    const table = await fetchJSON<FunctionTable>(flameAPI(id, p, true, "functions", host));
    new DiffTable(box, table, onSearch);
    box.dataset.rendered = "1";
  } catch (e) {
    box.textContent = errorMessage(e);
    box.classList.add("error");
  }
}

// timeline shows the capture's mini timeline with the page's range as a
// brush; moving the brush opens the page of the new range in place.
function timeline(prof: ProfileSummary, mode: PageMode, boot: () => void): (() => void) | null {
  const holder = $("#timeline");
  if (!holder) return null;
  const p = currentParams();
  const dur = prof.end_ns + 1 - prof.t0_ns;
  const bound = (name: string, def: number) => {
    const v = parseOffset(p.get(name));
    return Number.isNaN(v) ? def : Math.min(dur, Math.max(0, v));
  };
  const start = bound("start", 0);
  const end = bound("end", dur);
  const base: [number, number] | null = mode === "diff" && !p.get("base") ? [bound("start2", 0), bound("end2", dur)] : null;
  const clock = new Clock(prof.t0_ns, prof.wall);
  const tl = new MiniTimeline(holder, {
    durNs: dur,
    startNs: start,
    endNs: end,
    base,
    clock,
    onPreview: headingFollows(mode === "diff", clock),
    onChange: (s, e) => {
      const q = currentParams();
      q.set("start", fmtOffset(s));
      q.set("end", fmtOffset(e));
      const target = location.pathname + "?" + q.toString();
      const back = $<HTMLAnchorElement>("[data-testid=range] a");
      if (back) rememberBack(target, back.href);
      handOff("select");
      prefetchJSON(flameAPI(prof.id, q, mode === "diff"));
      if (mode === "stacks") prefetchJSON(samplesAPI(prof.id, q));
      void navigate(target, boot);
    },
  });
  onSchemeChange(() => tl.draw());
  window.addEventListener(TZ_EVENT, () => {
    if (holder.isConnected) tl.describe();
  });
  return () => {
    // Columns of at least 2 px, within the heatmap's column widths: the
    // strip's width as drawn, which costs no layout of the page's markup
    // (read from the page, it would lay out the views just built).
    const width = Math.max(200, tl.drawnWidth || holder.clientWidth);
    const nice = [0.1, 0.2, 0.5, 1, 2, 5, 10];
    const col = nice.find((c) => dur / (c * 1e9) <= width / 2) ?? 10;
    const q = pick(p, FILTER_PARAMS);
    q.set("rows", "1");
    q.set("col", String(col));
    void getJSON<HeatmapJSON>(heatmapAPI(prof.id, q)).then(
      (d) => tl.setData(d, prof.t0_ns),
      () => {
        /* the strip stays empty; the brush still works */
      },
    );
  };
}

// headingFollows returns the strip's onPreview for the page's heading:
// the range the brush holds, written in the heading's range (a
// differential page's target row) while it differs from the page's, in
// place of the page's range and its wall-clock times, as the strip's label
// has it; the page's own once the brush is back.
function headingFollows(diff: boolean, clock: Clock): (s: number, e: number, pending: boolean) => void {
  let saved: string | null = null;
  return (s, e, pending) => {
    const el = $(diff ? "[data-testid=diff-target-range]" : "[data-testid=range-text]");
    const wall = $("[data-testid=range-wall]");
    if (!el) return;
    if (pending) {
      if (saved === null) saved = el.textContent;
      el.textContent = `${displayRange(s, e)}${clock.suffix(s, e)}`;
      el.classList.add("brush-pending");
      el.title = "not opened yet: Enter, or releasing the brush, opens it";
    } else if (saved !== null) {
      el.textContent = saved;
      saved = null;
      el.classList.remove("brush-pending");
      el.removeAttribute("title");
    }
    if (wall) wall.hidden = pending && clock.shown;
  };
}

// samplesAPI returns the URL of profile id's samples (with host, those of
// the host's range from, to) that the stack chart draws for the range,
// filters and sample limit in p; the server's page preloads the same URL
// (server/pages.go's samplesJSON, server/hostrange.go's hostGraphPage).
function samplesAPI(id: string, p: URLSearchParams, host = ""): string {
  if (host) return apiURL(path("hostSamplesAPI", host), pick(p, ["from", "to", "max_samples", ...FILTER_PARAMS]));
  return apiURL(path("samplesAPI", id), pick(p, ["start", "end", "max_samples", ...FILTER_PARAMS]));
}

// stackChart draws the samples into holder as soon as they arrive, linked
// to the flame graph through on: hovering a box outlines its node in the
// graph (and the page outlines the graph's hovered node in the chart), and
// clicking a box zooms the graph to it. It resolves to null, with the reason
// shown in holder, when there is no chart to draw. booted is when the
// page's script began, on performance.now()'s clock.
async function stackChart(
  holder: HTMLElement,
  samples: Promise<SamplesJSON>,
  tree: Tree,
  prof: ProfileSummary,
  p: URLSearchParams,
  booted: number,
  on: Pick<StackChartOptions, "onHover" | "onClick">,
): Promise<StackChart | null> {
  const fail = (msg: string) => {
    clear(holder);
    holder.append(h("p", { class: "flame-status error", text: msg }));
    return null;
  };
  let d: SamplesJSON;
  try {
    d = await samples;
  } catch (e) {
    return fail(errorMessage(e));
  }
  if (d.nodes !== tree.n) return fail("The samples and the flame graph disagree (the capture changed?): reload the page.");
  const fetched = performance.now();
  const group: LaneGroup = p.get("lanes") === "thread" ? "thread" : "cpu";
  const chart = new StackChart(tree, d, {
    group,
    icicle: p.get("view") === "icicle",
    originNs: prof.t0_ns,
    clock: new Clock(prof.t0_ns, prof.wall),
    periodNs: prof.frequency_hz > 0 ? 1e9 / prof.frequency_hz : medianGap(d),
    ...on,
  });
  window.addEventListener(TZ_EVENT, () => {
    if (chart.el.isConnected) chart.invalidate();
  });
  const select = h(
    "select",
    { attrs: { "data-testid": "stacks-group", "aria-label": "stack chart lanes" } },
    h("option", { attrs: { value: "cpu" }, text: "one lane per CPU" }),
    h("option", { attrs: { value: "thread" }, text: "one lane per thread" }),
  );
  select.value = group;
  select.addEventListener("change", () => {
    updateURL({ lanes: select.value === "cpu" ? null : select.value }, false);
    location.reload();
  });
  const head = h(
    "div",
    { class: "stacks-head" },
    h("label", null, "Lanes ", select),
    h("span", { class: "muted", attrs: { "data-testid": "stacks-summary" }, text: `${fmtInt(d.count)} samples in time order · hover a frame to find it in the flame graph below` }),
  );
  clear(holder);
  holder.append(head, chart.el);
  // Drawn now, before the flame graph's markup is added below, so that
  // sizing the chart lays out only what is on the page so far; the page
  // builds the graph once the browser has shown the chart.
  chart.draw();
  const drawn = performance.now();
  onSchemeChange(() => chart.restyle());
  void afterFrame().then(() => {
    // Timings count from the page's start (its navigation, or the in-place
    // opening), which the fetches from the page's head already follow.
    const start = pageStart();
    recordTiming("stacks-script", booted - start, booted);
    recordTiming("stacks-fetch", fetched - start, fetched);
    recordTiming("stacks-layout", chart.layoutMs + chart.boxMs, drawn);
    recordTiming("stacks-draw", chart.drawMs - chart.boxMs, drawn);
    recordTiming("stacks-render", drawn - start, drawn);
    recordTiming("stacks-shown", performance.now() - start);
    holder.dataset.rendered = "1";
  });
  if (TEST_HOOKS) {
    (window as unknown as { __stacks: unknown }).__stacks = {
      lanes: () => chart.lanesInfo(),
      boxes: (label: string, name: string) => {
        const out: { x: number; y: number; w: number }[] = [];
        for (let i = 0; i < tree.n; i++) if (tree.name(i) === name) out.push(...chart.boxesOf(label, i));
        return out;
      },
      stats: () => ({ drawMs: chart.drawMs, layoutMs: chart.layoutMs, boxes: chart.drawnBoxes }),
      axis: () => chart.axisLabels(),
    };
  }
  return chart;
}

// medianGap estimates the sampling period from the samples' spacing.
function medianGap(d: SamplesJSON): number {
  const gaps: number[] = [];
  for (let i = 1; i < d.count && gaps.length < 1000; i++) if (d.time[i] > d.time[i - 1]) gaps.push(d.time[i] - d.time[i - 1]);
  gaps.sort((a, b) => a - b);
  return gaps.length ? gaps[gaps.length >> 1] : 1e7;
}
