// Subsecond's front end. The server renders each page's markup and a
// view-data JSON script; this module fills the page's containers: upload on
// the index, heatmap and cores map on the profile page, flame graphs on the
// flame and diff pages. Symbol names only ever reach the page as text.

import { setupCopyLink } from "./copylink";
import { fleetPage } from "./fleet";
import { flamePage } from "./flamepage";
import { hostPage } from "./hostpage";
import { watchHistory } from "./nav";
import { profilePage } from "./profile";
import { profileList } from "./profiles";
import { setupSkipLink } from "./skiplink";
import { updateURL, viewData } from "./state";
import { setupUpload } from "./upload";
import { followTZ, keepTZOnLinks, setupTZ } from "./wallclock";

// boot fills the current page; it runs again after an in-place navigation.
function boot(): void {
  const vd = viewData();
  const page = document.body.dataset.page || vd.page;
  // The server clamped a bound the URL gave (a range past its capture):
  // the URL, and so Copy link, takes what the view shows.
  if (vd.canonical) updateURL(vd.canonical, false);
  setupCopyLink();
  setupTZ();
  switch (page) {
    case "index":
      setupUpload(boot);
      profileList(vd);
      break;
    case "profile":
      profilePage(vd, boot);
      break;
    case "flame":
    case "diff":
    case "stacks":
      void flamePage(vd, page, boot);
      break;
    case "host":
      hostPage(vd);
      break;
    case "fleet":
      fleetPage();
      break;
  }
}

function main(): void {
  followTZ();
  watchHistory();
  setupSkipLink();
  keepTZOnLinks();
  boot();
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
else main();
