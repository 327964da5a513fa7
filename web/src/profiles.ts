// The index page's list of profiles: a search over names, hosts and file
// names, sorting by any column (headers are buttons; the order goes into
// the URL as sort, "samples-desc", and back and forward restore it), and, unless the
// server is read-only, renaming and deleting in place. Changes send the
// upload form's token when the server asks for one.

import { APIError, errorMessage } from "./api";
import { $, clear, h } from "./dom";
import { path } from "./links";
import { currentParams, updateURL } from "./state";
import type { Profile, ViewData } from "./wire";

type Key = "name" | "host" | "duration" | "samples" | "cpus" | "size" | "uploaded";

const TEXT_KEYS: Key[] = ["name", "host"];
const KEYS: Key[] = ["name", "host", "duration", "samples", "cpus", "size", "uploaded"];

// sortOf reads the list's order from the URL's sort: a column, ascending,
// or with "-desc" descending; the newest first by default.
function sortOf(p: URLSearchParams): { key: Key; desc: boolean } {
  const v = p.get("sort") ?? "";
  const desc = v.endsWith("-desc");
  const key = (desc ? v.slice(0, -"-desc".length) : v) as Key;
  return KEYS.includes(key) ? { key, desc } : { key: "uploaded", desc: true };
}

export function profileList(vd: ViewData): void {
  const table = $<HTMLTableElement>("table[data-testid=profiles]");
  const tbody = table?.tBodies[0];
  if (!table || !tbody) return;
  const rows = Array.from(tbody.rows);
  const status = h("p", { class: "list-status", attrs: { "data-testid": "profiles-status", role: "status" } });

  // Search: every word must appear in the name, host or file name.
  const search = h("input", {
    attrs: { type: "search", "data-testid": "profiles-search", placeholder: "name, host or file", "aria-label": "Search profiles" },
  });
  const filter = () => {
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    for (const tr of rows) {
      const text = `${tr.dataset.name} ${tr.dataset.host} ${tr.dataset.file}`.toLowerCase();
      const ok = words.every((w) => text.includes(w));
      tr.hidden = !ok;
      if (ok) shown++;
    }
    status.textContent = words.length ? `${shown} of ${rows.length} profiles` : `${rows.length} profile${rows.length === 1 ? "" : "s"}`;
  };
  search.addEventListener("input", filter);
  table.before(h("div", { class: "list-tools" }, h("label", null, "Search ", search), status));

  // Sort: a header button sorts by its column; again reverses.
  let { key, desc } = sortOf(currentParams());
  const heads = Array.from(table.tHead?.rows[0]?.cells ?? []).filter((th) => th.dataset.sort);
  const sort = () => {
    const val = (tr: HTMLTableRowElement) => tr.dataset[key] ?? "";
    const sorted = rows.slice().sort((a, b) => {
      const v = TEXT_KEYS.includes(key) ? val(a).localeCompare(val(b), undefined, { sensitivity: "base", numeric: true }) : Number(val(a)) - Number(val(b));
      return (desc ? -v : v) || (a.dataset.name ?? "").localeCompare(b.dataset.name ?? "");
    });
    tbody.append(...sorted);
    for (const th of heads) {
      if (th.dataset.sort === key) th.setAttribute("aria-sort", desc ? "descending" : "ascending");
      else th.removeAttribute("aria-sort");
    }
  };
  for (const th of heads) {
    const k = th.dataset.sort as Key;
    const btn = h("button", { class: "sort", text: th.textContent ?? "", attrs: { type: "button" } });
    btn.addEventListener("click", () => {
      if (key === k) desc = !desc;
      else {
        key = k;
        desc = !TEXT_KEYS.includes(k);
      }
      updateURL({ sort: key === "uploaded" && desc ? null : key + (desc ? "-desc" : "") }, true);
      sort();
    });
    clear(th);
    th.append(btn);
  }
  window.addEventListener("popstate", () => {
    if (!table.isConnected) return;
    ({ key, desc } = sortOf(currentParams()));
    sort();
  });
  sort();
  filter();

  if (vd.readOnly) return;
  for (const tr of rows) actions(tr, rows, filter);
}

