// The fleet page: one row per host on one wall-clock axis, grouped by a
// label, each cell the busiest core's system share (or, with a search, the
// searched names' share); the hosts ranked by a search with sparklines; and
// the group and uptime contrasts. Host names and labels are hostile input:
// they reach the page as text only.

import { errorMessage, getJSON } from "./api";
import { emptyCell, heatColor, isDark, onSchemeChange } from "./colors";
import { $, clear, h, onNextFrame, setupCanvas, Tooltip } from "./dom";
import { fmtPct } from "./format";
import { withQuery } from "./links";
import { drawAxis, wallTicks } from "./nightaxis";
import { currentParams } from "./state";
import { fmtClock, fmtWallParam, fmtWallRange, zoneName } from "./wallclock";
import type { FleetDifference, FleetGroups, FleetHit, FleetMap, FleetRise, FleetRow, FleetSearch, FleetUptime, HostLabel } from "./wire";

// SEARCH_PARAMS select the fleet search's names, one at a time.
export const SEARCH_PARAMS = ["function", "comm", "comm_regex", "stack"];

// SCOPE_PARAMS are the URL parameters every fleet API reads beside the
// search: the hosts, the range and the columns.
const SCOPE_PARAMS = ["label", "group", "from", "to", "buckets"];

// MAX_ROWS is the most hosts the map draws; the table lists them all.
export const MAX_ROWS = 1000;

// rowHeight returns the map's row height in css px for n rows: 18 for a
// few hosts, shrinking so that the map stays about 640 px tall, at least 2.
export function rowHeight(n: number): number {
  return Math.max(2, Math.min(18, Math.floor(640 / Math.max(1, n))));
}

// fleetQuery returns the parameters of p that the fleet API reads, label
// repeated.
function fleetQuery(p: URLSearchParams, extra: string[] = []): URLSearchParams {
  const out = new URLSearchParams();
  for (const name of [...SCOPE_PARAMS, ...SEARCH_PARAMS, ...extra]) for (const v of p.getAll(name)) if (v) out.append(name, v);
  return out;
}

// hostAt returns the host's night page over [from, to), padded to at
// least ten minutes around it: where a cell or a peak opens.
export function hostAt(host: string, from: number, to: number): string {
  const pad = Math.max(to - from, 5 * 60e9);
  return withQuery("hostPage", new URLSearchParams({ from: fmtWallParam(from - pad), to: fmtWallParam(to + pad) }), host);
}

function labelText(ls: HostLabel[]): string {
  return ls.map((l) => `${l.key}=${l.value}`).join(" ");
}

function share(v: number | null): string {
  return v === null ? "–" : fmtPct(v);
}

// FleetView draws the map and keeps its keyboard cursor.
class FleetView {
  private rows: FleetRow[] = [];
  private rh = 18;
  private width = 0;
  private max = 1;
  private cursor = { row: 0, col: 0, shown: false };
  private readonly canvas = h("canvas", { attrs: { "data-testid": "fleet-canvas" } });
  private readonly tip = new Tooltip();
  private readonly redraw = onNextFrame(() => this.draw());

  constructor(
    private readonly box: HTMLElement,
    private readonly names: HTMLElement,
    private readonly axisBox: HTMLElement,
    private m: FleetMap,
  ) {
    box.append(this.canvas);
    this.canvas.addEventListener("mousemove", (ev) => this.hover(ev));
    this.canvas.addEventListener("mouseleave", () => this.tip.hide());
    this.canvas.addEventListener("click", (ev) => {
      const c = this.cellAt(ev);
      if (c) location.assign(this.cellHref(c.row, c.col));
    });
    box.addEventListener("keydown", (ev) => this.key(ev));
    box.addEventListener("blur", () => {
      this.cursor.shown = false;
      this.tip.hide();
      this.redraw();
    });
    window.addEventListener("resize", this.redraw);
    onSchemeChange(this.redraw);
  }

