// The skip link, each page's first focusable element, moves the focus to
// the page's main view: the view's own focusable element (a map's canvas,
// the flame graph's), else the view itself, else the main content. The
// URL keeps no fragment, so links copied afterwards are the page's.

// setupSkipLink handles the skip link of every page shown, in-place
// navigations' too; it runs once.
export function setupSkipLink(): void {
  document.addEventListener("click", (ev) => {
    const link = ev.target instanceof Element ? ev.target.closest<HTMLAnchorElement>("a.skip-link") : null;
    if (!link) return;
    const target = document.querySelector<HTMLElement>(link.getAttribute("href") || "#main") ?? document.querySelector<HTMLElement>("main");
    if (!target) return;
    ev.preventDefault();
    const inner = target.matches('[tabindex="0"]') ? target : target.querySelector<HTMLElement>('[tabindex="0"]');
    const to = inner ?? target;
    if (!to.hasAttribute("tabindex")) to.setAttribute("tabindex", "-1");
    to.focus({ preventScroll: true });
    target.scrollIntoView({ block: "start" });
  });
}
