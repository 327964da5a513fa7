// The flame graph page's Compare form: a differential view of the page's
// range against a baseline, by default the same length just before it, in
// this profile or another.

import { $, h } from "./dom";
import { fmtOffset, parseOffset } from "./format";
import { path, withQuery } from "./links";
import { fetchJSON } from "./nav";
import { FILTER_PARAMS, pick, rememberBack } from "./state";
import { withTZ } from "./wallclock";
import type { ProfileSummary } from "./wire";

// compareForm offers a differential view against a baseline range.
export function compareForm(toolbar: HTMLElement, prof: ProfileSummary, p: URLSearchParams): void {
  const id = prof.id;
  const dur = prof.end_ns + 1 - prof.t0_ns;
  const s = Math.max(0, parseOffset(p.get("start") ?? "0"));
  const e = Math.min(dur, p.get("end") ? parseOffset(p.get("end")) : dur);
  if (!(e > s)) return;
  const base = baseline(s, e, dur);
  const from = h("input", { class: "num", attrs: { name: "start", "aria-label": "baseline start (s)", "data-testid": "compare-start", size: "7" } });
  const to = h("input", { class: "num", attrs: { name: "end", "aria-label": "baseline end (s)", "data-testid": "compare-end", size: "7" } });
  if (base) {
    from.value = fmtOffset(base[0]);
    to.value = fmtOffset(base[1]);
  }
  // The baseline may come from another profile: its whole capture unless a
  // range (seconds from its T0) is given.
  const other = h("select", { attrs: { name: "base", "aria-label": "baseline profile", "data-testid": "compare-profile" } }, h("option", { text: "this profile", attrs: { value: "" } }));
  void fetchJSON<{ profiles: ProfileSummary[] }>(path("profilesAPI"))
    .then((list) => {
      for (const o of list.profiles) if (o.id !== id) other.append(h("option", { text: o.name || o.id, attrs: { value: o.id } }));
    })
    .catch(() => {});
  other.addEventListener("change", () => {
    const self = other.value === "";
    from.value = self && base ? fmtOffset(base[0]) : "";
    to.value = self && base ? fmtOffset(base[1]) : "";
    from.setAttribute("placeholder", self ? "" : "all");
    to.setAttribute("placeholder", self ? "" : "all");
  });
  const form = h(
    "form",
    { class: "compare", attrs: { "data-testid": "compare" } },
    "Compare with baseline ",
    other,
    " ",
    from,
    "–",
    to,
    " s ",
    h("button", { class: "btn", text: "Compare", attrs: { type: "submit" } }),
  );
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    // The target's bounds as the URL gave them (none: the whole capture).
    const q = pick(p, ["start", "end", ...FILTER_PARAMS]);
    if (other.value) q.set("base", other.value);
    if (from.value.trim() || !other.value) q.set("start2", from.value.trim());
    if (to.value.trim() || !other.value) q.set("end2", to.value.trim());
    const target = withQuery("diffPage", q, id);
    const back = $<HTMLAnchorElement>("[data-testid=range] a");
    if (back) rememberBack(target, back.href);
    location.assign(withTZ(target));
  });
  toolbar.append(form);
}

// baseline proposes the range to compare [s, e) with, as offsets in 0..dur:
// the same length just before it; what there is before it when it starts
// early; else the same length just after it; null when nothing is beside it.
export function baseline(s: number, e: number, dur: number): [number, number] | null {
  const len = e - s;
  if (s >= len) return [s - len, s];
  if (s > 0) return [0, s];
  if (e < dur) return [e, Math.min(dur, e + len)];
  return null;
}
