// The profile page's filter form (form#filters): its fields are the URL's
// filters and map parameters. Submitting it, or changing a select, a
// checkbox or a radio button, writes the fields into the URL (keeping the
// URL's other parameters) and reloads the views; back and forward set the
// fields from the URL again.

import { currentParams } from "./state";

export class FilterForm {
  constructor(
    readonly form: HTMLFormElement,
    private onApply: () => void, // the URL has the form's values
  ) {
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      this.apply(true);
    });
    form.addEventListener("change", (ev) => {
      const t = ev.target as HTMLElement;
      if (t instanceof HTMLSelectElement || (t instanceof HTMLInputElement && (t.type === "checkbox" || t.type === "radio"))) {
        this.apply(true);
      }
    });
    window.addEventListener("popstate", () => {
      if (!form.isConnected) return;
      this.sync(currentParams());
      this.onApply();
    });
  }

  // setField sets the text field name, when the form has one, and reports
  // whether it has.
  setField(name: string, value: string): boolean {
    const field = this.form.elements.namedItem(name);
    if (!(field instanceof HTMLInputElement)) return false;
    field.value = value;
    return true;
  }

  // submit submits the form as its button does.
  submit(): void {
    this.form.requestSubmit();
  }

  // apply writes the form's values into the URL, with pushState or
  // replaceState.
  private apply(push: boolean): void {
    const form = this.form;
    const p = new URLSearchParams();
    const fd = new FormData(form);
    for (const [k, v] of fd.entries()) {
      if (typeof v === "string" && v.trim() !== "") p.set(k, v.trim());
    }
    // Keep URL state that the form does not hold.
    const cur = currentParams();
    for (const [k, v] of cur.entries()) if (!form.elements.namedItem(k) && !p.has(k)) p.set(k, v);
    const qs = p.toString();
    const url = location.pathname + (qs ? "?" + qs : "");
    const state = { page: "profile" };
    if (push) history.pushState(state, "", url);
    else history.replaceState(state, "", url);
    this.onApply();
  }

  // sync sets the form's fields from the URL (after back/forward).
  private sync(p: URLSearchParams): void {
    for (const el of Array.from(this.form.elements)) {
      if (el instanceof HTMLInputElement || el instanceof HTMLSelectElement) {
        if (!el.name) continue;
        const v = p.get(el.name) ?? "";
        if (el instanceof HTMLInputElement && (el.type === "checkbox" || el.type === "radio")) el.checked = v === el.value;
        else el.value = v;
      }
    }
  }
}
