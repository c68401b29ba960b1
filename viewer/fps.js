#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// fps.js: measures the viewer's frame rate in headless Chromium (software WebGL, SwiftShader).
// Opens a recording's page at a viewport, plays it for some seconds and prints what the page
// measured per animation frame (#perf: docs/viewer.md). Drives Chromium through the DevTools
// protocol on a pipe (--remote-debugging-pipe), so it needs Node and Chromium, no npm package.
//
// usage: node viewer/fps.js RECORDING.flrec|PAGE.html [--size WxH]... [--seconds S]
//                           [--sync] [--trace] [--hash 'k=v&...'] [--json OUT.json]
//   RECORDING.flrec   the page is assembled from this checkout's viewer/ sources (as the
//                     build embeds them), so a change to viewer.js is measured without a rebuild
//   PAGE.html         measured as it is (a viewer.html written by `frictionlab run`)
//   --size WxH        viewport in CSS pixels, device pixel ratio 1 (default 1280x720; repeatable)
//   --seconds S       playing time measured, after 1 s of warm-up (default 5)
//   --sync            after drawing, wait for the GL to finish (one pixel read back) and time
//                     it: the WebGL split then includes the rasterization, at some cost in fps
//   --page-out FILE   only write the page assembled from RECORDING.flrec to FILE
//   --hash            more of the address (e.g. 'arrows=0', 'timeline=0', 'res=0.5', 'speed=10')
//   --trace           also count the frames the display compositor drew (Display::DrawAndSwap
//                     in a trace of the measured seconds): checks that a page frame is a frame shown
//   --idle            do not play: the page draws nothing after its first frame
//   --chromium-flag F pass F to Chromium (repeatable), e.g. --disable-gpu-compositing: Chromium
//                     composites the page in software, as it does where no GPU is usable; by
//                     default (--use-angle=swiftshader, as the tests run it) it composites
//                     through SwiftShader too
// Prints one line per viewport; --json writes every number. Exit 0, or 1 on an error.
'use strict';
const fs = require('fs'), os = require('os'), path = require('path'), cp = require('child_process');

function usage(msg) { console.error('fps.js: ' + msg + '\nusage: node viewer/fps.js RECORDING.flrec|PAGE.html [--size WxH]... [--seconds S] [--sync] [--idle] [--trace] [--hash H] [--chromium-flag F]... [--json OUT]'); process.exit(1); }
const argv = process.argv.slice(2), sizes = [];
const chromeFlags = [];
// --trace: the display compositor's drawn frames (viz), counted from a trace of the measured time
const TRACE_CATS = 'viz,cc', TRACE_NAMES = ['Display::DrawAndSwap', 'Scheduler::BeginFrame', 'ProxyMain::BeginMainFrame'];
let trace = false;
let input = null, seconds = 5, sync = false, idle = false, extra = '', jsonOut = null, pageOut = null;
for (let k = 0; k < argv.length; k++) {
  const a = argv[k];
  if (a === '--size') { const m = /^(\d+)x(\d+)$/.exec(argv[++k] || ''); if (!m) usage('--size wants WxH, got ' + argv[k]); sizes.push([+m[1], +m[2]]); }
  else if (a === '--seconds') { seconds = Number(argv[++k]); if (!(seconds > 0)) usage('--seconds wants a positive number'); }
  else if (a === '--sync') sync = true;
  else if (a === '--idle') idle = true;
  else if (a === '--trace') trace = true;
  else if (a === '--hash') extra = String(argv[++k] || '').replace(/^#/, '');
  else if (a === '--json') jsonOut = argv[++k];
  else if (a === '--page-out') pageOut = argv[++k];
  else if (a === '--chromium-flag') chromeFlags.push(argv[++k]);
  else if (a.startsWith('--')) usage('unknown option ' + a);
  else input = a;
}
if (!input) usage('no recording or page given');
if (!fs.existsSync(input)) usage(input + ': no such file');
if (!sizes.length) sizes.push([1280, 720]);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'flfps-'));
let page = path.resolve(input);
if (!input.endsWith('.html')) { // the page as scripts/embed_viewer.py and harness/output/viewer.c make it
  const here = __dirname;
  const three = path.join(here, 'node_modules/three/build/three.min.js');
  if (!fs.existsSync(three)) usage(three + ' missing (scripts/setup installs it)');
  const b64 = fs.readFileSync(input).toString('base64').replace(/.{76}/g, '$&\n');
  const parts = { '/*FL:THREE*/': fs.readFileSync(three, 'utf8'), '/*FL:DATA*/': b64,
                  '/*FL:VIEWER*/': fs.readFileSync(path.join(here, 'viewer.js'), 'utf8') };
  let html = fs.readFileSync(path.join(here, 'viewer.html'), 'utf8');
  for (const [m, v] of Object.entries(parts)) { const i = html.indexOf(m); html = html.slice(0, i) + v + html.slice(i + m.length); }
  page = path.join(tmp, 'viewer.html');
  fs.writeFileSync(page, html);
  if (pageOut) { fs.writeFileSync(pageOut, html); fs.rmSync(tmp, { recursive: true, force: true }); process.exit(0); }
}
const browser = ['chromium', 'chromium-browser', 'google-chrome'].map(b => {
  try { return cp.execFileSync('sh', ['-c', 'command -v ' + b]).toString().trim(); } catch (e) { return ''; }
}).find(Boolean);
if (!browser) usage('no chromium on PATH');

