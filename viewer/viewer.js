// viewer.js: FrictionLab's browser viewer. Reads the recording embedded in the page
// (#fl-data, base64 of recording.flrec: docs/recording.md) and plays every solver's run of the
// same scene side by side, in lock-step. Needs only three.js (global THREE, inlined before).
(function () {
  'use strict';
  const statusEl = document.getElementById('fl-status');
  const report = { ok: false, errors: window.flErrors, scene: '', solvers: [], bodies: 0,
                   deformable: 0, frames: [], steps: 0, cut: false, webgl: false, shown_step: -1 };
  function publish() { statusEl.textContent = JSON.stringify(report); }
  function fail(msg) {
    window.flErrors.push(msg);
    const e = document.getElementById('fl-error');
    e.textContent = msg;
    e.style.display = 'block';
    publish();
  }

  //---- the recording ----
  const FRAME_TAG = 0x314d5246, FIXED = 56, CONTACT = 52;

  function decodeBase64(text) {
    const bin = atob(text.replace(/\s+/g, ''));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  // floats of bytes [a, a + 4n) as an aligned copy
  function f32(bytes, a, n) { return new Float32Array(bytes.buffer.slice(bytes.byteOffset + a, bytes.byteOffset + a + 4 * n)); }

  function parse(bytes) {
    const magic = String.fromCharCode.apply(null, bytes.subarray(0, 8));
    if (magic !== 'FLREC01\n') throw new Error('not a FrictionLab recording (magic ' + JSON.stringify(magic) + ')');
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const hl = dv.getUint32(8, true);
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + hl)));
    const ns = header.solvers.length, nb = header.bodies.length;
    const runs = header.solvers.map(() => []);
    let off = 12 + hl, cut = false;
    while (off + 8 <= bytes.length) {
      const tag = dv.getUint32(off, true), len = dv.getUint32(off + 4, true);
      if (tag !== FRAME_TAG || off + 8 + len > bytes.length) { cut = true; break; }
      const p = off + 8;
      const fr = {
        solver: dv.getInt32(p, true), step: dv.getInt32(p + 4, true), t: dv.getFloat64(p + 8, true),
        iters: dv.getInt32(p + 16, true), reason: dv.getInt32(p + 20, true),
        residual: dv.getFloat64(p + 24, true), merit: dv.getFloat64(p + 32, true),
        nbody: dv.getInt32(p + 40, true), nvert: dv.getInt32(p + 44, true), nc: dv.getInt32(p + 48, true)
      };
      if (fr.solver < 0 || fr.solver >= ns || fr.nbody !== nb) { cut = true; break; }
      let a = p + FIXED;
      fr.pose = f32(bytes, a, 7 * nb); a += 28 * nb;
      fr.vert = f32(bytes, a, 3 * fr.nvert); a += 12 * fr.nvert;
      const cb = bytes.buffer.slice(bytes.byteOffset + a, bytes.byteOffset + a + CONTACT * fr.nc);
      fr.cf = new Float32Array(cb);
      fr.ci = new Int32Array(cb);
      runs[fr.solver].push(fr);
      off += 8 + len;
    }
    if (off < bytes.length) cut = true;
    return { header, runs, cut };
  }

  //---- colours ----
  function ramp(x) { // 0 blue-grey, 0.5 yellow, 1 red; beyond 1 stays red
    x = Math.max(0, Math.min(1, x));
    const c = new THREE.Color();
    if (x < 0.5) c.setRGB(0.42 + 1.1 * x, 0.55 + 0.7 * x, 0.75 - 1.2 * x);
    else c.setRGB(0.97, 0.9 - 1.5 * (x - 0.5), 0.15);
    return c;
  }
  const STICK = new THREE.Color(0x3ddc84), SLIP = new THREE.Color(0xff5a4e);

  //---- build ----
  let rec;
  try {
    const text = document.getElementById('fl-data').textContent;
    rec = parse(decodeBase64(text));
  } catch (e) {
    fail('cannot read the recording in this page: ' + e.message);
    return;
  }
  const H = rec.header, L = H.length > 0 ? H.length : 1;
  report.scene = H.scene;
  report.solvers = H.solvers.slice();
  report.bodies = H.bodies.length;
  report.deformable = H.deformable.length;
  report.frames = rec.runs.map(r => r.length);
  report.cut = rec.cut;
  document.title = 'FrictionLab viewer: ' + H.scene;
  document.getElementById('title').textContent = H.scene + ' (' + H.problem + ')' + (rec.cut ? ' [recording cut short]' : '');

  // the common time axis: every recorded step of any solver
  const stepSet = new Set();
  rec.runs.forEach(r => r.forEach(f => stepSet.add(f.step)));
  const steps = Array.from(stepSet).sort((a, b) => a - b);
  report.steps = steps.length;
  if (steps.length === 0) { fail('the recording holds no frame: the run stopped before its first step'); return; }

  // the arrows' scale: the 90th percentile of the run's impulses is 0.15 of the scene (a
  // failing step's impulses can be 1e4 times the rest); arrows are capped at 0.5 of the scene
  const mags = [];
  rec.runs.forEach(r => r.forEach(f => {
    for (let c = 0; c < f.nc; c++) {
      const q = 13 * c + 6, m = Math.hypot(f.cf[q], f.cf[q + 1], f.cf[q + 2]);
      if (m > 0) mags.push(m);
    }
  }));
  mags.sort((a, b) => a - b);
  const refImp = mags.length ? mags[Math.floor(0.9 * (mags.length - 1))] : 0;
  const impScale = refImp > 0 ? 0.15 * L / refImp : 0;

  const geoms = H.meshes.map(m => {
    let g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.Float32BufferAttribute(m.vert, 3));
    g.setIndex(m.tri);
    if (!m.smooth) g = g.toNonIndexed(); // flat faces: one normal per triangle
    g.computeVertexNormals();
    return g;
  });

  // one shared camera, orbiting the scene's middle; z is up
  const lo = H.bounds[0], hi = H.bounds[1];
  const target = new THREE.Vector3((lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2);
  const orbit = { az: -0.95, el: 0.35, dist: 2.3 * L };
  const camera = new THREE.PerspectiveCamera(35, 1, L * 1e-3, L * 100);
  camera.up.set(0, 0, 1);
  function placeCamera() {
    const ce = Math.cos(orbit.el);
    camera.position.set(target.x + orbit.dist * ce * Math.cos(orbit.az),
                        target.y + orbit.dist * ce * Math.sin(orbit.az),
                        target.z + orbit.dist * Math.sin(orbit.el));
    camera.lookAt(target);
  }
  placeCamera();

  const panesEl = document.getElementById('panes');
  const ns = H.solvers.length;
  const cols = ns <= 3 ? ns : Math.ceil(Math.sqrt(ns));
  panesEl.style.gridTemplateColumns = 'repeat(' + cols + ', 1fr)';
  let maxNc = 1;
  rec.runs.forEach(r => r.forEach(f => { maxNc = Math.max(maxNc, f.nc); }));

  const panes = [];
  for (let s = 0; s < ns; s++) {
    const el = document.createElement('div');
    el.className = 'pane';
    const canvas = document.createElement('canvas');
    const readout = document.createElement('div');
    readout.className = 'readout';
    el.appendChild(canvas);
    el.appendChild(readout);
    panesEl.appendChild(el);
    let renderer;
    try {
      renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
    } catch (e) {
      fail('WebGL is not available in this browser (' + e.message + '); the recording itself is fine');
      return;
    }
    report.webgl = true;
    renderer.setPixelRatio(window.devicePixelRatio || 1);
    const scene = new THREE.Scene();
    scene.background = new THREE.Color(0x14171c);
    scene.add(new THREE.HemisphereLight(0xdde6ff, 0x3a3226, 1.1));
    const sun = new THREE.DirectionalLight(0xffffff, 1.6);
    sun.position.set(0.4, -0.6, 1.0);
    scene.add(sun);
    const bodies = H.bodies.map(b => {
      const fixed = b.kind !== 'dynamic';
      const mat = new THREE.MeshLambertMaterial({ color: fixed ? 0x59606b : 0x6d8bb5, side: THREE.DoubleSide });
      const mesh = new THREE.Mesh(geoms[b.mesh], mat);
      mesh.scale.set(b.scale[0], b.scale[1], b.scale[2]);
      scene.add(mesh);
      return { mesh, fixed, size: b.size };
    });
    const defs = H.deformable.map(d => {
      const g = new THREE.BufferGeometry();
      g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3 * d.nvert), 3));
      g.setAttribute('color', new THREE.BufferAttribute(new Float32Array(3 * d.nvert), 3));
      g.setIndex(d.tri);
      const mesh = new THREE.Mesh(g, new THREE.MeshLambertMaterial({ vertexColors: true, side: THREE.DoubleSide, flatShading: true }));
      scene.add(mesh);
      return { mesh, d };
    });
    // impulses: a shaft (line) and a head (cone) per contact
    const shaftG = new THREE.BufferGeometry();
    shaftG.setAttribute('position', new THREE.BufferAttribute(new Float32Array(6 * maxNc), 3));
    shaftG.setAttribute('color', new THREE.BufferAttribute(new Float32Array(6 * maxNc), 3));
    // drawn over the bodies: an impulse acts at a point inside the contact, where a body hides it
    const shafts = new THREE.LineSegments(shaftG, new THREE.LineBasicMaterial({ vertexColors: true, depthTest: false, transparent: true }));
    shafts.renderOrder = 2;
    shafts.frustumCulled = false;
    scene.add(shafts);
    const heads = new THREE.InstancedMesh(new THREE.ConeGeometry(0.35, 1, 10),
      new THREE.MeshBasicMaterial({ depthTest: false, transparent: true }), maxNc);
    heads.renderOrder = 2;
    heads.frustumCulled = false;
    scene.add(heads);
    panes.push({ el, canvas, readout, renderer, scene, bodies, defs, shafts, heads, run: rec.runs[s], name: H.solvers[s] });
  }

  //---- showing one step ----
  const ui = {
    play: document.getElementById('play'), slider: document.getElementById('slider'),
    time: document.getElementById('time'), speed: document.getElementById('speed'),
    colour: document.getElementById('colour'), arrows: document.getElementById('arrows')
  };
  ui.slider.max = String(steps.length - 1);
  document.getElementById('legend').innerHTML =
    'arrows: contact impulse on the second body (' + (0.15 * L).toPrecision(2) + ' m = ' + refImp.toPrecision(3) + ' N s, the run\'s 90th percentile)' +
    '<span class="sw" style="background:#3ddc84"></span>sticking<span class="sw" style="background:#ff5a4e"></span>sliding' +
    ' &nbsp;| bodies: <span id="cmode"></span> <span class="sw" style="background:#6b8cbf"></span>0' +
    '<span class="sw" style="background:#f7e626"></span><span class="sw" style="background:#f72626"></span><span id="cmax"></span>';

  function frameAt(run, step) { // last frame at or before step
    let a = 0, b = run.length - 1, hit = -1;
    while (a <= b) {
      const m = (a + b) >> 1;
      if (run[m].step <= step) { hit = m; a = m + 1; } else b = m - 1;
    }
    return hit >= 0 ? run[hit] : null;
  }

  const up = new THREE.Vector3(0, 1, 0), tmpM = new THREE.Matrix4(), tmpQ = new THREE.Quaternion();
  const tmpV = new THREE.Vector3(), tmpS = new THREE.Vector3();
  function fmt(x) { return Number.isFinite(x) ? x.toExponential(2) : Number.isNaN(x) ? 'n/a' : String(x); }

  function showPane(p, step) {
    const f = frameAt(p.run, step);
    if (!f) {
      p.readout.textContent = p.name + '\n(no frame at this step: the run of this solver was cut short)';
      return;
    }
    const f0 = p.run[0], mode = ui.colour.value;
    const penLimit = H.pen_limit || 0.01 * L;
    // deepest penetration per body (and per deformable body) of this step's contacts
    const pen = new Float32Array(H.bodies.length), penDef = new Float32Array(H.deformable.length);
    for (let c = 0; c < f.nc; c++) {
      const d = Math.max(0, -f.cf[13 * c + 9]);
      for (const side of [f.ci[13 * c + 10], f.ci[13 * c + 11]]) {
        if (side >= 0) pen[side] = Math.max(pen[side], d);
        else if (side <= -2) penDef[-2 - side] = Math.max(penDef[-2 - side], d);
      }
    }
    p.bodies.forEach((b, i) => {
      const q = f.pose.subarray(7 * i, 7 * i + 7);
      b.mesh.position.set(q[0], q[1], q[2]);
      b.mesh.quaternion.set(q[4], q[5], q[6], q[3]);
      if (b.fixed) return;
      let v;
      if (mode === 'penetration') v = pen[i] / penLimit;
      else v = Math.hypot(q[0] - f0.pose[7 * i], q[1] - f0.pose[7 * i + 1], q[2] - f0.pose[7 * i + 2]) / (0.25 * b.size);
      b.mesh.material.color.copy(ramp(0.5 * v));
    });
    p.defs.forEach((e, k) => {
      const pos = e.mesh.geometry.attributes.position, col = e.mesh.geometry.attributes.color;
      const o = 3 * e.d.first;
      for (let j = 0; j < 3 * e.d.nvert; j++) pos.array[j] = f.vert[o + j];
      for (let v = 0; v < e.d.nvert; v++) {
        const a = o + 3 * v;
        const x = mode === 'penetration' ? penDef[k] / penLimit
          : Math.hypot(f.vert[a] - f0.vert[a], f.vert[a + 1] - f0.vert[a + 1], f.vert[a + 2] - f0.vert[a + 2]) / (0.05 * L);
        const c = ramp(0.5 * x);
        col.array[3 * v] = c.r; col.array[3 * v + 1] = c.g; col.array[3 * v + 2] = c.b;
      }
      pos.needsUpdate = col.needsUpdate = true;
      e.mesh.geometry.computeVertexNormals();
      e.mesh.geometry.computeBoundingSphere();
    });
    // arrows
    const sp = p.shafts.geometry.attributes.position, sc = p.shafts.geometry.attributes.color;
    let n = 0;
    if (ui.arrows.checked && impScale > 0) {
      for (let c = 0; c < f.nc; c++) {
        const b = 13 * c, ix = f.cf[b + 6], iy = f.cf[b + 7], iz = f.cf[b + 8];
        const mag = Math.hypot(ix, iy, iz), len = Math.min(mag * impScale, 0.5 * L);
        if (!(len > 1e-4 * L)) continue;
        const col = (f.ci[b + 12] & 1) ? SLIP : STICK;
        const x0 = f.cf[b], y0 = f.cf[b + 1], z0 = f.cf[b + 2];
        const ux = ix / mag, uy = iy / mag, uz = iz / mag;
        const hl = Math.min(0.35 * len, 0.04 * L);
        sp.array.set([x0, y0, z0, x0 + ux * (len - hl), y0 + uy * (len - hl), z0 + uz * (len - hl)], 6 * n);
        sc.array.set([col.r, col.g, col.b, col.r, col.g, col.b], 6 * n);
        tmpV.set(ux, uy, uz);
        tmpQ.setFromUnitVectors(up, tmpV);
        tmpS.set(hl * 0.8, hl, hl * 0.8);
        tmpM.compose(new THREE.Vector3(x0 + ux * (len - hl / 2), y0 + uy * (len - hl / 2), z0 + uz * (len - hl / 2)), tmpQ, tmpS);
        p.heads.setMatrixAt(n, tmpM);
        p.heads.setColorAt(n, col);
        n++;
      }
    }
    p.shafts.geometry.setDrawRange(0, 2 * n);
    sp.needsUpdate = sc.needsUpdate = true;
    p.heads.count = n;
    p.heads.instanceMatrix.needsUpdate = true;
    if (p.heads.instanceColor) p.heads.instanceColor.needsUpdate = true;
    const reason = H.reasons[String(f.reason)] || String(f.reason);
    const held = f.step === step ? '' : ' (last frame: step ' + f.step + ')';
    p.readout.innerHTML = '';
    const head = document.createElement('div');
    head.textContent = p.name + '   step ' + f.step + held + '   t ' + f.t.toFixed(4) + ' s';
    const line = document.createElement('div');
    line.textContent = f.step === 0 ? 'initial state'
      : 'iters ' + f.iters + '   ' + reason + '   residual ' + fmt(f.residual) + '   merit ' + fmt(f.merit);
    if (f.reason < 0) line.className = 'bad';
    const line2 = document.createElement('div');
    line2.textContent = 'contacts ' + f.nc + '   deepest ' + fmt(Math.max(0, ...pen, ...penDef)) + ' m';
    p.readout.appendChild(head);
    p.readout.appendChild(line);
    p.readout.appendChild(line2);
  }

  function resize() {
    panes.forEach(p => {
      const w = p.el.clientWidth, h = p.el.clientHeight;
      p.renderer.setSize(w, h, false);
      camera.aspect = w / Math.max(h, 1);
    });
    camera.updateProjectionMatrix();
  }

  let index = 0, playing = false, simTime = 0, last = null, dirty = true;
  function show(i) {
    index = Math.max(0, Math.min(steps.length - 1, i));
    ui.slider.value = String(index);
    ui.time.textContent = 'step ' + steps[index] + '   t = ' + (steps[index] * H.dt).toFixed(4) + ' s';
    document.getElementById('cmode').textContent = ui.colour.value === 'penetration'
      ? 'deepest penetration' : 'displacement from the start';
    document.getElementById('cmax').textContent = ui.colour.value === 'penetration'
      ? ' >= ' + (H.pen_limit || 0.01 * L).toPrecision(2) + ' m (1 % of the smallest body)' : ' >= half a body size';
    panes.forEach(p => showPane(p, steps[index]));
    report.shown_step = steps[index];
    dirty = true;
  }
  function render() { panes.forEach(p => p.renderer.render(p.scene, camera)); }

  function tick(now) {
    if (playing) {
      if (last !== null) simTime += (now - last) / 1000 * Number(ui.speed.value);
      last = now;
      let i = index;
      while (i + 1 < steps.length && steps[i + 1] * H.dt <= simTime) i++;
      if (i !== index) show(i);
      if (index === steps.length - 1) { playing = false; ui.play.textContent = 'play'; }
    }
    if (dirty) { render(); dirty = false; }
    requestAnimationFrame(tick);
  }

  ui.play.addEventListener('click', () => {
    playing = !playing;
    if (playing && index === steps.length - 1) show(0);
    simTime = steps[index] * H.dt;
    last = null;
    ui.play.textContent = playing ? 'pause' : 'play';
  });
  ui.slider.addEventListener('input', () => { show(Number(ui.slider.value)); simTime = steps[index] * H.dt; });
  ui.colour.addEventListener('change', () => show(index));
  ui.arrows.addEventListener('change', () => show(index));
  window.addEventListener('keydown', e => { if (e.code === 'Space') { ui.play.click(); e.preventDefault(); } });
  window.addEventListener('resize', () => { resize(); dirty = true; });
  // orbit: drag to turn, wheel to zoom, on any pane (the camera is shared)
  let drag = null;
  panes.forEach(p => {
    p.canvas.addEventListener('pointerdown', e => { drag = { x: e.clientX, y: e.clientY }; p.canvas.setPointerCapture(e.pointerId); });
    p.canvas.addEventListener('pointermove', e => {
      if (!drag) return;
      orbit.az -= 0.008 * (e.clientX - drag.x);
      orbit.el = Math.max(-1.5, Math.min(1.5, orbit.el + 0.008 * (e.clientY - drag.y)));
      drag = { x: e.clientX, y: e.clientY };
      placeCamera();
      dirty = true;
    });
    p.canvas.addEventListener('pointerup', () => { drag = null; });
    p.canvas.addEventListener('wheel', e => {
      orbit.dist *= Math.exp(0.001 * e.deltaY);
      placeCamera();
      dirty = true;
      e.preventDefault();
    }, { passive: false });
  });

  // #step=N shows the recorded step nearest at or below N; #colour=displacement; #play;
  // #az=A&el=E (radians) and #zoom=Z (distance / the default) place the camera
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get('colour')) ui.colour.value = hash.get('colour');
  for (const [key, field] of [['az', 'az'], ['el', 'el']])
    if (Number.isFinite(Number(hash.get(key))) && hash.get(key) !== null) orbit[field] = Number(hash.get(key));
  if (Number(hash.get('zoom')) > 0) orbit.dist *= Number(hash.get('zoom'));
  placeCamera();
  let start = 0;
  if (hash.get('step') !== null) {
    const want = Number(hash.get('step'));
    while (start + 1 < steps.length && steps[start + 1] <= want) start++;
  }
  resize();
  show(start);
  render();
  dirty = false;
  report.ok = window.flErrors.length === 0;
  publish();
  if (hash.has('play')) ui.play.click();
  requestAnimationFrame(tick);
})();
