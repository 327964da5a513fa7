// run builds the server once for the whole browser suite (the test build of
// the front end, and the production build for bundle.test.mjs), then runs
// the test files one after another with those binaries, instead of every
// file's process linking its own. Arguments go on to node --test.

import { spawnSync } from 'node:child_process';
import { build, buildProduction } from './helpers.mjs';

process.env.SUBSECOND_BIN = build();
process.env.SUBSECOND_PROD_BIN = buildProduction();
const args = process.argv.slice(2);
const r = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...(args.length ? args : ['tests/browser/'])], { stdio: 'inherit' });
process.exit(r.status ?? 1);