  // show draws rows (in that order) of the map m.
  show(m: FleetMap, rows: FleetRow[]): void {
    this.m = m;
    this.rows = rows.slice(0, MAX_ROWS);
    this.rh = rowHeight(this.rows.length);
    this.max = 1;
    if (m.measure !== "peak_core") {
      let hi = 0;
      for (const r of this.rows) for (const v of r.values) if (v !== null && v > hi) hi = v;
      this.max = hi > 0 ? hi : 1;
    }
    this.names.style.setProperty("--row", this.rh + "px");
    // Grouped, the group's name sits in a column of its own beside its
    // first host's, not over the row before it.
    this.names.classList.toggle("grouped", !!m.group && this.rh >= 12);
    clear(this.names);
    let last: string | null = null;
    // Positions are set through the CSSOM: the page's policy refuses
    // style attributes.
    const place = (e: HTMLElement, i: number, height: boolean): HTMLElement => {
      e.style.top = i * this.rh + "px";
      if (height) e.style.height = this.rh + "px";
      return e;
    };
    this.rows.forEach((r, i) => {
      const group = m.group && r.group !== last ? r.group || "(none)" : null;
      last = r.group;
      if (this.rh >= 12) this.names.append(place(h("div", { class: "fleet-name", text: r.host, attrs: { title: labelText(r.labels) } }), i, true));
      if (group !== null) this.names.append(place(h("div", { class: this.rh >= 12 ? "fleet-group" : "fleet-name", text: `${m.group}=${group}` }), i, false));
    });
    this.names.style.height = this.rows.length * this.rh + "px";
    this.box.setAttribute("aria-rowcount", String(this.rows.length));
    this.draw();
  }

  private cols(): number {
    return this.rows[0]?.values.length ?? Math.max(1, Math.round((this.m.to_ns - this.m.from_ns) / Math.max(1, this.m.bucket_ns)));
  }

  private draw(): void {
    const n = this.cols();
    this.width = Math.max(200, this.box.clientWidth || 800);
    const height = Math.max(this.rh, this.rows.length * this.rh);
    const ctx = setupCanvas(this.canvas, this.width, height);
    const cw = this.width / n;
    ctx.fillStyle = emptyCell();
    ctx.fillRect(0, 0, this.width, height);
    let lastGroup: string | null = null;
    this.rows.forEach((r, i) => {
      const y = i * this.rh;
      r.values.forEach((v, c) => {
        if (v === null) return;
        ctx.fillStyle = heatColor(Math.min(1, v / this.max));
        ctx.fillRect(c * cw, y, Math.ceil(cw), this.rh - (this.rh > 4 ? 1 : 0));
      });
      ctx.fillStyle = isDark() ? "#fff" : "#000";
      for (const t of r.markers) {
        const x = ((t - this.m.from_ns) / (this.m.to_ns - this.m.from_ns)) * this.width;
        ctx.fillRect(Math.round(x), y, 1, Math.max(2, Math.ceil(this.rh / 2)));
      }
      if (this.m.group && lastGroup !== null && r.group !== lastGroup) {
        ctx.fillStyle = isDark() ? "#ddd" : "#333";
        ctx.fillRect(0, y - 1, this.width, 1);
      }
      lastGroup = r.group;
    });
    if (this.cursor.shown && this.rows.length > 0) {
      ctx.strokeStyle = isDark() ? "#fff" : "#000";
      ctx.lineWidth = 2;
      ctx.strokeRect(this.cursor.col * cw + 1, this.cursor.row * this.rh + 1, Math.max(2, cw - 2), Math.max(2, this.rh - 2));
    }
    drawAxis(this.axisBox, wallTicks(this.m.from_ns, this.m.to_ns, this.width, true), (ns) => ((ns - this.m.from_ns) / (this.m.to_ns - this.m.from_ns)) * this.width);
  }

  private cellAt(ev: MouseEvent): { row: number; col: number } | null {
    const r = this.canvas.getBoundingClientRect();
    const row = Math.floor((ev.clientY - r.top) / this.rh);
    const col = Math.floor(((ev.clientX - r.left) / r.width) * this.cols());
    if (row < 0 || row >= this.rows.length || col < 0 || col >= this.cols()) return null;
    return { row, col };
  }

