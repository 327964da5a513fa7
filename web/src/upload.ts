// The index page's upload: drag-and-drop onto the drop zone or the file
// picker, then a raw-body POST with upload progress, "parsing…" until the
// server answers, a clear error, or straight on to the new profile.

import { $, h } from "./dom";
import { path } from "./links";
import { navigate, prefetchJSON } from "./nav";
import { handOff, heatmapAPI } from "./state";

interface UploadResponse {
  profile?: { id: string };
  url?: string;
  existed?: boolean;
  error?: string;
}

// setupUpload wires the index page's upload form; boot fills the profile
// page that a finished upload opens in place.
export function setupUpload(boot: () => void): void {
  const form = $<HTMLFormElement>("#upload-form");
  const input = $<HTMLInputElement>("#upload-file");
  const drop = $("#upload-drop");
  const progress = $<HTMLProgressElement>("#upload-progress");
  const errBox = $("#upload-error");
  if (!form || !input) return;
  let status = $("#upload-status");
  if (!status) {
    status = h("span", { class: "upload-status", attrs: { id: "upload-status", "data-testid": "upload-status", "aria-live": "polite" } });
    (progress || form).after(status);
  }
  const statusEl = status;
  let busy = false;

  const fail = (msg: string) => {
    busy = false;
    form.classList.remove("uploading");
    statusEl.textContent = "";
    if (progress) progress.hidden = true;
    if (errBox) {
      errBox.textContent = msg;
      errBox.hidden = false;
    }
  };

  // A 503 (the server busy, or its database down or restarting) is retried
  // after its Retry-After, at least 1, 2, 4, 8 s, up to uploadRetries times.
  const uploadRetries = 4;
  const send = (file: File, attempt = 0) => {
    if (busy) return;
    busy = true;
    if (errBox) {
      errBox.textContent = "";
      errBox.hidden = true;
    }
    const nameField = form.querySelector<HTMLInputElement>("input[name=name]");
    const name = (nameField && nameField.value.trim()) || file.name;
    const q = new URLSearchParams({ name });
    if (file.name) q.set("filename", file.name);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", (form.getAttribute("action") || path("profilesAPI")) + "?" + q.toString());
    xhr.setRequestHeader("Content-Type", "application/octet-stream");
    xhr.setRequestHeader("Accept", "application/json");
    const token = form.querySelector<HTMLInputElement>("input[name=token]");
    if (token && token.value) xhr.setRequestHeader("Authorization", "Bearer " + token.value);
    form.classList.add("uploading");
    if (progress) {
      progress.hidden = false;
      progress.max = 100;
      progress.value = 0;
    }
    statusEl.textContent = `Uploading ${file.name}…`;
    xhr.upload.addEventListener("progress", (ev) => {
      if (!progress || !ev.lengthComputable) return;
      progress.value = (ev.loaded / ev.total) * 100;
      statusEl.textContent = `Uploading ${file.name}… ${Math.floor((ev.loaded / ev.total) * 100)}%`;
    });
    xhr.upload.addEventListener("load", () => {
      handOff("upload-sent");
      if (progress) progress.value = 100;
      statusEl.textContent = "Parsing…";
      form.classList.add("parsing");
    });
    xhr.addEventListener("error", () => fail("Upload failed: the server could not be reached."));
    xhr.addEventListener("abort", () => fail("Upload aborted."));
    xhr.addEventListener("load", () => {
      handOff("upload-stored");
      form.classList.remove("parsing");
      let body: UploadResponse = {};
      try {
        body = JSON.parse(xhr.responseText) as UploadResponse;
      } catch {
        /* not JSON */
      }
      if (xhr.status === 503 && attempt < uploadRetries) {
        const after = Number(xhr.getResponseHeader("Retry-After")) || 0;
        const wait = Math.min(30, Math.max(after, 2 ** attempt));
        statusEl.textContent = `${body.error || "The server is unavailable"} — retrying in ${wait} s (${attempt + 1} of ${uploadRetries})…`;
        setTimeout(() => {
          busy = false;
          send(file, attempt + 1);
        }, wait * 1000);
        return;
      }
      if (xhr.status !== 200 && xhr.status !== 201) {
        const why = body.error || xhr.statusText || "unexpected response";
        return fail(`Upload failed (HTTP ${xhr.status}): ${why}`);
      }
      const id = body.profile && body.profile.id;
      let dest = id ? path("profilePage", id) : "";
      if (body.url) {
        try {
          const u = new URL(body.url, location.href);
          dest = u.pathname + u.search;
        } catch {
          /* keep the id-based path */
        }
      }
      if (!dest) return fail("Upload failed: the server's answer named no profile.");
      if (progress) progress.value = 100;
      statusEl.textContent = body.existed ? "Already stored — opening…" : "Done — opening…";
      // Open the profile page in place, its heatmap's data fetched beside
      // its HTML: a full load would fetch and run the script again first.
      if (id) prefetchJSON(heatmapAPI(id, new URLSearchParams(dest.split("?")[1] || "")));
      void navigate(dest, boot);
    });
    handOff("upload");
    xhr.send(file);
  };

  input.addEventListener("change", () => {
    const f = input.files && input.files[0];
    if (f) send(f);
  });
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const f = input.files && input.files[0];
    if (f) send(f);
    else fail("Choose a perf script file first.");
  });
  if (drop) {
    drop.addEventListener("click", (ev) => {
      if (ev.target === drop) input.click();
    });
    drop.addEventListener("dragover", (ev) => {
      ev.preventDefault();
      drop.classList.add("over");
    });
    drop.addEventListener("dragleave", () => drop.classList.remove("over"));
    drop.addEventListener("drop", (ev) => {
      ev.preventDefault();
      drop.classList.remove("over");
      const f = ev.dataTransfer && ev.dataTransfer.files[0];
      if (f) send(f);
    });
  }
}
