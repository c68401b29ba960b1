// SPDX-License-Identifier: Apache-2.0
// viewer.js: FrictionLab's browser viewer. Reads the recording embedded in the page
// (#fl-data, base64 of recording.flrec: docs/recording.md) and plays every solver's run of the
// same scene side by side, in lock-step, with a timeline per solver, picking and a camera
// framed on the whole run. Needs only three.js (global THREE, inlined before).
(function () {
  'use strict';
  const statusEl = document.getElementById('fl-status');
  const report = { ok: false, errors: window.flErrors, scene: '', solvers: [], bodies: 0,
                   deformable: 0, frames: [], steps: 0, cut: false, webgl: false, shown_step: -1,
                   version: 0, timeline: [], colour: '', colour_range: null, edges: 0,
                   picked: null, view_axis: '', camera: null, panes_shown: [] };
  function publish() { statusEl.textContent = JSON.stringify(report); }
  function fail(msg) {
    window.flErrors.push(msg);
    const e = document.getElementById('fl-error');
    e.textContent = msg;
    e.style.display = 'block';
    publish();
  }

  //---- the recording ----
  const FRAME_TAG = 0x314d5246, CONTACT = 52;

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
    const ver = header.version || 1;
    // version 1: 56 fixed bytes, bodies as 7 floats, vertices as 3; version 2 adds the energy,
    // the velocities (13 floats a body) and von Mises stress and strain per vertex
    const fixed = ver >= 2 ? 64 : 56, bs = ver >= 2 ? 13 : 7;
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
        nbody: dv.getInt32(p + 40, true), nvert: dv.getInt32(p + 44, true), nc: dv.getInt32(p + 48, true),
        energy: ver >= 2 ? dv.getFloat64(p + 56, true) : NaN, vm: null, eps: null
      };
      if (fr.solver < 0 || fr.solver >= ns || fr.nbody !== nb) { cut = true; break; }
      let a = p + fixed;
      fr.pose = f32(bytes, a, bs * nb); a += 4 * bs * nb;
      fr.vert = f32(bytes, a, 3 * fr.nvert); a += 12 * fr.nvert;
      if (ver >= 2) {
        fr.vm = f32(bytes, a, fr.nvert); a += 4 * fr.nvert;
        fr.eps = f32(bytes, a, fr.nvert); a += 4 * fr.nvert;
      }
      const cb = bytes.buffer.slice(bytes.byteOffset + a, bytes.byteOffset + a + CONTACT * fr.nc);
      fr.cf = new Float32Array(cb);
      fr.ci = new Int32Array(cb);
      let pen = 0; // deepest penetration of this step's contacts (m)
      for (let c = 0; c < fr.nc; c++) pen = Math.max(pen, -fr.cf[13 * c + 9]);
      fr.pen = pen;
      runs[fr.solver].push(fr);
      off += 8 + len;
    }
    if (off < bytes.length) cut = true;
    // the penetration after a step: the next frame's contacts are found at its start (the last
    // frame, which has no next, keeps its own)
    runs.forEach(r => r.forEach((f, i) => { f.penAfter = i + 1 < r.length ? r[i + 1].pen : f.pen; }));
    return { header, runs, cut, bs };
  }

  //---- colours and numbers ----
  function ramp(x, into) { // 0 blue-grey, 0.5 yellow, 1 red; beyond 1 stays red (into: reused)
    x = Math.max(0, Math.min(1, x));
    const c = into || new THREE.Color();
    if (x < 0.5) c.setRGB(0.42 + 1.1 * x, 0.55 + 0.7 * x, 0.75 - 1.2 * x);
    else c.setRGB(0.97, 0.9 - 1.5 * (x - 0.5), 0.15);
    return c;
  }
  const STICK = new THREE.Color(0x3ddc84), SLIP = new THREE.Color(0xff5a4e);
  function fmt(x) { return Number.isFinite(x) ? x.toExponential(2) : Number.isNaN(x) ? 'n/a' : String(x); }
  function nice(x) { // 1, 2 or 5 times a power of ten, at most x
    const e = Math.pow(10, Math.floor(Math.log10(x))), m = x / e;
    return (m >= 5 ? 5 : m >= 2 ? 2 : 1) * e;
  }
  function vec(a, o, n) { return Array.from(a.subarray(o, o + n)); }
  function vstr(v) { return '(' + v.map(x => x.toPrecision(5)).join(', ') + ')'; }

  //---- build ----
  let rec;
  try {
    const text = document.getElementById('fl-data').textContent;
    rec = parse(decodeBase64(text));
  } catch (e) {
    fail('cannot read the recording in this page: ' + e.message);
    return;
  }
  const H = rec.header, L = H.length > 0 ? H.length : 1, BS = rec.bs;
  const penLimit = H.pen_limit || 0.01 * L;
  report.scene = H.scene;
  report.solvers = H.solvers.slice();
  report.bodies = H.bodies.length;
  report.deformable = H.deformable.length;
  report.frames = rec.runs.map(r => r.length);
  report.cut = rec.cut;
  report.version = H.version || 1;
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

  // the colour ranges of deformable bodies: the run's largest displacement, stress, strain
  const range = { displacement: 0, stress: 0, strain: 0 };
  rec.runs.forEach(r => {
    const f0 = r[0];
    r.forEach(f => {
      for (let j = 0; j < f.nvert; j++) {
        const a = 3 * j;
        range.displacement = Math.max(range.displacement, Math.hypot(f.vert[a] - f0.vert[a], f.vert[a + 1] - f0.vert[a + 1], f.vert[a + 2] - f0.vert[a + 2]));
        if (f.vm) { range.stress = Math.max(range.stress, f.vm[j]); range.strain = Math.max(range.strain, f.eps[j]); }
      }
    });
  });

  // Rigid bodies are lit per vertex (hemisphere and sun, the Lambert model of three.js's
  // MeshLambertMaterial, which lights per pixel): their faces are flat or smooth spheres, so it
  // looks the same, and software WebGL (SwiftShader) pays per pixel for a fragment shader.
  // Both sides are lit (the fragment picks by gl_FrontFacing); works instanced too. With SRGB_VERT
  // the sRGB output encoding is done per vertex too: the same pixels on flat faces (one colour per
  // triangle), while per pixel its pow() was a third of SwiftShader's frame (docs/viewer.md).
  const SOFTWARE_GL = softwareGL(); // the WebGL is SwiftShader or llvmpipe: cheaper paths where they look the same
  report.software_gl = SOFTWARE_GL;
  const HEMI = { sky: 0xdde6ff, ground: 0x3a3226, intensity: 1.1 }, SUN = { color: 0xffffff, intensity: 1.6, dir: [0.4, -0.6, 1.0] };
  const SRGB_GLSL = `
    vec3 srgb(vec3 c) { // three.js's sRGBTransferOETF
      return mix(pow(c, vec3(0.41666)) * 1.055 - vec3(0.055), c * 12.92, vec3(lessThanEqual(c, vec3(0.0031308))));
    }`;
  const LIT_VERT = SRGB_GLSL + `
    uniform vec3 diffuse, sky, ground, sun, sunDir;
    varying vec3 vFront, vBack;
    void main() {
      mat4 m = modelMatrix;
    #ifdef USE_INSTANCING
      m = m * instanceMatrix;
    #endif
      mat3 a = mat3(m); // rotation times scale: its inverse transpose is a / (column lengths squared)
      vec3 n = normalize(a * (normal / vec3(dot(a[0], a[0]), dot(a[1], a[1]), dot(a[2], a[2]))));
      vec3 c = diffuse;
    #ifdef USE_INSTANCING_COLOR
      c *= instanceColor;
    #endif
      float h = 0.5 * n.y + 0.5; // three's hemisphere light points along +y
      vFront = c * (mix(ground, sky, h) + sun * max(dot(n, sunDir), 0.0)) * 0.3183098862;
      vBack = c * (mix(ground, sky, 1.0 - h) + sun * max(-dot(n, sunDir), 0.0)) * 0.3183098862;
      gl_Position = projectionMatrix * viewMatrix * m * vec4(position, 1.0);
    #ifdef SRGB_VERT
      vFront = srgb(vFront);
      vBack = srgb(vBack);
    #endif
    }`;
  const LIT_FRAG = `
    varying vec3 vFront, vBack;
    void main() {
      gl_FragColor = vec4(gl_FrontFacing ? vFront : vBack, 1.0);
    #ifndef SRGB_VERT
      #include <colorspace_fragment>
    #endif
    }`;
  const litSun = new THREE.Vector3(...SUN.dir).normalize();
  // smooth: the geometry has smooth normals (a sphere); its colour is encoded per pixel, as
  // three.js does, unless the WebGL is software (interpolating the encoded colour: a shade apart)
  function litMaterial(hex, side, smooth) {
    const u = { diffuse: { value: new THREE.Color(hex) },
                sky: { value: new THREE.Color(HEMI.sky).multiplyScalar(HEMI.intensity) },
                ground: { value: new THREE.Color(HEMI.ground).multiplyScalar(HEMI.intensity) },
                sun: { value: new THREE.Color(SUN.color).multiplyScalar(SUN.intensity) },
                sunDir: { value: litSun } };
    const defines = smooth && !SOFTWARE_GL ? {} : { SRGB_VERT: 1 };
    const mat = new THREE.ShaderMaterial({ defines, uniforms: u, vertexShader: LIT_VERT, fragmentShader: LIT_FRAG, side: side === undefined ? THREE.DoubleSide : side });
    mat.color = u.diffuse.value; // as a Lambert material's
    return mat;
  }

  // Lines of one colour each (grid, arrows, edges): LineBasicMaterial's pixels with the sRGB
  // encoding per vertex (42k arrows of a 1e4-grain frame paid a pow() per pixel). Options:
  // color (hex) or vertexColors, depthTest, transparent.
  const LINE_VERT = SRGB_GLSL + `
    uniform vec3 diffuse;
    varying vec3 vColour;
    void main() {
      vec3 c = diffuse;
    #ifdef USE_COLOR
      c *= color;
    #endif
      vColour = srgb(c);
      vec4 mv = modelViewMatrix * vec4(position, 1.0); // as three.js's project_vertex, to the last bit
      gl_Position = projectionMatrix * mv;
    }`;
  const LINE_FRAG = `
    varying vec3 vColour;
    void main() { gl_FragColor = vec4(vColour, 1.0); }`;
  function lineMaterial(o) {
    const u = { diffuse: { value: new THREE.Color(o.color === undefined ? 0xffffff : o.color) } };
    const mat = new THREE.ShaderMaterial({ uniforms: u, vertexShader: LINE_VERT, fragmentShader: LINE_FRAG, vertexColors: !!o.vertexColors,
                                           depthTest: o.depthTest !== false, transparent: !!o.transparent });
    mat.color = u.diffuse.value;
    return mat;
  }

  // The spheres of a many-body scene: one point each, drawn as a lit disc of the sphere's
  // projected size (an impostor: 1 vertex instead of a hundred). Attributes: position (the
  // centre), radius (m; 0 hides it), colour (linear RGB). pxPerM: drawing-buffer pixels per
  // metre at unit distance; viewToWorld: the camera's rotation, to light in the world frame.
  const DOT_VERT = `
    attribute float radius;
    attribute vec3 colour;
    uniform float pxPerM;
    varying vec3 vColour;
    void main() {
      vec4 mv = modelViewMatrix * vec4(position, 1.0);
      gl_Position = radius > 0.0 ? projectionMatrix * mv : vec4(2.0, 2.0, 2.0, 1.0);
      gl_PointSize = max(2.0 * radius * pxPerM / max(-mv.z, 1e-9), 1.0);
      vColour = colour;
    }`;
  const DOT_FRAG = `
    uniform vec3 sky, ground, sun, sunDir;
    uniform mat3 viewToWorld;
    varying vec3 vColour;
    void main() {
      vec2 q = 2.0 * gl_PointCoord - 1.0;
      float r2 = dot(q, q);
      if (r2 > 1.0) discard;
      vec3 n = viewToWorld * vec3(q.x, -q.y, sqrt(1.0 - r2));
      gl_FragColor = vec4(vColour * (mix(ground, sky, 0.5 * n.y + 0.5) + sun * max(dot(n, sunDir), 0.0)) * 0.3183098862, 1.0);
    #ifdef SRGB_SQRT
      // the sRGB encoding from three square roots (I. Taylor's fit), not pow(): within a quarter
      // of an 8-bit level of it, and software WebGL pays per pixel for pow()
      vec3 c = clamp(gl_FragColor.rgb, 0.0, 1.0), s1 = sqrt(c), s2 = sqrt(s1), s3 = sqrt(s2);
      gl_FragColor.rgb = mix(0.662002687 * s1 + 0.684122060 * s2 - 0.323583601 * s3 - 0.0225411470 * c, c * 12.92,
                             vec3(lessThanEqual(c, vec3(0.0031308))));
    #else
      #include <colorspace_fragment>
    #endif
    }`;
  function dotMaterial() {
    const u = litMaterial(0xffffff).uniforms;
    u.pxPerM = { value: 1 };
    u.viewToWorld = { value: new THREE.Matrix3() };
    return new THREE.ShaderMaterial({ defines: SOFTWARE_GL ? { SRGB_SQRT: 1 } : {}, uniforms: u, vertexShader: DOT_VERT, fragmentShader: DOT_FRAG });
  }

  const geoms = H.meshes.map(m => {
    let g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.Float32BufferAttribute(m.vert, 3));
    g.setIndex(m.tri);
    if (!m.smooth) g = g.toNonIndexed(); // flat faces: one normal per triangle
    g.computeVertexNormals();
    return g;
  });

  //---- framing ----
  // boxes: the initial scene (header), the whole run (every frame of every solver, clipped to
  // 1.5 scene lengths around the start: a body thrown to 1e3 m would leave the rest a dot)
  const box0 = new THREE.Box3(new THREE.Vector3(...H.bounds[0]), new THREE.Vector3(...H.bounds[1]));
  const clip = box0.clone().expandByScalar(1.5 * L);
  const boxRun = box0.clone(), tmpP = new THREE.Vector3();
  rec.runs.forEach(r => r.forEach(f => {
    H.bodies.forEach((b, i) => {
      if (b.kind !== 'dynamic') return;
      tmpP.set(f.pose[BS * i], f.pose[BS * i + 1], f.pose[BS * i + 2]);
      if (!Number.isFinite(tmpP.x + tmpP.y + tmpP.z)) return;
      tmpP.clamp(clip.min, clip.max);
      boxRun.expandByPoint(tmpP.clone().addScalar(0.5 * b.size));
      boxRun.expandByPoint(tmpP.addScalar(-0.5 * b.size));
    });
    for (let j = 0; j < f.nvert; j++) {
      tmpP.set(f.vert[3 * j], f.vert[3 * j + 1], f.vert[3 * j + 2]);
      if (Number.isFinite(tmpP.x + tmpP.y + tmpP.z)) boxRun.expandByPoint(tmpP.clamp(clip.min, clip.max));
    }
  }));
  const FOV = 35;
  const camera = new THREE.PerspectiveCamera(FOV, 1, L * 1e-3, L * 200);
  const target = new THREE.Vector3();
  const orbit = { az: -0.95, el: 0.35, zoom: 1, fit: 2.3 * L };
  function fitBox(box, margin) {
    box.getCenter(target);
    const r = 0.5 * box.getSize(tmpP).length();
    orbit.fit = (margin || 1.1) * Math.max(r, 0.05 * L) / Math.sin(FOV / 2 * Math.PI / 180);
  }
  function placeCamera() {
    const ce = Math.cos(orbit.el), se = Math.sin(orbit.el), d = orbit.fit * orbit.zoom;
    camera.position.set(target.x + d * ce * Math.cos(orbit.az), target.y + d * ce * Math.sin(orbit.az), target.z + d * se);
    camera.up.set(-se * Math.cos(orbit.az), -se * Math.sin(orbit.az), ce); // never parallel to the view
    camera.lookAt(target);
    camera.near = d * 1e-3;
    camera.far = d * 100 + 10 * L;
    camera.updateProjectionMatrix();
    report.camera = { az: orbit.az, el: orbit.el, zoom: orbit.zoom, target: target.toArray() };
  }
  const AXIS_VIEW = { x: [0, 0], y: [-Math.PI / 2, 0], z: [-Math.PI / 2, Math.PI / 2] };

  // the ground: the z of a plane whose normal is z (its square's frame), else the scene's bottom
  let groundZ = H.bounds[0][2];
  H.bodies.forEach((b, i) => {
    const f = rec.runs.find(r => r.length)[0];
    const q = f.pose.subarray(BS * i, BS * i + 7);
    if (b.shape === 'plane' && Math.abs(q[4]) + Math.abs(q[5]) < 1e-6) groundZ = q[2];
  });
  const gridStep = nice(0.2 * L), gridN = 2 * Math.ceil(0.8 * Math.max(boxRun.getSize(tmpP).length(), L) / gridStep);
  const runCentre = boxRun.getCenter(new THREE.Vector3());

  //---- panes ----
  const panesEl = document.getElementById('panes');
  const ns = H.solvers.length;
  let maxNc = 1;
  rec.runs.forEach(r => r.forEach(f => { maxNc = Math.max(maxNc, f.nc); }));
  // with many contacts an arrow's head is three lines, not a cone (its 30 triangles, 1e4 times)
  const LINE_HEADS = maxNc > 512, BARBS = [1, -1];

  // software WebGL (SwiftShader, llvmpipe) pays per pixel for multisampling: off there, or
  // with #aa=0; on with #aa=1
  function softwareGL() {
    try {
      const g = document.createElement('canvas').getContext('webgl');
      const ext = g && g.getExtension('WEBGL_debug_renderer_info');
      const name = ext ? String(g.getParameter(ext.UNMASKED_RENDERER_WEBGL)) : '';
      if (g && g.getExtension('WEBGL_lose_context')) g.getExtension('WEBGL_lose_context').loseContext();
      return /swiftshader|llvmpipe|software/i.test(name);
    } catch (e) { return false; }
  }
  const aaHash = new URLSearchParams(location.hash.slice(1)).get('aa');
  const antialias = aaHash === '1' || (aaHash !== '0' && !SOFTWARE_GL);
  report.antialias = antialias;
  const MANY = H.bodies.filter(b => b.kind === 'dynamic').length > 256;
  // One WebGL canvas under all the panes, each pane drawn in its own viewport (scissored): a
  // context per pane cost each its own clear, read-back and compositing (about 5 ms a pane a
  // frame in software rendering). The pane elements above it are transparent and take the
  // mouse; a pane's `canvas` below is its element.
  const glCanvas = document.createElement('canvas');
  glCanvas.id = 'gl';
  panesEl.appendChild(glCanvas); // first: the panes (positioned too) paint over it
  let renderer;
  try {
    // no preserveDrawingBuffer: it costs a copy of the drawing buffer per frame
    // no stencil buffer (nothing uses it): one buffer less to clear per frame
    renderer = new THREE.WebGLRenderer({ canvas: glCanvas, antialias, stencil: false });
  } catch (e) {
    fail('WebGL is not available in this browser (' + e.message + '); the recording itself is fine');
    return;
  }
  report.webgl = true;
  // a shader that does not compile is an error of the page (three.js would only log it)
  renderer.debug.onShaderError = (gl, program, vs, fs) => {
    fail('a WebGL shader did not compile: ' + (gl.getShaderInfoLog(vs) + ' ' + gl.getShaderInfoLog(fs)).trim().slice(0, 300));
  };
  // #res=R draws at R times the screen's pixels (software WebGL pays per pixel)
  const res = Number(new URLSearchParams(location.hash.slice(1)).get('res'));
  renderer.setPixelRatio((window.devicePixelRatio || 1) * (res > 0 && res <= 2 ? res : 1));
  renderer.setScissorTest(true);
  const GAP = new THREE.Color(0x1d2127); // the page's background, between the panes
  const panes = [];
  for (let s = 0; s < ns; s++) {
    const el = document.createElement('div');
    el.className = 'pane';
    const canvas = el;
    const readout = document.createElement('div');
    readout.className = 'readout';
    const scalebar = document.createElement('div');
    scalebar.className = 'scalebar';
    el.appendChild(readout);
    el.appendChild(scalebar);
    panesEl.appendChild(el);
    const scene = new THREE.Scene();
    scene.background = new THREE.Color(0x14171c);
    // the lights of the deformable bodies' Lambert material (rigid ones: litMaterial, the same)
    scene.add(new THREE.HemisphereLight(HEMI.sky, HEMI.ground, HEMI.intensity));
    const sun = new THREE.DirectionalLight(SUN.color, SUN.intensity);
    sun.position.set(...SUN.dir);
    scene.add(sun);
    // ground grid (in the xy plane at the ground) and the axes at the origin (x red, y green, z blue)
    const grid = new THREE.GridHelper(gridN * gridStep, gridN, 0x56606e, 0x30363f);
    grid.material.dispose();
    grid.material = lineMaterial({ vertexColors: true });
    grid.rotation.x = Math.PI / 2;
    grid.position.set(Math.round(runCentre.x / gridStep) * gridStep, Math.round(runCentre.y / gridStep) * gridStep, groundZ - 1e-4 * L);
    scene.add(grid);
    const axes = new THREE.AxesHelper(gridStep);
    axes.material.depthTest = false;
    axes.renderOrder = 1;
    scene.add(axes);
    // many dynamic bodies: one instanced draw per shared mesh (spheres with fewer triangles)
    // instead of a draw per body
    const inst = new Map();
    const bodies = H.bodies.map((b, i) => {
      const fixed = b.kind !== 'dynamic';
      if (!fixed && MANY) {
        if (!inst.has(b.mesh)) inst.set(b.mesh, []);
        const list = inst.get(b.mesh);
        list.push(i);
        return { mesh: null, fixed, size: b.size, scale: b.scale, slot: list.length - 1, group: b.mesh };
      }
      // a plane is drawn from its free side only (its square faces +z of its frame, the side its
      // normal points to): seen from the solid side it hid the scene, as a box's near walls hid
      // its grains from outside
      const mesh = new THREE.Mesh(geoms[b.mesh], litMaterial(fixed ? 0x59606b : 0x6d8bb5, b.shape === 'plane' ? THREE.FrontSide : THREE.DoubleSide, H.meshes[b.mesh].smooth));
      mesh.scale.set(b.scale[0], b.scale[1], b.scale[2]);
      mesh.userData = { body: i };
      scene.add(mesh);
      return { mesh, fixed, size: b.size };
    });
    const groups = new Map(), dots = [];
    inst.forEach((list, mi) => {
      // impostors, picked by a ray-sphere test; #dots=0 draws instanced meshes instead (a
      // sphere's impostor is at most the GL's largest point size across: 1023 px in SwiftShader,
      // less on some GPUs, so a grain seen from very close is drawn too small)
      if (H.bodies[list[0]].shape === 'sphere' && new URLSearchParams(location.hash.slice(1)).get('dots') !== '0') {
        const g = new THREE.BufferGeometry();
        g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3 * list.length), 3));
        g.setAttribute('radius', new THREE.BufferAttribute(new Float32Array(list.length), 1));
        g.setAttribute('colour', new THREE.BufferAttribute(new Float32Array(3 * list.length), 3));
        const pts = new THREE.Points(g, dotMaterial());
        pts.frustumCulled = false;
        pts.userData = { inst: list };
        scene.add(pts);
        dots.push(pts);
        groups.set(mi, pts);
        return;
      }
      const g = H.bodies[list[0]].shape === 'sphere' ? new THREE.SphereGeometry(1, 10, 6) : geoms[mi];
      const im = new THREE.InstancedMesh(g, litMaterial(0xffffff, THREE.DoubleSide, H.bodies[list[0]].shape === 'sphere' || H.meshes[mi].smooth), list.length);
      im.userData = { inst: list };
      im.frustumCulled = false;
      scene.add(im);
      groups.set(mi, im);
    });
    bodies.forEach(b => { if (b.group !== undefined) b.inst = groups.get(b.group); });
    const defs = H.deformable.map((d, k) => {
      const g = new THREE.BufferGeometry();
      const pos = new THREE.BufferAttribute(new Float32Array(3 * d.nvert), 3);
      g.setAttribute('position', pos);
      g.setAttribute('color', new THREE.BufferAttribute(new Float32Array(3 * d.nvert), 3));
      g.setIndex(d.tri);
      const mesh = new THREE.Mesh(g, new THREE.MeshLambertMaterial({ vertexColors: true, side: THREE.DoubleSide, flatShading: true }));
      mesh.userData = { def: k };
      scene.add(mesh);
      // the surface's edges, each once, on the same vertex buffer
      const seen = new Set(), ei = [];
      for (let t = 0; t < d.tri.length; t += 3)
        for (let e = 0; e < 3; e++) {
          const a = d.tri[t + e], b = d.tri[t + (e + 1) % 3], key = a < b ? a * d.nvert + b : b * d.nvert + a;
          if (!seen.has(key)) { seen.add(key); ei.push(a, b); }
        }
      const eg = new THREE.BufferGeometry();
      eg.setAttribute('position', pos);
      eg.setIndex(ei);
      const edges = new THREE.LineSegments(eg, lineMaterial({ color: 0x1a1d22 }));
      edges.frustumCulled = false;
      edges.visible = false;
      scene.add(edges);
      return { mesh, edges, nedge: ei.length / 2, d };
    });
    // impulses: a shaft (line) and a head (a cone; with many contacts two lines) per contact
    const shaftG = new THREE.BufferGeometry();
    shaftG.setAttribute('position', new THREE.BufferAttribute(new Float32Array((LINE_HEADS ? 18 : 6) * maxNc), 3));
    shaftG.setAttribute('color', new THREE.BufferAttribute(new Float32Array((LINE_HEADS ? 18 : 6) * maxNc), 3));
    // drawn over the bodies: an impulse acts at a point inside the contact, where a body hides it
    const shafts = new THREE.LineSegments(shaftG, lineMaterial({ vertexColors: true, depthTest: false, transparent: true }));
    shafts.renderOrder = 2;
    shafts.frustumCulled = false;
    scene.add(shafts);
    const heads = new THREE.InstancedMesh(new THREE.ConeGeometry(0.35, 1, 10),
      new THREE.MeshBasicMaterial({ depthTest: false, transparent: true }), LINE_HEADS ? 1 : maxNc);
    heads.renderOrder = 2;
    heads.frustumCulled = false;
    scene.add(heads);
    // the picked item: a ring of lines around it
    const marker = new THREE.LineSegments(new THREE.BufferGeometry(), lineMaterial({ color: 0xffffff, depthTest: false }));
    marker.renderOrder = 3;
    marker.visible = false;
    marker.frustumCulled = false;
    scene.add(marker);
    const line = [0, 1, 2].map(() => readout.appendChild(document.createElement('div')));
    panes.push({ s, el, canvas, vp: { x: 0, y: 0, w: 1, h: 1 }, readout, line, scalebar, renderer, scene, grid, axes, bodies, groups, dots, defs, shafts, heads, marker,
                 pen: new Float32Array(H.bodies.length), penDef: new Float32Array(H.deformable.length),
                 drawnC: new Int32Array(maxNc), drawnAB: new Float32Array(6 * maxNc), nDrawn: 0,
                 frame: null, shown: true, run: rec.runs[s], name: H.solvers[s] });
  }

  //---- controls ----
  const ui = {
    play: document.getElementById('play'), slider: document.getElementById('slider'),
    time: document.getElementById('time'), speed: document.getElementById('speed'),
    colour: document.getElementById('colour'), arrows: document.getElementById('arrows'),
    exag: document.getElementById('exag'), edges: document.getElementById('edges'),
    grid: document.getElementById('grid'), frame: document.getElementById('frame'),
    view: document.getElementById('view'), pick: document.getElementById('pick')
  };
  ui.slider.max = String(steps.length - 1);
  if (!H.deformable.length) {
    ['exag', 'edges'].forEach(k => { ui[k].parentElement.style.display = 'none'; });
  }
  if (!H.deformable.length || report.version < 2)
    for (const o of Array.from(ui.colour.options)) if (o.value === 'stress' || o.value === 'strain') o.disabled = true;
  const panesel = document.getElementById('panesel');
  if (ns > 1) {
    panesel.appendChild(document.createTextNode('panes'));
    panes.forEach(p => {
      const l = document.createElement('label');
      const c = document.createElement('input');
      c.type = 'checkbox';
      c.checked = true;
      c.addEventListener('change', () => { p.shown = c.checked; layout(); show(index); });
      p.check = c;
      l.appendChild(c);
      l.appendChild(document.createTextNode(p.name));
      panesel.appendChild(l);
    });
  }
  function layout() {
    const vis = panes.filter(p => p.shown);
    panes.forEach(p => { p.el.style.display = p.shown ? '' : 'none'; });
    const n = Math.max(vis.length, 1), cols = n <= 3 ? n : Math.ceil(Math.sqrt(n));
    panesEl.style.gridTemplateColumns = 'repeat(' + cols + ', 1fr)';
    report.panes_shown = vis.map(p => p.name);
    resize();
  }

  document.getElementById('legend').innerHTML =
    'arrows: contact impulse on the second body (' + (0.15 * L).toPrecision(2) + ' m = ' + refImp.toPrecision(3) + ' N s, the run\'s 90th percentile)' +
    '<span class="sw" style="background:#3ddc84"></span>sticking<span class="sw" style="background:#ff5a4e"></span>sliding' +
    ' &nbsp;| bodies: <span id="cmode"></span> <span class="sw" style="background:#6b8cbf"></span><span id="cmin">0</span>' +
    '<span class="sw" style="background:#f7e626"></span><span class="sw" style="background:#f72626"></span><span id="cmax"></span>' +
    ' &nbsp;| grid ' + gridStep.toPrecision(2) + ' m, axes x red y green z blue' +
    ' &nbsp;| timeline: <span style="color:#7fb3ff">merit</span> (log), <span style="color:#ffb347">deepest penetration</span> (log; dashed: limit),' +
    ' <span style="color:#d8d8d8">energy</span>, <span style="color:#ff5a4e">failed steps</span>; click to go there; keys , . step';

  //---- timeline ----
  const tlEl = document.getElementById('timeline');
  const TL = { merit: '#7fb3ff', pen: '#ffb347', energy: '#d8d8d8', fail: '#ff5a4e' };
  function frameAt(run, step) { // last frame at or before step
    let a = 0, b = run.length - 1, hit = -1;
    while (a <= b) {
      const m = (a + b) >> 1;
      if (run[m].step <= step) { hit = m; a = m + 1; } else b = m - 1;
    }
    return hit >= 0 ? run[hit] : null;
  }
  panes.forEach(p => {
    const row = document.createElement('div');
    row.className = 'tl-row';
    const name = document.createElement('div');
    name.className = 'tl-name';
    name.textContent = p.name;
    // the strip is drawn once (and on resize); the cursor is a line over it, moved per step
    const strip = document.createElement('div');
    strip.className = 'tl-strip';
    const canvas = document.createElement('canvas');
    const cursor = document.createElement('div');
    cursor.className = 'tl-cursor';
    strip.appendChild(canvas);
    strip.appendChild(cursor);
    const note = document.createElement('div');
    note.className = 'tl-note';
    row.appendChild(name);
    row.appendChild(strip);
    row.appendChild(note);
    tlEl.appendChild(row);
    // per recorded step: the frame's merit, deepest penetration, energy, failure
    const fr = steps.map(st => frameAt(p.run, st));
    let firstFail = -1, failed = 0;
    const crossings = [];
    fr.forEach((f, i) => {
      if (!f || f.step !== steps[i] || f.step === 0) return;
      if (f.reason < 0) { failed++; if (firstFail < 0) firstFail = f.step; }
      const prev = i > 0 && fr[i - 1] ? fr[i - 1].penAfter : 0;
      if (f.penAfter > penLimit && !(prev > penLimit)) crossings.push(f.step);
    });
    p.tl = { row, canvas, cursor, note, fr, firstFail, crossings, x: NaN };
    note.textContent = (firstFail >= 0 ? 'first failure: step ' + firstFail + ' (' + failed + ' failed)' : 'no failed step') +
      '\n' + (crossings.length ? 'penetration > limit at ' + crossings[0] + (crossings.length > 1 ? ' (' + crossings.length + 'x)' : '') : 'penetration within the limit');
    note.style.whiteSpace = 'pre';
    report.timeline.push({ solver: p.name, first_failed: firstFail, failed, crossings: crossings.length,
                           first_crossing: crossings.length ? crossings[0] : -1 });
    canvas.addEventListener('click', e => {
      const r = canvas.getBoundingClientRect();
      show(Math.floor((e.clientX - r.left) / r.width * steps.length));
      simTime = steps[index] * H.dt;
    });
  });
  const stepX = (i, w) => (i + 0.5) / steps.length * w;
  function drawTimelineBase(p) {
    const t = p.tl, c = t.canvas, dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(c.clientWidth * dpr)), h = Math.max(1, Math.round(c.clientHeight * dpr));
    c.width = w;
    c.height = h;
    t.cssW = c.clientWidth; // read here, not per step: a read after a DOM change forces a layout
    const g = c.getContext('2d');
    g.fillStyle = '#15181d';
    g.fillRect(0, 0, w, h);
    const top = 3 * dpr, bot = h - 7 * dpr;
    // one series scaled to its own range over the run (log for merit and penetration)
    function series(get, colour, log, extra) {
      const v = t.fr.map((f, i) => {
        if (!f || f.step !== steps[i]) return NaN;
        const x = get(f);
        return log ? (x > 0 ? Math.log10(x) : NaN) : x;
      });
      let lo = Infinity, hi = -Infinity;
      v.forEach(x => { if (Number.isFinite(x)) { lo = Math.min(lo, x); hi = Math.max(hi, x); } });
      if (extra !== undefined && Number.isFinite(lo)) { lo = Math.min(lo, extra); hi = Math.max(hi, extra); }
      if (!(lo <= hi)) return null;
      if (hi - lo < 1e-12 * Math.max(1, Math.abs(hi))) { lo -= 1; hi += 1; }
      const y = x => bot - (x - lo) / (hi - lo) * (bot - top);
      g.strokeStyle = colour;
      g.lineWidth = dpr;
      g.beginPath();
      let pen = false;
      v.forEach((x, i) => {
        if (!Number.isFinite(x)) { pen = false; return; }
        if (pen) g.lineTo(stepX(i, w), y(x)); else g.moveTo(stepX(i, w), y(x));
        pen = true;
      });
      g.stroke();
      return y;
    }
    series(f => f.energy, TL.energy, false);
    series(f => f.merit, TL.merit, true);
    const yp = series(f => f.penAfter, TL.pen, true, Math.log10(penLimit));
    if (yp) { // the penetration limit
      g.setLineDash([4 * dpr, 3 * dpr]);
      g.strokeStyle = TL.pen;
      g.beginPath();
      g.moveTo(0, yp(Math.log10(penLimit)));
      g.lineTo(w, yp(Math.log10(penLimit)));
      g.stroke();
      g.setLineDash([]);
    }
    // failed steps as ticks along the bottom; the first failure and the limit crossings as lines
    g.fillStyle = TL.fail;
    const tw = Math.max(1, w / steps.length);
    t.fr.forEach((f, i) => { if (f && f.step === steps[i] && f.step > 0 && f.reason < 0) g.fillRect(stepX(i, w) - tw / 2, h - 6 * dpr, tw, 6 * dpr); });
    const mark = (st, colour, width) => {
      const i = steps.indexOf(st);
      g.fillStyle = colour;
      g.fillRect(stepX(i, w) - width * dpr / 2, 0, width * dpr, h);
    };
    t.crossings.forEach(st => mark(st, TL.pen, 1));
    if (t.firstFail >= 0) {
      mark(t.firstFail, TL.fail, 2);
      const x = stepX(steps.indexOf(t.firstFail), w);
      g.beginPath();
      g.moveTo(x - 5 * dpr, 0);
      g.lineTo(x + 5 * dpr, 0);
      g.lineTo(x, 7 * dpr);
      g.fill();
    }
  }
  function drawTimeline(p) {
    const t = p.tl, x = Math.round(stepX(index, t.cssW || 0));
    if (x !== t.x) { t.x = x; t.cursor.style.transform = 'translateX(' + x + 'px)'; }
  }

  //---- showing one step ----
  const up = new THREE.Vector3(0, 1, 0), tmpM = new THREE.Matrix4(), tmpQ = new THREE.Quaternion();
  const tmpV = new THREE.Vector3(), tmpS = new THREE.Vector3(), tmpC = new THREE.Color();
  const hidden = new Set(); // 'b<i>' rigid bodies, 'd<k>' deformable bodies
  let picked = null;        // { kind: 'body' | 'def' | 'contact', s, i }

  function colourMode() {
    const m = ui.colour.value;
    return (m === 'stress' || m === 'strain') && report.version < 2 ? 'displacement' : m;
  }

  function putVertex(A, C, v, x, y, z, col) {
    A[v] = x; A[v + 1] = y; A[v + 2] = z; C[v] = col.r; C[v + 1] = col.g; C[v + 2] = col.b;
    return v + 3;
  }
  function showPane(p, step) {
    const f = frameAt(p.run, step);
    p.frame = f;
    p.nDrawn = 0;
    if (!f) {
      setText(p.line[0], p.name);
      setText(p.line[1], '(no frame at this step: the run of this solver was cut short)');
      setText(p.line[2], '');
      return;
    }
    const f0 = p.run[0], mode = colourMode(), k = Number(ui.exag.value) || 1;
    // deepest penetration per body (and per deformable body) of this step's contacts
    // (no allocation per body or contact: a 1e4-body frame would make 1e4 objects)
    const pen = p.pen.fill(0), penDef = p.penDef.fill(0), P0 = f0.pose, pose = f.pose;
    for (let c = 0; c < f.nc; c++) {
      const d = Math.max(0, -f.cf[13 * c + 9]), s0 = f.ci[13 * c + 10], s1 = f.ci[13 * c + 11];
      if (s0 >= 0) pen[s0] = Math.max(pen[s0], d); else if (s0 <= -2) penDef[-2 - s0] = Math.max(penDef[-2 - s0], d);
      if (s1 >= 0) pen[s1] = Math.max(pen[s1], d); else if (s1 <= -2) penDef[-2 - s1] = Math.max(penDef[-2 - s1], d);
    }
    const anyHidden = hidden.size > 0;
    for (let i = 0; i < p.bodies.length; i++) {
      const b = p.bodies[i], o = BS * i, off = anyHidden && hidden.has('b' + i);
      let v = 0;
      if (!b.fixed && mode === 'penetration') v = pen[i] / penLimit;
      else if (!b.fixed && mode === 'displacement') v = Math.hypot(pose[o] - P0[o], pose[o + 1] - P0[o + 1], pose[o + 2] - P0[o + 2]) / (0.25 * b.size);
      ramp(0.5 * v, tmpC);
      if (b.inst && b.inst.isPoints) { // a sphere's impostor: centre, radius (0: hidden), colour
        const a = b.inst.geometry.attributes, k3 = 3 * b.slot;
        a.position.array[k3] = pose[o]; a.position.array[k3 + 1] = pose[o + 1]; a.position.array[k3 + 2] = pose[o + 2];
        a.radius.array[b.slot] = off ? 0 : b.scale[0];
        a.colour.array[k3] = tmpC.r; a.colour.array[k3 + 1] = tmpC.g; a.colour.array[k3 + 2] = tmpC.b;
      } else if (b.inst) { // hidden: scaled to nothing
        tmpV.set(pose[o], pose[o + 1], pose[o + 2]);
        tmpQ.set(pose[o + 4], pose[o + 5], pose[o + 6], pose[o + 3]);
        if (off) tmpS.set(0, 0, 0); else tmpS.set(b.scale[0], b.scale[1], b.scale[2]);
        tmpM.compose(tmpV, tmpQ, tmpS);
        b.inst.setMatrixAt(b.slot, tmpM);
        b.inst.setColorAt(b.slot, tmpC);
      } else {
        b.mesh.position.set(pose[o], pose[o + 1], pose[o + 2]);
        b.mesh.quaternion.set(pose[o + 4], pose[o + 5], pose[o + 6], pose[o + 3]);
        b.mesh.visible = !off;
        if (!b.fixed) b.mesh.material.color.copy(tmpC);
      }
    }
    p.groups.forEach(g => {
      if (g.isPoints) {
        const a = g.geometry.attributes;
        a.position.needsUpdate = a.radius.needsUpdate = a.colour.needsUpdate = true;
        return;
      }
      g.instanceMatrix.needsUpdate = true;
      if (g.instanceColor) g.instanceColor.needsUpdate = true;
      g.boundingSphere = null; // recomputed when a click needs it
    });
    p.defs.forEach((e, kd) => {
      const pos = e.mesh.geometry.attributes.position, col = e.mesh.geometry.attributes.color;
      const o = 3 * e.d.first;
      // drawn at the first frame's shape plus k times the displacement from it
      for (let j = 0; j < 3 * e.d.nvert; j++) pos.array[j] = f0.vert[o + j] + k * (f.vert[o + j] - f0.vert[o + j]);
      for (let v = 0; v < e.d.nvert; v++) {
        const a = o + 3 * v;
        let x;
        if (mode === 'penetration') x = 0.5 * penDef[kd] / penLimit;
        else if (mode === 'displacement') x = Math.hypot(f.vert[a] - f0.vert[a], f.vert[a + 1] - f0.vert[a + 1], f.vert[a + 2] - f0.vert[a + 2]) / (range.displacement || 1);
        else if (mode === 'stress') x = f.vm[e.d.first + v] / (range.stress || 1);
        else x = f.eps[e.d.first + v] / (range.strain || 1);
        const c = ramp(x, tmpC);
        col.array[3 * v] = c.r; col.array[3 * v + 1] = c.g; col.array[3 * v + 2] = c.b;
      }
      pos.needsUpdate = col.needsUpdate = true;
      e.mesh.geometry.computeVertexNormals();
      e.mesh.geometry.computeBoundingSphere();
      e.mesh.visible = !hidden.has('d' + kd);
      e.edges.visible = e.mesh.visible && ui.edges.checked;
    });
    // arrows: a shaft and a cone, or with many contacts (LINE_HEADS) a shaft and two barbs,
    // all in one line object; p.drawnC / drawnAB: each drawn arrow's contact and ends (picking)
    const SA = p.shafts.geometry.attributes.position.array, SC = p.shafts.geometry.attributes.color.array;
    const vpa = LINE_HEADS ? 6 : 2; // line vertices per arrow
    let n = 0;
    const offSide = s => (s >= 0 && hidden.has('b' + s)) || (s <= -2 && hidden.has('d' + (-2 - s)));
    if (ui.arrows.checked && impScale > 0) {
      for (let c = 0; c < f.nc; c++) {
        const b = 13 * c, ix = f.cf[b + 6], iy = f.cf[b + 7], iz = f.cf[b + 8];
        if (anyHidden && (offSide(f.ci[b + 10]) || offSide(f.ci[b + 11]))) continue; // a hidden body's contacts go with it
        const mag = Math.hypot(ix, iy, iz), len = Math.min(mag * impScale, 0.5 * L);
        if (!(len > 1e-4 * L)) continue;
        const col = (f.ci[b + 12] & 1) ? SLIP : STICK;
        const x0 = f.cf[b], y0 = f.cf[b + 1], z0 = f.cf[b + 2];
        const ux = ix / mag, uy = iy / mag, uz = iz / mag;
        const hl = Math.min(0.35 * len, 0.04 * L);
        let v = 3 * vpa * n;
        const tx = x0 + ux * len, ty = y0 + uy * len, tz = z0 + uz * len;
        if (LINE_HEADS) {
          v = putVertex(SA, SC, v, x0, y0, z0, col); v = putVertex(SA, SC, v, tx, ty, tz, col);
          // two barbs from the tip, in a plane through the shaft (lines cost SwiftShader more
          // than their pixels: a barb fewer is a measured 20 % of a 42k-contact frame)
          const ax = Math.abs(ux) < 0.9 ? 1 : 0, ay = 1 - ax; // a vector not along u
          let px = -uz * ay, py = uz * ax, pz = ux * ay - uy * ax; // u x a, a = (ax, ay, 0)
          const pl = Math.hypot(px, py, pz); px /= pl; py /= pl; pz /= pl;
          for (const side of BARBS) {
            const w = 0.35 * hl * side;
            v = putVertex(SA, SC, v, tx, ty, tz, col);
            v = putVertex(SA, SC, v, tx - ux * hl + px * w, ty - uy * hl + py * w, tz - uz * hl + pz * w, col);
          }
        } else {
          v = putVertex(SA, SC, v, x0, y0, z0, col); v = putVertex(SA, SC, v, tx - ux * hl, ty - uy * hl, tz - uz * hl, col);
          tmpV.set(ux, uy, uz);
          tmpQ.setFromUnitVectors(up, tmpV);
          tmpS.set(hl * 0.8, hl, hl * 0.8);
          tmpM.compose(tmpP.set(tx - ux * hl / 2, ty - uy * hl / 2, tz - uz * hl / 2), tmpQ, tmpS);
          p.heads.setMatrixAt(n, tmpM);
          p.heads.setColorAt(n, col);
        }
        p.drawnC[n] = c;
        const D = p.drawnAB, d6 = 6 * n;
        D[d6] = x0; D[d6 + 1] = y0; D[d6 + 2] = z0; D[d6 + 3] = tx; D[d6 + 4] = ty; D[d6 + 5] = tz;
        n++;
      }
    }
    p.nDrawn = n;
    p.shafts.geometry.setDrawRange(0, vpa * n);
    p.shafts.geometry.attributes.position.needsUpdate = p.shafts.geometry.attributes.color.needsUpdate = true;
    p.heads.count = LINE_HEADS ? 0 : n;
    p.heads.instanceMatrix.needsUpdate = true;
    if (p.heads.instanceColor) p.heads.instanceColor.needsUpdate = true;
    const reason = H.reasons[String(f.reason)] || String(f.reason);
    const held = f.step === step ? '' : ' (last frame: step ' + f.step + ')';
    setText(p.line[0], p.name + '   step ' + f.step + held + '   t ' + f.t.toFixed(4) + ' s');
    setText(p.line[1], f.step === 0 ? 'initial state'
      : 'iters ' + f.iters + '   ' + reason + '   residual ' + fmt(f.residual) + '   merit ' + fmt(f.merit));
    const bad = f.reason < 0 ? 'bad' : '';
    if (!textHeld && p.line[1].className !== bad) p.line[1].className = bad;
    setText(p.line[2], 'contacts ' + f.nc + '   deepest ' + fmt(f.pen > 0 ? f.pen : 0) + ' m' +
      (Number.isFinite(f.energy) ? '   energy ' + fmt(f.energy) + ' J' : ''));
  }
  // text set only when it changes: a change costs a layout and a repaint of its box
  function setText(el, text) { if (!textHeld && el.textContent !== text) el.textContent = text; }

  // follow: the camera's target on the dynamic bodies of the first pane shown, at this step
  function follow() {
    const p = panes.find(q => q.shown && q.frame) || panes[0];
    const f = p.frame;
    if (!f) return;
    const box = new THREE.Box3();
    H.bodies.forEach((b, i) => {
      if (b.kind !== 'dynamic' || hidden.has('b' + i)) return;
      tmpP.set(f.pose[BS * i], f.pose[BS * i + 1], f.pose[BS * i + 2]);
      if (Number.isFinite(tmpP.x + tmpP.y + tmpP.z)) box.expandByPoint(tmpP);
    });
    for (let j = 0; j < f.nvert; j++) box.expandByPoint(tmpP.set(f.vert[3 * j], f.vert[3 * j + 1], f.vert[3 * j + 2]));
    if (box.isEmpty()) return;
    box.expandByScalar(0.25 * L);
    fitBox(box);
  }

  function scaleBars() {
    panes.forEach(p => {
      const h = p.el.clientHeight || 1;
      const mpp = 2 * orbit.fit * orbit.zoom * Math.tan(FOV / 2 * Math.PI / 180) / h; // at the target
      const len = nice(90 * mpp);
      p.scalebar.innerHTML = '<div style="width:' + (len / mpp).toFixed(0) + 'px"></div>' + len.toPrecision(1) + ' m';
    });
  }

  let glH = 1;
  // the canvas (under all panes) in whole CSS pixels, its drawing buffer as many device pixels:
  // drawn 1:1, not scaled by the compositor (a scaled canvas costs software compositing a
  // filtered draw and blurs); out of the layout (absolute), so that it does not size the panes.
  // p.vp: a pane's viewport on it, CSS pixels from its top left
  function resize() {
    const R = panesEl.getBoundingClientRect();
    glH = Math.max(1, Math.floor(R.height));
    renderer.setSize(Math.max(1, Math.floor(R.width)), glH, true);
    panes.forEach(p => {
      if (!p.shown) return;
      const r = p.el.getBoundingClientRect(), w = Math.max(1, Math.floor(r.width)), h = Math.max(1, Math.floor(r.height));
      p.vp = { x: Math.round(r.left - R.left), y: Math.round(r.top - R.top), w, h };
      camera.aspect = w / Math.max(h, 1);
    });
    camera.updateProjectionMatrix();
    panes.forEach(p => { drawTimelineBase(p); p.tl.x = NaN; drawTimeline(p); });
    scaleBars();
  }

  let index = 0, playing = false, simTime = 0, last = null, dirty = true, quiet = false, sizeDue = false;
  // #perf=1 (or =sync): per animation frame, the interval since the last one and the ms spent
  // updating the scene from the recording, drawing the timeline and in WebGL (submitting the
  // draw; with sync, until the GL has finished it), read by viewer/fps.js as window.flPerf
  const perf = (() => {
    const m = new URLSearchParams(location.hash.slice(1)).get('perf');
    if (!m) return null;
    const pf = { sync: m === 'sync', ready: false, tl: 0, shown: 0, prev: null, rows: [], t0: 0 };
    pf.reset = () => { pf.rows = []; pf.prev = null; pf.shown = 0; pf.drawn = 0; pf.t0 = performance.now(); };
    pf.frame = (now, up, tl, gl, drew) => {
      if (pf.prev !== null) { pf.rows.push([now - pf.prev, up, tl, gl]); if (drew) pf.drawn++; }
      pf.prev = now;
    };
    pf.summary = () => {
      const col = k => {
        const v = pf.rows.map(r => r[k]).sort((a, b) => a - b);
        return v.length ? { median: v[v.length >> 1], min: v[0], max: v[v.length - 1], mean: v.reduce((a, b) => a + b, 0) / v.length } : null;
      };
      const secs = (performance.now() - pf.t0) / 1000;
      let glName = '';
      try {
        const g = renderer.getContext(), ext = g.getExtension('WEBGL_debug_renderer_info');
        glName = ext ? String(g.getParameter(ext.UNMASKED_RENDERER_WEBGL)) : String(g.getParameter(g.RENDERER));
      } catch (e) { glName = 'unknown'; }
      // frames: animation frames; drawn: those that drew the scene (while playing, every one)
      return { frames: pf.rows.length, drawn: pf.drawn, seconds: secs, fps: pf.rows.length / secs, steps_shown: pf.shown,
               interval: col(0), update: col(1), timeline: col(2), render: col(3), load_ms: pf.loadMs,
               heap_mb: performance.memory ? performance.memory.usedJSHeapSize / 1048576 : null,
               bodies: H.bodies.length, panes: panes.filter(p => p.shown).length,
               pixels: panes.filter(p => p.shown).map(p => Math.round(p.vp.w * p.vp.h * renderer.getPixelRatio() ** 2)), canvas: [glCanvas.width, glCanvas.height],
               renderer: glName, errors: window.flErrors.slice() };
    };
    window.flPerf = pf;
    return pf;
  })();
  const pixel = new Uint8Array(4);
  function finishGL() {
    const g = renderer.getContext();
    g.readPixels(0, 0, 1, 1, g.RGBA, g.UNSIGNED_BYTE, pixel);
  }
  // while playing, the text (slider, time, readouts) follows at most every TEXT_MS: each change
  // costs the page a layout and a repaint, a third of its CPU time per frame in software
  // rendering, and numbers changing 60 times a second cannot be read; pausing shows the frame's
  const TEXT_MS = 100;
  let textAt = -Infinity, textHeld = false;
  function show(i) {
    index = Math.max(0, Math.min(steps.length - 1, i));
    const t = performance.now();
    textHeld = playing && t - textAt < TEXT_MS;
    if (!textHeld) textAt = t;
    if (!textHeld && ui.slider.value !== String(index)) ui.slider.value = String(index);
    setText(ui.time, 'step ' + steps[index] + '   t = ' + (steps[index] * H.dt).toFixed(4) + ' s');
    const mode = colourMode();
    report.colour = mode;
    const unit = { stress: ' Pa', strain: '', displacement: ' m' }[mode];
    setText(document.getElementById('cmode'), {
      penetration: 'deepest penetration', displacement: 'displacement from the start',
      stress: 'von Mises stress (deformable)', strain: 'equivalent strain (deformable)' }[mode]);
    if (mode === 'penetration') {
      setText(document.getElementById('cmax'), ' >= ' + penLimit.toPrecision(2) + ' m (1 % of the smallest body)');
      report.colour_range = [0, penLimit];
    } else {
      const hi = H.deformable.length ? range[mode] : 0;
      setText(document.getElementById('cmax'), H.deformable.length
        ? ' ' + hi.toPrecision(3) + unit + ' (the run\'s largest)' + (mode === 'displacement' ? '; rigid: half a body size' : '')
        : ' >= half a body size');
      report.colour_range = [0, hi];
    }
    panes.forEach(p => showPane(p, steps[index]));
    if (ui.frame.value === 'follow') { follow(); placeCamera(); scaleBars(); }
    const t1 = perf ? performance.now() : 0;
    if (tlEl.style.display !== 'none') panes.forEach(p => { if (p.tl.canvas.width > 1) drawTimeline(p); });
    if (perf) perf.tl += performance.now() - t1;
    report.edges = panes[0].defs.reduce((a, e) => a + (e.edges.visible ? e.nedge : 0), 0);
    report.shown_step = steps[index];
    if (picked) describePick();
    dirty = true;
    textHeld = false;
    if (!quiet && !playing) { writeHash(); publish(); }
  }
  const dotRot = new THREE.Matrix3();
  function render() {
    camera.updateMatrixWorld();
    dotRot.setFromMatrix4(camera.matrixWorld);
    // the gaps between the panes (the drawing buffer is not kept from one frame to the next)
    renderer.setScissorTest(false);
    renderer.setClearColor(GAP);
    renderer.clear(true, false, false);
    renderer.setScissorTest(true);
    panes.forEach(p => {
      if (!p.shown) return;
      const v = p.vp, y = glH - v.y - v.h; // three's viewport: CSS pixels from the bottom left
      renderer.setViewport(v.x, y, v.w, v.h);
      renderer.setScissor(v.x, y, v.w, v.h);
      // the impostors' size: drawing-buffer pixels per metre at unit distance
      const ppm = v.h * renderer.getPixelRatio() / (2 * Math.tan(FOV / 2 * Math.PI / 180));
      p.dots.forEach(g => { g.material.uniforms.pxPerM.value = ppm; g.material.uniforms.viewToWorld.value.copy(dotRot); });
      renderer.render(p.scene, camera);
    });
  }

  //---- picking ----
  const ray = new THREE.Raycaster();
  function sideName(s) {
    return s >= 0 ? H.bodies[s].name : s === -1 ? 'world' : H.deformable[-2 - s].name;
  }
  function markAt(p, centre, radius) {
    const pts = [];
    for (let k = 0; k < 32; k++) { // a circle in the view plane
      for (const kk of [k, k + 1]) {
        const a = kk / 32 * 2 * Math.PI;
        tmpV.set(Math.cos(a) * radius, Math.sin(a) * radius, 0).applyQuaternion(camera.quaternion).add(centre);
        pts.push(tmpV.x, tmpV.y, tmpV.z);
      }
    }
    p.marker.geometry.setAttribute('position', new THREE.Float32BufferAttribute(pts, 3));
    p.marker.visible = true;
  }
  function describePick() {
    panes.forEach(p => { p.marker.visible = false; });
    const p = panes[picked.s], f = p.frame;
    if (!f) return;
    let text = '', info = { kind: picked.kind, solver: p.name, step: f.step, index: picked.i };
    if (picked.kind === 'contact') {
      const c = picked.i;
      if (c >= f.nc) { clearPick(); return; }
      const b = 13 * c, pt = vec(f.cf, b, 3), nr = vec(f.cf, b + 3, 3), im = vec(f.cf, b + 6, 3), phi = f.cf[b + 9];
      const gn = im[0] * nr[0] + im[1] * nr[1] + im[2] * nr[2];
      const gt = Math.hypot(im[0] - gn * nr[0], im[1] - gn * nr[1], im[2] - gn * nr[2]);
      const sl = (f.ci[b + 12] & 1) === 1;
      Object.assign(info, { point: pt, normal: nr, impulse: im, phi, sides: [f.ci[b + 10], f.ci[b + 11]],
                            sliding: sl, impulse_n: gn, impulse_t: gt });
      text = p.name + ', step ' + f.step + ': contact ' + c + ' of ' + f.nc + '\n' +
        sideName(f.ci[b + 10]) + ' -> ' + sideName(f.ci[b + 11]) + '\n' +
        'point    ' + vstr(pt) + ' m\nnormal   ' + vstr(nr) + '\nimpulse  ' + vstr(im) + ' N s\n' +
        'normal   ' + gn.toPrecision(5) + ' N s, tangential ' + gt.toPrecision(5) + ' N s\n' +
        'gap phi  ' + phi.toPrecision(5) + ' m (at the step\'s start)\n' + (sl ? 'sliding (on the cone\'s edge)' : 'sticking');
      markAt(p, new THREE.Vector3(...pt), 0.03 * L);
    } else if (picked.kind === 'body') {
      const i = picked.i, hb = H.bodies[i], q = vec(f.pose, BS * i, BS);
      Object.assign(info, { name: hb.name, position: q.slice(0, 3), quaternion: q.slice(3, 7),
                            velocity: BS > 7 ? q.slice(7, 10) : null, omega: BS > 7 ? q.slice(10, 13) : null });
      let nc = 0, deep = 0;
      for (let c = 0; c < f.nc; c++)
        if (f.ci[13 * c + 10] === i || f.ci[13 * c + 11] === i) { nc++; deep = Math.max(deep, -f.cf[13 * c + 9]); }
      text = p.name + ', step ' + f.step + ': body ' + i + ' "' + hb.name + '" (' + hb.kind + ' ' + hb.shape + ')\n' +
        'position ' + vstr(info.position) + ' m\nrotation ' + vstr(info.quaternion) + ' (w, x, y, z)\n' +
        (BS > 7 ? 'velocity ' + vstr(info.velocity) + ' m/s\nomega    ' + vstr(info.omega) + ' rad/s\n' : '(no velocities in a version 1 recording)\n') +
        'contacts ' + nc + ', deepest ' + fmt(deep) + ' m';
      markAt(p, new THREE.Vector3(...info.position), 0.6 * hb.size);
    } else {
      const d = H.deformable[picked.i], o = d.first;
      let vmax = 0, emax = 0, dmax = 0;
      for (let v = 0; v < d.nvert; v++) {
        if (f.vm) { vmax = Math.max(vmax, f.vm[o + v]); emax = Math.max(emax, f.eps[o + v]); }
        const a = 3 * (o + v), f0 = p.run[0];
        dmax = Math.max(dmax, Math.hypot(f.vert[a] - f0.vert[a], f.vert[a + 1] - f0.vert[a + 1], f.vert[a + 2] - f0.vert[a + 2]));
      }
      Object.assign(info, { name: d.name, von_mises_max: vmax, strain_max: emax, displacement_max: dmax });
      text = p.name + ', step ' + f.step + ': deformable "' + d.name + '" (' + d.nvert + ' vertices)\n' +
        'largest von Mises ' + fmt(vmax) + ' Pa, strain ' + fmt(emax) + '\nlargest displacement ' + fmt(dmax) + ' m';
    }
    report.picked = info;
    ui.pick.textContent = text;
    ui.pick.style.display = 'block';
    if (picked.kind !== 'contact') {
      const key = (picked.kind === 'body' ? 'b' : 'd') + picked.i;
      for (const [label, fn] of [['hide', () => hidden.add(key)], ['isolate', () => isolate(key)], ['show all', () => hidden.clear()]]) {
        const bt = document.createElement('button');
        bt.textContent = label;
        bt.addEventListener('click', () => { fn(); show(index); });
        ui.pick.appendChild(document.createElement('br'));
        ui.pick.lastChild.remove();
        ui.pick.appendChild(bt);
      }
    }
    const cl = document.createElement('button');
    cl.textContent = 'close';
    cl.addEventListener('click', () => { clearPick(); dirty = true; });
    ui.pick.appendChild(cl);
  }
  function isolate(key) {
    hidden.clear();
    H.bodies.forEach((b, i) => { if ('b' + i !== key) hidden.add('b' + i); });
    H.deformable.forEach((d, k) => { if ('d' + k !== key) hidden.add('d' + k); });
  }
  function clearPick() {
    picked = null;
    report.picked = null;
    ui.pick.style.display = 'none';
    panes.forEach(p => { p.marker.visible = false; });
    publish();
  }
  function toScreen(p, xyz) { // canvas pixels (CSS) of a world point
    tmpV.set(xyz[0], xyz[1], xyz[2]).project(camera);
    return [(tmpV.x + 1) / 2 * p.vp.w, (1 - tmpV.y) / 2 * p.vp.h];
  }
  // px, py: canvas pixels from its top left. An arrow within 6 px wins over the bodies.
  function pickAt(p, px, py) {
    let best = null, bd = 6;
    for (let k = 0; k < p.nDrawn; k++) {
      const D = p.drawnAB.subarray(6 * k, 6 * k + 6), a = toScreen(p, D), b = toScreen(p, D.subarray(3));
      const ex = b[0] - a[0], ey = b[1] - a[1], l2 = ex * ex + ey * ey;
      const t = l2 > 0 ? Math.max(0, Math.min(1, ((px - a[0]) * ex + (py - a[1]) * ey) / l2)) : 0;
      const dist = Math.hypot(a[0] + t * ex - px, a[1] + t * ey - py);
      if (dist < bd) { bd = dist; best = p.drawnC[k]; }
    }
    if (best !== null) picked = { kind: 'contact', s: p.s, i: best };
    else {
      ray.setFromCamera(new THREE.Vector2(px / p.vp.w * 2 - 1, 1 - py / p.vp.h * 2), camera);
      const objs = p.bodies.filter(b => b.mesh).map(b => b.mesh).concat(p.defs.map(e => e.mesh),
        Array.from(p.groups.values()).filter(g => !g.isPoints)).filter(m => m.visible);
      let hit = ray.intersectObjects(objs, false)[0];
      // the impostor spheres: the nearest one the ray passes through
      p.dots.forEach(g => {
        const P = g.geometry.attributes.position.array, R = g.geometry.attributes.radius.array;
        for (let k = 0; k < R.length; k++) {
          if (!(R[k] > 0)) continue;
          tmpV.set(P[3 * k], P[3 * k + 1], P[3 * k + 2]);
          const d = ray.ray.distanceSqToPoint(tmpV);
          if (d > R[k] * R[k]) continue;
          const along = tmpV.sub(ray.ray.origin).dot(ray.ray.direction) - Math.sqrt(R[k] * R[k] - d);
          if (along > 0 && (!hit || along < hit.distance)) hit = { distance: along, object: g, instanceId: k };
        }
      });
      if (!hit) { clearPick(); dirty = true; return null; }
      const u = hit.object.userData;
      picked = u.def !== undefined ? { kind: 'def', s: p.s, i: u.def }
        : { kind: 'body', s: p.s, i: u.inst ? u.inst[hit.instanceId] : u.body };
    }
    describePick();
    dirty = true;
    publish();
    return picked;
  }

  //---- the address: the view, to share it ----
  function writeHash() {
    const q = new URLSearchParams();
    q.set('step', String(steps[index]));
    q.set('az', orbit.az.toFixed(3));
    q.set('el', orbit.el.toFixed(3));
    if (orbit.zoom !== 1) q.set('zoom', orbit.zoom.toPrecision(3));
    q.set('colour', ui.colour.value);
    if (ui.frame.value !== 'run') q.set('frame', ui.frame.value);
    if (ui.exag.value !== '1') q.set('exag', ui.exag.value);
    if (ui.edges.checked) q.set('edges', '1');
    if (!ui.grid.checked) q.set('grid', '0');
    if (!ui.arrows.checked) q.set('arrows', '0');
    if (hidden.size) q.set('hide', Array.from(hidden).join(','));
    if (panes.some(p => !p.shown)) q.set('panes', panes.filter(p => p.shown).map(p => p.name).join(','));
    try { history.replaceState(null, '', '#' + q.toString()); } catch (e) { /* a file: page may refuse */ }
  }

  function tick(now) {
    const t0 = perf ? performance.now() : 0;
    if (perf) perf.tl = 0;
    if (playing) {
      if (last !== null) simTime += (now - last) / 1000 * Number(ui.speed.value);
      last = now;
      let i = index;
      while (i + 1 < steps.length && steps[i + 1] * H.dt <= simTime) i++;
      if (perf && i === steps.length - 1 && index === i) { i = 0; simTime = 0; } // #perf plays in a loop
      if (i !== index) { show(i); if (perf) perf.shown++; }
      if (index === steps.length - 1 && !perf) { playing = false; ui.play.textContent = 'play'; show(index); }
    }
    if (sizeDue) { sizeDue = false; resize(); dirty = true; }
    const t1 = perf ? performance.now() : 0, drew = dirty;
    if (dirty) { render(); dirty = false; if (perf && perf.sync) finishGL(); }
    if (perf) perf.frame(now, t1 - t0 - perf.tl, perf.tl, performance.now() - t1, drew);
    requestAnimationFrame(tick);
  }

  ui.play.addEventListener('click', () => {
    playing = !playing;
    if (playing && index === steps.length - 1) show(0);
    simTime = steps[index] * H.dt;
    last = null;
    ui.play.textContent = playing ? 'pause' : 'play';
    if (!playing) show(index); // the text of the frame shown, held while playing
  });
  ui.slider.addEventListener('input', () => { show(Number(ui.slider.value)); simTime = steps[index] * H.dt; });
  for (const k of ['colour', 'arrows', 'exag', 'edges']) ui[k].addEventListener('change', () => show(index));
  ui.grid.addEventListener('change', () => {
    panes.forEach(p => { p.grid.visible = p.axes.visible = ui.grid.checked; });
    show(index);
  });
  function reframe() {
    if (ui.frame.value === 'start') fitBox(box0, 1.38); else fitBox(boxRun);
    if (ui.frame.value === 'follow') follow();
    placeCamera();
    scaleBars();
  }
  ui.frame.addEventListener('change', () => { reframe(); show(index); });
  ui.view.addEventListener('change', () => {
    const v = AXIS_VIEW[ui.view.value];
    if (v) { orbit.az = v[0]; orbit.el = v[1]; placeCamera(); show(index); }
  });
  window.addEventListener('keydown', e => {
    if (e.target && e.target.tagName === 'SELECT') return;
    if (e.code === 'Space') { ui.play.click(); e.preventDefault(); }
    else if (e.key === ',' || e.key === 'ArrowLeft') { show(index - 1); simTime = steps[index] * H.dt; e.preventDefault(); }
    else if (e.key === '.' || e.key === 'ArrowRight') { show(index + 1); simTime = steps[index] * H.dt; e.preventDefault(); }
    else if (e.key === 'Home') show(0);
    else if (e.key === 'End') show(steps.length - 1);
    else if (e.key === 'Escape') { clearPick(); dirty = true; }
  });
  window.addEventListener('resize', () => { resize(); dirty = true; });
  // and when a pane changes size without the window (the timeline or legend laid out, a pane shown)
  // (re-sized at the next animation frame: re-sizing inside the observer's callback makes it
  // report a loop as an error)
  if (window.ResizeObserver) {
    const ro = new ResizeObserver(() => { sizeDue = true; });
    panes.forEach(p => ro.observe(p.el));
  }
  // orbit: drag to turn, wheel to zoom, on any pane (the camera is shared); a click picks
  let drag = null;
  panes.forEach(p => {
    p.canvas.addEventListener('pointerdown', e => { drag = { x: e.clientX, y: e.clientY, x0: e.clientX, y0: e.clientY }; p.canvas.setPointerCapture(e.pointerId); });
    p.canvas.addEventListener('pointermove', e => {
      if (!drag) return;
      orbit.az -= 0.008 * (e.clientX - drag.x);
      orbit.el = Math.max(-Math.PI / 2, Math.min(Math.PI / 2, orbit.el + 0.008 * (e.clientY - drag.y)));
      drag.x = e.clientX;
      drag.y = e.clientY;
      ui.view.value = '';
      placeCamera();
      dirty = true;
    });
    p.canvas.addEventListener('pointerup', e => {
      if (drag && Math.hypot(e.clientX - drag.x0, e.clientY - drag.y0) < 4) {
        const r = p.canvas.getBoundingClientRect();
        pickAt(p, e.clientX - r.left, e.clientY - r.top);
      }
      drag = null;
      writeHash();
    });
    p.canvas.addEventListener('wheel', e => {
      orbit.zoom *= Math.exp(0.001 * e.deltaY);
      placeCamera();
      scaleBars();
      dirty = true;
      clearTimeout(p.wheelT);
      p.wheelT = setTimeout(writeHash, 300);
      e.preventDefault();
    }, { passive: false });
  });

  // The address: #step=N (the recorded step at or below N), colour=, az=&el= (radians),
  // zoom= (distance over the framing's), frame=run|start|follow, view=x|y|z, exag=, edges=1,
  // grid=0, arrows=0, hide=b0,d1, panes=name,name, play, pick=c:S:C (contact C of pane S, picked
  // by a click at its arrow's middle) or pick=b:S:I (body I), bench=N (N frames, timed)
  const hash = new URLSearchParams(location.hash.slice(1));
  const opt = (k, el) => { if (hash.get(k) !== null && Array.from(el.options).some(o => o.value === hash.get(k))) el.value = hash.get(k); };
  if (H.deformable.length && report.version >= 2) ui.colour.value = 'stress';
  opt('colour', ui.colour);
  opt('frame', ui.frame);
  opt('exag', ui.exag);
  opt('speed', ui.speed);
  if (hash.get('edges') === '1') ui.edges.checked = true;
  if (hash.get('grid') === '0') { ui.grid.checked = false; panes.forEach(p => { p.grid.visible = p.axes.visible = false; }); }
  if (hash.get('arrows') === '0') ui.arrows.checked = false;
  if (hash.get('timeline') === '0') tlEl.style.display = 'none';
  (hash.get('hide') || '').split(',').filter(x => /^[bd]\d+$/.test(x)).forEach(x => hidden.add(x));
  if (hash.get('panes')) {
    const want = hash.get('panes').split(',');
    panes.forEach(p => { p.shown = want.includes(p.name); if (p.check) p.check.checked = p.shown; });
    if (!panes.some(p => p.shown)) panes.forEach(p => { p.shown = true; if (p.check) p.check.checked = true; });
  }
  const axis = hash.get('view') || H.view_axis || '';
  report.view_axis = AXIS_VIEW[axis] ? axis : '';
  if (AXIS_VIEW[axis]) { orbit.az = AXIS_VIEW[axis][0]; orbit.el = AXIS_VIEW[axis][1]; ui.view.value = axis; }
  for (const key of ['az', 'el'])
    if (hash.get(key) !== null && Number.isFinite(Number(hash.get(key)))) { orbit[key] = Number(hash.get(key)); ui.view.value = ''; }
  orbit.el = Math.max(-Math.PI / 2, Math.min(Math.PI / 2, orbit.el));
  if (Number(hash.get('zoom')) > 0) orbit.zoom = Number(hash.get('zoom'));
  let start = 0;
  if (hash.get('step') !== null) {
    const want = Number(hash.get('step'));
    while (start + 1 < steps.length && steps[start + 1] <= want) start++;
  }
  quiet = true;
  layout();
  index = start;
  reframe();
  show(start);
  render();
  dirty = false;
  quiet = false;
  const pk = /^([cb]):(\d+):(\d+)$/.exec(hash.get('pick') || '');
  if (pk) {
    const p = panes[Number(pk[2])];
    if (!p) report.pick_error = 'no pane ' + pk[2];
    else if (pk[1] === 'c') {
      const k = p.drawnC.subarray(0, p.nDrawn).indexOf(Number(pk[3]));
      if (k < 0) report.pick_error = 'contact ' + pk[3] + ' has no arrow drawn at this step';
      else {
        const a = toScreen(p, p.drawnAB.subarray(6 * k, 6 * k + 3)), b = toScreen(p, p.drawnAB.subarray(6 * k + 3, 6 * k + 6));
        pickAt(p, (a[0] + b[0]) / 2, (a[1] + b[1]) / 2);
      }
    } else {
      picked = { kind: 'body', s: p.s, i: Number(pk[3]) };
      if (picked.i < H.bodies.length) describePick(); else report.pick_error = 'no body ' + pk[3];
    }
    render();
  }
  if (Number(hash.get('bench')) > 0) {
    // n frames of stepping and drawing every pane, finished on the GPU (a pixel read back)
    const n = Number(hash.get('bench')), px = new Uint8Array(4);
    quiet = true;
    const t0 = performance.now();
    let tShow = 0;
    for (let k = 0; k < n; k++) {
      const a = performance.now();
      show((start + k) % steps.length);
      tShow += performance.now() - a;
      render();
      const g = renderer.getContext();
      g.readPixels(0, 0, 1, 1, g.RGBA, g.UNSIGNED_BYTE, px);
    }
    report.bench = { frames: n, ms_per_frame: (performance.now() - t0) / n, ms_update: tShow / n,
                     pixels: panes.filter(p => p.shown).map(p => Math.round(p.vp.w * p.vp.h * renderer.getPixelRatio() ** 2)) };
    quiet = false;
    show(start);
    render();
  }
  // #poses=1: every body's pose as drawn, read back from what three.js draws (a mesh's
  // position and rotation, an instance's matrix, an impostor's centre and radius), per pane
  if (hash.get('poses') === '1') {
    const m4 = new THREE.Matrix4();
    report.drawn = panes.map(p => ({ solver: p.name, step: p.frame ? p.frame.step : -1, bodies: p.bodies.map((b, i) => {
      if (b.inst && b.inst.isPoints) {
        const a = b.inst.geometry.attributes, k = b.slot;
        return { i, how: 'dot', p: Array.from(a.position.array.subarray(3 * k, 3 * k + 3)), q: null, s: [a.radius.array[k], a.radius.array[k], a.radius.array[k]] };
      }
      if (b.inst) {
        b.inst.getMatrixAt(b.slot, m4);
        m4.decompose(tmpV, tmpQ, tmpS);
        return { i, how: 'instance', p: tmpV.toArray(), q: [tmpQ.w, tmpQ.x, tmpQ.y, tmpQ.z], s: tmpS.toArray() };
      }
      const m = b.mesh;
      return { i, how: 'mesh', p: m.position.toArray(), q: [m.quaternion.w, m.quaternion.x, m.quaternion.y, m.quaternion.z], s: m.scale.toArray(), visible: m.visible };
    }) }));
  }
  report.ok = window.flErrors.length === 0;
  publish();
  if (hash.has('play')) ui.play.click();
  if (perf) { perf.loadMs = performance.now(); perf.ready = true; perf.reset(); }
  requestAnimationFrame(tick);
})();