  private cellHref(row: number, col: number): string {
    const from = this.m.from_ns + col * this.m.bucket_ns;
    return hostAt(this.rows[row].host, from, Math.min(this.m.to_ns, from + this.m.bucket_ns));
  }

  private lines(row: number, col: number): string[] {
    const r = this.rows[row];
    const from = this.m.from_ns + col * this.m.bucket_ns;
    const to = Math.min(this.m.to_ns, from + this.m.bucket_ns);
    const v = r.values[col];
    const what = this.m.measure === "peak_core" ? "busiest core's system share" : `share of ${this.m.measure}`;
    const out = [r.host, fmtWallRange(from, to, false, true), `${what}: ${v === null ? "no samples" : fmtPct(v)}`];
    const marks = r.markers.filter((t) => t >= from && t < to).length;
    if (marks > 0) out.push(`${marks} marker${marks > 1 ? "s" : ""}`);
    if (r.labels.length > 0) out.push(labelText(r.labels));
    out.push("click to open the host's night here");
    return out;
  }

  private hover(ev: MouseEvent): void {
    const c = this.cellAt(ev);
    if (!c) {
      this.tip.hide();
      return;
    }
    this.tip.show(ev, this.lines(c.row, c.col));
  }

  private key(ev: KeyboardEvent): void {
    if (this.rows.length === 0) return;
    const c = this.cursor;
    const n = this.cols();
    switch (ev.key) {
      case "ArrowUp":
        c.row = Math.max(0, c.row - 1);
        break;
      case "ArrowDown":
        c.row = Math.min(this.rows.length - 1, c.row + 1);
        break;
      case "ArrowLeft":
        c.col = Math.max(0, c.col - 1);
        break;
      case "ArrowRight":
        c.col = Math.min(n - 1, c.col + 1);
        break;
      case "Enter":
        if (c.shown) location.assign(this.cellHref(c.row, c.col));
        return;
      default:
        return;
    }
    ev.preventDefault();
    c.shown = true;
    this.draw();
    const r = this.canvas.getBoundingClientRect();
    this.tip.show({ clientX: r.left + ((c.col + 1) / n) * r.width, clientY: r.top + (c.row + 1) * this.rh }, this.lines(c.row, c.col));
  }
}

// sparkline draws a share per column, scaled to its peak.
function sparkline(values: (number | null)[]): HTMLCanvasElement {
  const c = h("canvas", { class: "spark", attrs: { "aria-hidden": "true" } });
  const w = 120;
  const ht = 20;
  const ctx = setupCanvas(c, w, ht);
  let hi = 0;
  for (const v of values) if (v !== null && v > hi) hi = v;
  ctx.fillStyle = heatColor(0.8);
  const cw = w / Math.max(1, values.length);
  values.forEach((v, i) => {
    if (v === null || hi === 0) return;
    const y = (v / hi) * ht;
    ctx.fillRect(i * cw, ht - y, Math.max(1, cw), Math.max(1, y));
  });
  return c;
}

function chips(ls: HostLabel[]): HTMLElement {
  return h("span", { class: "labels" }, ...ls.map((l) => h("span", { class: "label-chip", text: `${l.key}=${l.value}` })));
}

// fillTable lists the hosts of the map, each row focusable through its
// host's link.
function fillTable(m: FleetMap, rows: FleetRow[]): void {
  const body = $("[data-testid=fleet-table] tbody");
  if (!body) return;
  clear(body);
  const what = m.measure === "peak_core" ? "busiest core's system share, mean" : m.measure;
  $("[data-testid=fleet-table] thead th:nth-child(4)")?.replaceChildren(what);
  for (const r of rows) {
    body.append(
      h(
        "tr",
        { attrs: { "data-host": r.host } },
        h("td", null, h("a", { text: r.host, attrs: { href: r.href } })),
        h("td", { text: r.group }),
        h("td", null, chips(r.labels)),
        h("td", { text: share(r.share) }),
        h("td", { text: share(r.peak) }),
        h("td", { text: !r.peak ? "–" : fmtClock(r.peak_at_ns, true) }),
      ),
    );
  }
}