// CPU time (ms, user + system, by process type) and resident memory (bytes) of a process and
// its descendants, from /proc
function cpu(root) {
  const tick = 1000 / 100; // USER_HZ
  const out = { ms: {}, rss: 0 }, pending = [root];
  while (pending.length) {
    const pid = pending.pop();
    try {
      const st = fs.readFileSync('/proc/' + pid + '/stat', 'utf8'), f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      const type = (/--type=([a-z-]+)/.exec(fs.readFileSync('/proc/' + pid + '/cmdline', 'utf8').replace(/\0/g, ' ')) || [0, 'browser'])[1];
      out.ms[type] = (out.ms[type] || 0) + (Number(f[11]) + Number(f[12])) * tick;
      out.rss += Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync('/proc/' + pid + '/status', 'utf8'))[1]) * 1024;
      for (const t of fs.readdirSync('/proc/' + pid + '/task'))
        pending.push(...fs.readFileSync('/proc/' + pid + '/task/' + t + '/children', 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
    } catch (e) { /* gone */ }
  }
  return out;
}

// one Chromium per viewport: DevTools messages are JSON, each ended by a NUL byte
function measure(w, h) {
  return new Promise((resolve, reject) => {
    const flags = ['--headless', '--no-sandbox', '--disable-gpu-sandbox', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--use-angle=swiftshader', '--enable-unsafe-swiftshader', '--user-data-dir=' + path.join(tmp, 'profile-' + w),
      '--window-size=' + w + ',' + h, '--remote-debugging-pipe', ...chromeFlags, 'about:blank'];
    const ch = cp.spawn(browser, flags, { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
    let err = '', buf = '', id = 0, done = false, traceDone = () => {};
    const traceEvents = [];
    const waiting = new Map();
    ch.stderr.on('data', d => { err = (err + d).slice(-2000); });
    ch.on('exit', code => { if (!done) reject(new Error('chromium exited (' + code + '): ' + err.slice(-400))); });
    ch.stdio[4].on('data', d => {
      buf += d;
      let z;
      while ((z = buf.indexOf('\0')) >= 0) {
        const msg = JSON.parse(buf.slice(0, z));
        buf = buf.slice(z + 1);
        if (msg.method === 'Tracing.dataCollected') traceEvents.push(...msg.params.value);
        else if (msg.method === 'Tracing.tracingComplete') traceDone();
        if (msg.id !== undefined && waiting.has(msg.id)) {
          const [ok, no] = waiting.get(msg.id);
          waiting.delete(msg.id);
          if (msg.error) no(new Error(JSON.stringify(msg.error))); else ok(msg.result);
        }
      }
    });
    const send = (method, params, sessionId) => new Promise((ok, no) => {
      const m = { id: ++id, method, params: params || {} };
      if (sessionId) m.sessionId = sessionId;
      waiting.set(m.id, [ok, no]);
      ch.stdio[3].write(JSON.stringify(m) + '\0');
    });
    const sleep = ms => new Promise(r => setTimeout(r, ms));
    (async () => {
      let targets;
      for (let k = 0; k < 50; k++) {
        targets = (await send('Target.getTargets')).targetInfos.filter(t => t.type === 'page');
        if (targets.length) break;
        await sleep(100);
      }
      const gpu = (await send('SystemInfo.getInfo')).gpu.featureStatus; // compositing and WebGL modes
      const { sessionId: sid } = await send('Target.attachToTarget', { targetId: targets[0].targetId, flatten: true });
      await send('Emulation.setDeviceMetricsOverride', { width: w, height: h, deviceScaleFactor: 1, mobile: false }, sid);
      const ev = async expr => (await send('Runtime.evaluate', { expression: expr, returnByValue: true }, sid)).result.value;
      const hash = (idle ? '' : 'play&') + 'perf=' + (sync ? 'sync' : '1') + (extra ? '&' + extra : '');
      const t0 = Date.now();
      await send('Page.navigate', { url: 'file://' + page + '#' + hash }, sid);
      let st = null;
      while (Date.now() - t0 < 300000) {
        await sleep(200);
        st = await ev('JSON.stringify({perf: !!window.flPerf, ready: !!(window.flPerf && window.flPerf.ready), ' +
                      'loaded: document.readyState === "complete", errors: window.flErrors || []})').catch(() => null);
        const o = st ? JSON.parse(st) : {};
        if (o.ready) break;
        if (o.errors && o.errors.length) throw new Error('the page reports errors: ' + JSON.stringify(o.errors));
        // a viewer.html from before #perf: loaded, but nothing to measure with
        if (o.loaded && !o.perf && Date.now() - t0 > 20000) throw new Error(page + ': the page has no #perf (written by an older viewer); pass its recording.flrec instead');
      }
      if (!st || !JSON.parse(st).ready) throw new Error('the page did not get ready in 300 s: ' + st);
      await sleep(1000); // warm-up: shaders compiled, the first frames drawn
      const c0 = cpu(ch.pid);
      if (trace) await send('Tracing.start', { categories: TRACE_CATS, transferMode: 'ReportEvents' });
      await ev('window.flPerf.reset()');
      await sleep(1000 * seconds);
      const res = JSON.parse(await ev('JSON.stringify(window.flPerf.summary())'));
      if (trace) { // frames the display compositor drew in the same time (tracing's own cost included)
        const complete = new Promise(r => { traceDone = r; });
        await send('Tracing.end');
        await complete;
        const n = {};
        for (const e of traceEvents) if (TRACE_NAMES.includes(e.name) && (e.ph === 'X' || e.ph === 'B')) n[e.name] = (n[e.name] || 0) + 1;
        res.trace_counts = n;
        res.trace_fps = (n[TRACE_NAMES[0]] || 0) / res.seconds;
      }
      const c1 = cpu(ch.pid);
      // CPU time per drawn frame of each kind of Chromium process (browser, gpu-process with
      // SwiftShader, renderer with the page's JS): less disturbed by other jobs than wall time
      res.cpu_ms_per_frame = {};
      for (const k of Object.keys(c1.ms)) res.cpu_ms_per_frame[k] = (c1.ms[k] - (c0.ms[k] || 0)) / Math.max(res.frames, 1);
      res.chromium_rss_mb = c1.rss / 1048576;
      res.viewport = [w, h];
      res.compositing = gpu.gpu_compositing === 'enabled' ? 'gpu' : 'software';
      res.webgl_mode = gpu.webgl;
      done = true;
      const gone = new Promise(r => ch.on('exit', r));
      ch.kill('SIGTERM');
      await gone;
      resolve(res);
    })().catch(e => { done = true; ch.kill('SIGKILL'); reject(e); });
  });
}

(async () => {
  const out = [];
  for (const [w, h] of sizes) {
    const r = await measure(w, h);
    out.push(r);
    const q = (x, d) => (x === null || x === undefined ? 'n/a' : x.toFixed(d === undefined ? 1 : d));
    const none = { median: null, min: null, max: null };
    for (const k of ['interval', 'update', 'timeline', 'render']) r[k] = r[k] || none; // no whole frame
    console.log(w + 'x' + h + ' (' + r.compositing + ' compositing): ' + q(r.fps) + ' fps (' + r.frames + ' frames in ' + q(r.seconds, 2) + ' s, ' + (r.drawn === undefined ? '' : r.drawn + ' drawn, ') +
      r.steps_shown + ' steps shown); frame interval median ' + q(r.interval.median) + ' ms, min ' + q(r.interval.min) +
      ', max ' + q(r.interval.max) + '; per frame median/min ms: update ' + q(r.update.median, 2) + '/' + q(r.update.min, 2) +
      ', timeline ' + q(r.timeline.median, 2) + '/' + q(r.timeline.min, 2) + ', webgl ' + q(r.render.median, 2) + '/' + q(r.render.min, 2) +
      (sync ? ' (finished)' : ' (submitted)') + (r.trace_counts ? '; compositor drew ' + q(r.trace_fps) + ' frames/s' : '') + '; load ' + q(r.load_ms, 0) + ' ms; JS heap ' + q(r.heap_mb) + ' MB; chromium RSS ' +
      q(r.chromium_rss_mb, 0) + ' MB; CPU ms per frame ' + Object.entries(r.cpu_ms_per_frame).map(([k, v]) => k + ' ' + q(v)).join(', ') + '; ' + r.renderer + (r.errors.length ? '; ERRORS ' + JSON.stringify(r.errors) : ''));
  }
  if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify({ input, sync, hash: extra, seconds, load: os.loadavg(), runs: out }, null, 1) + '\n');
  fs.rmSync(tmp, { recursive: true, force: true });
  process.exit(out.some(r => r.errors.length) ? 1 : 0);
})().catch(e => { console.error('fps.js: ' + e.message); fs.rmSync(tmp, { recursive: true, force: true }); process.exit(1); });
