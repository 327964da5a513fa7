// In-place navigation between Subsecond's pages. Opening a selection's flame
// graph fetches the flame page's HTML and its JSON in parallel and swaps the
// page in, instead of a full load that would fetch, parse and run everything
// again; the URL changes with pushState, so the link and the back button
// behave as after a normal navigation. The new page's markup comes from our
// own server (templ-escaped) and its scripts are not run: app.js boots it.
// Anything unexpected falls back to a normal navigation.

import { getJSON } from "./api";
import { openingPage } from "./state";
import { withTZ } from "./wallclock";

const prefetched = new Map<string, Promise<unknown>>();

// prefetchJSON starts fetching url so that the next page can take it.
export function prefetchJSON(url: string): void {
  const p = getJSON<unknown>(url);
  p.catch(() => {}); // the taker sees the error
  prefetched.set(url, p);
}

// fetchJSON returns the prefetched answer for url, or fetches it (with
// signal, when given: a prefetched answer cannot be aborted).
export function fetchJSON<T>(url: string, signal?: AbortSignal): Promise<T> {
  const p = prefetched.get(url);
  prefetched.delete(url);
  return (p as Promise<T>) || getJSON<T>(url, signal);
}

// navigate shows url's page in place and boots it.
export async function navigate(url: string, boot: () => void): Promise<void> {
  openingPage();
  url = withTZ(url);
  try {
    const res = await fetch(url, { headers: { Accept: "text/html" }, credentials: "same-origin" });
    if (!res.ok || !(res.headers.get("Content-Type") || "").startsWith("text/html")) throw new Error("not a page");
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    const data = doc.getElementById("view-data");
    const page = doc.body && doc.body.dataset.page;
    if (!data || !page) throw new Error("not a Subsecond page");
    history.pushState({ page }, "", url);
    document.title = doc.title;
    const old = document.getElementById("view-data");
    if (old) old.replaceWith(document.importNode(data, true));
    else document.head.append(document.importNode(data, true));
    document.documentElement.replaceChild(document.importNode(doc.body, true), document.body);
    window.scrollTo(0, 0);
    boot();
  } catch {
    location.assign(url);
  }
}

// watchHistory reloads when back/forward reaches an entry of another page
// type than the one shown; entries of the same page are handled by the page.
export function watchHistory(): void {
  const first = document.body.dataset.page;
  window.addEventListener("popstate", (ev) => {
    const want = (ev.state && (ev.state as { page?: string }).page) || first;
    if (want !== document.body.dataset.page) location.reload();
  });
}