// change sends a PATCH or DELETE for profile id with the token, if any.
async function change(method: "PATCH" | "DELETE", id: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { Accept: "application/json" };
  const token = $<HTMLInputElement>("#upload-token")?.value;
  if (token) headers.Authorization = "Bearer " + token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path("profileAPI", id), { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) {
    let msg = res.statusText;
    try {
      msg = ((await res.json()) as { error?: string }).error || msg;
    } catch {
      /* not JSON */
    }
    if (res.status === 401) msg += " — enter it in the upload form's Token field";
    throw new APIError(`${msg} (HTTP ${res.status})`, res.status);
  }
  return res;
}

// actions gives a row its Rename and Delete buttons.
function actions(tr: HTMLTableRowElement, rows: HTMLTableRowElement[], refilter: () => void): void {
  const cell = tr.querySelector<HTMLTableCellElement>("td.actions");
  const nameCell = tr.querySelector<HTMLTableCellElement>("td.name");
  const id = tr.dataset.id;
  if (!cell || !nameCell || !id) return;
  const label = tr.dataset.name ?? id;
  const note = h("span", { class: "row-note", attrs: { role: "alert" } });

  const idle = () => {
    clear(cell);
    const rename = h("button", { class: "btn small", text: "Rename", attrs: { type: "button", "data-testid": "rename", "aria-label": `Rename ${label}` } });
    const del = h("button", { class: "btn small danger", text: "Delete", attrs: { type: "button", "data-testid": "delete", "aria-label": `Delete ${label}` } });
    rename.addEventListener("click", editing);
    del.addEventListener("click", confirming);
    cell.append(rename, del, note);
  };

  const editing = () => {
    const link = nameCell.querySelector("a");
    const input = h("input", { attrs: { type: "text", "data-testid": "rename-input", "aria-label": `New name of ${label}`, maxlength: "200" } });
    input.value = tr.dataset.name ?? "";
    const save = h("button", { class: "btn small", text: "Save", attrs: { type: "submit" } });
    const cancel = h("button", { class: "btn small", text: "Cancel", attrs: { type: "button" } });
    const form = h("form", { class: "rename" }, input, save, cancel);
    const done = () => {
      form.replaceWith(link!);
      idle();
    };
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      save.disabled = true;
      try {
        const res = await change("PATCH", id, { name: input.value });
        const p = (await res.json()) as Profile;
        const shown = p.name || p.file_name || p.id;
        tr.dataset.name = shown;
        if (link) link.textContent = shown;
        done();
        refilter();
      } catch (e) {
        save.disabled = false;
        note.textContent = errorMessage(e);
        cell.append(note);
      }
    });
    cancel.addEventListener("click", done);
    input.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") done();
    });
    if (link) link.replaceWith(form);
    clear(cell);
    cell.append(note);
    note.textContent = "";
    input.focus();
    input.select();
  };

  const confirming = () => {
    clear(cell);
    const yes = h("button", { class: "btn small danger", text: "Delete it", attrs: { type: "button", "data-testid": "delete-confirm" } });
    const no = h("button", { class: "btn small", text: "Keep", attrs: { type: "button" } });
    note.textContent = "";
    cell.append(h("span", { class: "confirm", text: "Delete for good? " }), yes, no, note);
    no.addEventListener("click", idle);
    yes.addEventListener("click", async () => {
      yes.disabled = true;
      try {
        await change("DELETE", id);
        tr.remove();
        rows.splice(rows.indexOf(tr), 1);
        refilter();
      } catch (e) {
        yes.disabled = false;
        note.textContent = errorMessage(e);
      }
    });
    no.focus();
  };
  idle();
}