function fillHits(res: FleetSearch): void {
  const sec = $("[data-testid=fleet-hits]");
  const body = $("[data-testid=fleet-hit-table] tbody");
  if (!sec || !body) return;
  clear(body);
  sec.hidden = false;
  res.hosts.forEach((hit: FleetHit, i) => {
    body.append(
      h(
        "tr",
        { attrs: { "data-host": hit.host, "data-rank": String(i + 1) } },
        h("td", null, h("a", { text: hit.host, attrs: { href: hit.href, title: "the host's night around its peak" } })),
        h("td", null, chips(hit.labels)),
        h("td", { text: share(hit.share) }),
        h("td", { text: share(hit.peak) }),
        h("td", { text: !hit.peak ? "–" : fmtClock(hit.peak_at_ns, true) }),
        h("td", null, sparkline(hit.spark)),
      ),
    );
  });
  if (res.hosts.length === 0) body.append(h("tr", null, h("td", { text: "no host has samples matching the search in this range", attrs: { colspan: "6" } })));
}

function ratio(r: number | null): string {
  return r === null ? "∞" : r >= 10 ? r.toFixed(0) + "×" : r.toFixed(2) + "×";
}

function fillGroups(res: FleetGroups): void {
  const body = $("#fleet-groups .fleet-panel-body");
  if (!body) return;
  clear(body);
  body.append(h("p", { class: "hint", text: `${res.key}: ${res.groups.map((g) => `${g.value} (${g.hosts} hosts)`).join(", ")}; ${res.tested} tested, ${res.permutations} permutations, seed ${res.seed}` }));
  if (res.findings.length === 0) {
    body.append(h("p", { text: "No name's share differs between the groups." }));
    return;
  }
  const rows = res.findings.map((d: FleetDifference) =>
    h(
      "tr",
      null,
      h("td", null, h("a", { text: d.name, attrs: { href: d.search, title: `search the fleet for this ${d.kind}` } }), h("span", { class: "hint", text: " " + d.kind })),
      h("td", { text: `${res.key}=${d.group}` }),
      h("td", { text: fmtPct(d.group_share) }),
      h("td", { text: fmtPct(d.rest_share) }),
      h("td", { text: ratio(d.ratio) }),
      h("td", { text: d.q.toPrecision(2) }),
    ),
  );
  body.append(
    h(
      "table",
      { attrs: { "data-testid": "fleet-group-table" } },
      h("thead", null, h("tr", null, ...["Name", "Group", "Share in group", "Share elsewhere", "Ratio", "q"].map((t) => h("th", { text: t })))),
      h("tbody", null, ...rows),
    ),
  );
}

function fillUptime(res: FleetUptime): void {
  const body = $("#fleet-uptime .fleet-panel-body");
  if (!body) return;
  clear(body);
  body.append(h("p", { class: "hint", text: `${res.units} sessions of ${res.hosts} hosts${res.no_boot ? `, ${res.no_boot} hosts without a boot time left out` : ""}; ${res.tested} tested, ${res.permutations} permutations, seed ${res.seed}` }));
  if (res.findings.length === 0) {
    body.append(h("p", { text: "No name's share follows uptime." }));
    return;
  }
  const rows = res.findings.map((f: FleetRise) =>
    h(
      "tr",
      null,
      h("td", null, h("a", { text: f.name, attrs: { href: f.search, title: `search the fleet for this ${f.kind}` } }), h("span", { class: "hint", text: " " + f.kind })),
      h("td", { text: f.rho.toFixed(2) }),
      h("td", { text: `${fmtPct(f.low_share)} → ${fmtPct(f.high_share)}` }),
      h("td", { text: f.q.toPrecision(2) }),
    ),
  );
  body.append(
    h(
      "table",
      { attrs: { "data-testid": "fleet-uptime-table" } },
      h("thead", null, h("tr", null, ...["Name", "rho", "Share, low → high uptime", "q"].map((t) => h("th", { text: t })))),
      h("tbody", null, ...rows),
    ),
  );
}

