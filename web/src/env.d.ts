// TEST_HOOKS is set by esbuild's --define: false in the production build
// (web/static), true in the browser tests' build (web/teststatic), so that
// the hooks tests read are not in what users download.
declare const TEST_HOOKS: boolean;
