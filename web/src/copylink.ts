// The copy-link button copies the page's URL, which holds the whole view
// state. Without clipboard access it shows the URL selected in a text field.

import { $, h } from "./dom";

export function setupCopyLink(): void {
  const btn = $<HTMLButtonElement>("#copy-link");
  if (!btn) return;
  const label = btn.textContent || "Copy link";
  btn.addEventListener("click", async () => {
    const url = location.href;
    try {
      if (!navigator.clipboard) throw new Error("no clipboard");
      await navigator.clipboard.writeText(url);
      btn.textContent = "Link copied";
      btn.classList.add("done");
      setTimeout(() => {
        btn.textContent = label;
        btn.classList.remove("done");
      }, 1500);
    } catch {
      let field = $<HTMLInputElement>("#copy-link-fallback");
      if (!field) {
        field = h("input", {
          class: "copy-fallback",
          attrs: { id: "copy-link-fallback", "data-testid": "copy-link-fallback", readonly: "", "aria-label": "Link to this view" },
        });
        btn.after(field);
      }
      field.value = url;
      field.focus();
      field.select();
    }
  });
}
