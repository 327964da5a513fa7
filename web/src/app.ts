// Subsecond's front end. The server renders each page's markup and a
// view-data JSON script; this module fills the page's containers: upload on
// the index, heatmap and cores map on the profile page, flame graphs on the
// flame and diff pages. Symbol names only ever reach the page as text.

import { setupCopyLink } from "./copylink";
import { flamePage } from "./flamepage";
import { profilePage } from "./profile";
import { viewData } from "./state";
import { setupUpload } from "./upload";

function main(): void {
  const vd = viewData();
  const page = document.body.dataset.page || vd.page;
  setupCopyLink();
  switch (page) {
    case "index":
      setupUpload();
      break;
    case "profile":
      profilePage(vd);
      break;
    case "flame":
      void flamePage(vd, false);
      break;
    case "diff":
      void flamePage(vd, true);
      break;
  }
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
else main();