// setupForm makes the form's search box write the parameter its picker
// names, so that the URL says function=, comm=, comm_regex= or stack=.
function setupForm(): void {
  const form = $<HTMLFormElement>("#fleet-form");
  const kind = $<HTMLSelectElement>("#fleet-kind");
  const search = $<HTMLInputElement>("#fleet-search");
  if (!form || !kind || !search) return;
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const p = currentParams();
    const out = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (typeof v === "string" && v.trim() !== "") out.append(k, v.trim());
    for (const k of ["from", "to", "buckets", "tz"]) {
      const v = p.get(k);
      if (v) out.set(k, v);
    }
    if (search.value.trim()) out.set(kind.value, search.value.trim());
    location.assign(withQuery("fleetPage", out));
  });
  $<HTMLSelectElement>("#fleet-group")?.addEventListener("change", () => form.requestSubmit());
}

// fleetPage fills the fleet page from the fleet API.
export function fleetPage(): void {
  setupForm();
  const box = $("#fleet-map");
  const names = $("#fleet-names");
  const axisBox = $("#fleet-axis");
  const status = $("[data-testid=fleet-status]");
  if (!box || !names || !axisBox || !status) return;
  const p = currentParams();
  const q = fleetQuery(p);
  const searching = SEARCH_PARAMS.some((n) => p.get(n));
  void (async () => {
    let m: FleetMap;
    try {
      m = await getJSON<FleetMap>(withQuery("fleetAPI", q));
    } catch (e) {
      status.textContent = errorMessage(e);
      return;
    }
    const view = new FleetView(box, names, axisBox, m);
    const range = $("#fleet-range");
    if (range) range.textContent = `${fmtWallRange(m.from_ns, m.to_ns, false, true)}, ${m.rows.length} hosts shown`;
    let rows = m.rows;
    const note = rows.length > MAX_ROWS ? ` The map draws the first ${MAX_ROWS} of ${rows.length} hosts; narrow them with a label. The table lists them all.` : "";
    status.textContent =
      (rows.length === 0 ? "No host has indexed samples in this range." : m.measure === "peak_core" ? "Each cell: the busiest core's system share." : `Each cell: the share of ${m.measure}.`) +
      ` Times in ${zoneName()}.` +
      note;
    view.show(m, rows);
    fillTable(m, rows);
    if (searching) {
      try {
        const res = await getJSON<FleetSearch>(withQuery("fleetSearchAPI", q));
        fillHits(res);
        // The map's rows follow the search's ranking, hosts without a
        // match last.
        const rank = new Map(res.hosts.map((hit, i) => [hit.host, i]));
        rows = [...m.rows].sort((a, b) => (rank.get(a.host) ?? 1e9) - (rank.get(b.host) ?? 1e9));
        view.show(m, rows);
        fillTable(m, rows);
      } catch (e) {
        status.textContent = errorMessage(e);
      }
    }
    const groups = $("#fleet-groups .fleet-panel-body");
    if (groups) {
      if (!p.get("group")) {
        groups.replaceChildren(h("p", { class: "hint", text: "Pick a label to group by to compare its values." }));
      } else {
        groups.replaceChildren(h("p", { class: "hint", text: "Testing…" }));
        getJSON<FleetGroups>(withQuery("fleetGroupsAPI", fleetQuery(p, ["permutations", "seed", "limit"])))
          .then(fillGroups)
          .catch((e) => groups.replaceChildren(h("p", { class: "error", text: errorMessage(e) })));
      }
    }
    const uptime = $("#fleet-uptime .fleet-panel-body");
    if (uptime) {
      uptime.replaceChildren(h("p", { class: "hint", text: "Testing…" }));
      getJSON<FleetUptime>(withQuery("fleetUptimeAPI", fleetQuery(p, ["permutations", "seed", "limit"])))
        .then(fillUptime)
        .catch((e) => uptime.replaceChildren(h("p", { class: "error", text: errorMessage(e) })));
    }
  })();
}
