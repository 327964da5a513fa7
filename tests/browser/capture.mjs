// A deterministic perf script capture whose content the browser tests know:
// background load on every CPU, an all-CPU burst in `hot_loop` during
// [12.0, 12.5) s, CPU 5 pegged in the `gc` process during [4, 8) s, and
// hostile names: a frame `<img src=x onerror=alert(1)>` and a command
// `<b>evil</b>`, which must stay text everywhere.

import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

export const HOSTILE_SYMBOL = '<img src=x onerror=alert(1)>';
export const HOSTILE_COMM = '<b>evil</b>';
// HOSTILE_CORE is the part of the symbol that survives the flame graph's
// frame naming (which, like stackcollapse-perf.pl, trims argument lists).
export const HOSTILE_CORE = 'img src=x onerror=alert';
export const T_BASE = 5000; // seconds; perf prints uptime-based timestamps
export const BURST = { start: 12, end: 12.5 };
export const PEGGED = { cpu: 5, start: 4, end: 8 };

function rng(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const K = (addr, sym) => `\t${addr} ${sym}+0x1a ([kernel.kallsyms])`;
const U = (addr, sym, dso = '/usr/bin/webapp') => `\t${addr} ${sym}+0x10 (${dso})`;

// Stacks are leaf-first, as perf prints them.
export const STACKS = {
  json: [U('55d0000010a0', 'memcpy', '/usr/lib/x86_64-linux-gnu/libc.so.6'), U('55d000001100', 'parse_json'), U('55d000001200', 'serve_request'), U('55d000001300', 'main'), U('55d000001400', '_start')],
  hostile: [U('55d000001500', HOSTILE_SYMBOL), U('55d000001200', 'serve_request'), U('55d000001300', 'main'), U('55d000001400', '_start')],
  write: [K('ffffffff81300000', 'ksys_write'), K('ffffffff81200000', 'do_syscall_64'), K('ffffffff81000000', 'entry_SYSCALL_64'), U('55d000001600', 'write', '/usr/lib/x86_64-linux-gnu/libc.so.6'), U('55d000001200', 'serve_request'), U('55d000001300', 'main'), U('55d000001400', '_start')],
  jit: [`\t7f0000001000 LFoo;::bar (/tmp/perf-1234.map)`, `\t7f0000002000 Interpreter (/tmp/perf-1234.map)`, U('55d000001300', 'main'), U('55d000001400', '_start')],
  hot: [U('55d000001700', 'hot_loop'), U('55d000001800', 'compute'), U('55d000001300', 'main'), U('55d000001400', '_start')],
  gc: [U('55d000002100', 'mark_object', '/usr/bin/gc'), U('55d000002200', 'gc_mark', '/usr/bin/gc'), U('55d000002300', 'thread_start', '/usr/bin/gc')],
  evil: [U('55d000003100', 'evil_work', '/usr/bin/evil'), U('55d000003200', 'main', '/usr/bin/evil')],
  idle: [K('ffffffff81a00100', 'default_idle'), K('ffffffff81a00200', 'do_idle'), K('ffffffff81a00300', 'cpu_startup_entry')],
};

// writeCapture writes the capture to path: cpus CPUs sampled at hz for
// seconds, busy with probability load outside the planted episodes. It
// returns every sample's offset from T_BASE in whole microseconds (as
// printed), CPU and stack kind (a key of
// STACKS), from which tests derive the counts they expect.
export async function writeCapture(path, { cpus = 8, seconds = 20, hz = 99, load = 0.25, seed = 42 } = {}) {
  const out = createWriteStream(path);
  const rand = rng(seed);
  const write = async (s) => {
    if (!out.write(s)) await once(out, 'drain');
  };
  await write(`# ========\n# captured on    : Sun Nov 29 08:00:00 2026\n# hostname : browser-test\n# os release : 6.1.0-test\n# perf version : 6.1\n# arch : x86_64\n# nrcpus online : ${cpus}\n# cmdline : /usr/bin/perf record -F ${hz} -a -g\n# ========\n#\n`);
  const period = Math.round(1e9 / hz);
  const n = seconds * hz;
  let samples = 0;
  const records = [];
  for (let k = 0; k < n; k++) {
    let chunk = '';
    for (let cpu = 0; cpu < cpus; cpu++) {
      const off = k / hz + cpu * 1e-5;
      const t = (T_BASE + off).toFixed(6);
      let comm = 'webapp', pid = 1234, kind;
      if (off >= BURST.start && off < BURST.end) kind = 'hot';
      else if (cpu === PEGGED.cpu && off >= PEGGED.start && off < PEGGED.end) {
        comm = 'gc';
        pid = 300;
        kind = 'gc';
      } else if (rand() < load) {
        const r = rand();
        if (r < 0.4) kind = 'json';
        else if (r < 0.6) kind = 'write';
        else if (r < 0.75) kind = 'hostile';
        else if (r < 0.9) kind = 'jit';
        else {
          comm = HOSTILE_COMM;
          pid = 666;
          kind = 'evil';
        }
      } else {
        comm = 'swapper';
        pid = 0;
        kind = 'idle';
      }
      const stack = STACKS[kind];
      records.push({ us: Math.round((T_BASE + off) * 1e6) - T_BASE * 1e6, cpu, kind });
      const c = String(cpu).padStart(3, '0');
      chunk += `${comm.padEnd(15)} ${pid}/${pid} [${c}] ${t}: ${period} cpu-clock:pppH: \n${stack.join('\n')}\n\n`;
      samples++;
    }
    await write(chunk);
  }
  out.end();
  await once(out, 'finish');
  return { samples, records };
}

// count returns how many records fall in [start, end) seconds and satisfy keep.
export function count(records, start, end, keep = (r) => r.kind !== 'idle') {
  const a = Math.round(start * 1e6);
  const b = Math.round(end * 1e6);
  let n = 0;
  for (const r of records) if (r.us >= a && r.us < b && keep(r)) n++;
  return n;
}

// writeWideCapture writes a capture whose flame graph is wide and deep:
// every sample has a random stack 8–31 frames deep over `names` function
// names, so most paths are distinct and the tree has tens of thousands of
// nodes. One CPU sampled at 1 kHz from T_BASE.
export async function writeWideCapture(path, { samples = 6000, names = 400, seed = 7 } = {}) {
  const out = createWriteStream(path);
  const rand = rng(seed);
  const write = async (s) => {
    if (!out.write(s)) await once(out, 'drain');
  };
  for (let i = 0; i < samples; i++) {
    const depth = 8 + Math.floor(rand() * 24);
    const frames = [];
    for (let d = 0; d < depth; d++) {
      // Shallow frames come from few names so that the tree branches gradually.
      const pool = Math.min(names, 2 + d * d * 2);
      const f = Math.floor(rand() * pool);
      frames.push(U((0x55d000100000 + f * 0x40).toString(16), `fn_${d < 4 ? 'top' : 'deep'}_${f}`));
    }
    frames.reverse();
    const t = (T_BASE + i / 1000).toFixed(6);
    await write(`wide            4242/4242 [000] ${t}: 1000000 cpu-clock:pppH: \n${frames.join('\n')}\n\n`);
  }
  out.end();
  await once(out, 'finish');
}
