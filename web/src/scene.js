// The 3D view: one mesh per body from the server's surfaces, posed by each
// frame; the proxy, the device's goal (ghost), the coupling force and the
// contacts. Z is up, as in tessera's scenes.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

THREE.Object3D.DEFAULT_UP.set(0, 0, 1);

const KIND_COLOURS = {
  static: 0x6f757c,
  dynamic: 0x9c7c5c,
  breakable: 0xe9e4d8,
};

// The stress colour map (σ₁/R_c from 0 to 1 and above): a diverging
// blue–grey–red ramp, as the legend shows.
const STRESS_STOPS = [0x3b4cc0, 0x8db0fe, 0xdddddd, 0xf49a7b, 0xb40426].map((c) => new THREE.Color(c));

function stressColour(ratio, into) {
  const x = Math.min(Math.max(ratio, 0), 1) * (STRESS_STOPS.length - 1);
  const i = Math.min(Math.floor(x), STRESS_STOPS.length - 2);
  return into.copy(STRESS_STOPS[i]).lerp(STRESS_STOPS[i + 1], x - i);
}

// Fragments get distinct hues: the golden-angle sequence over their ids.
function fragmentColour(id) {
  const hue = (id * 0.618033988749895) % 1;
  return new THREE.Color().setHSL(hue, 0.55, 0.68);
}

export class SceneView {
  constructor(container, { software = false } = {}) {
    this.container = container;
    this.software = software;
    // A software rasteriser (SwiftShader, as in headless browsers) gets no
    // multisampling, no shadow maps and Lambert instead of physically based
    // shading, which cost it most; fog and lighting still give depth.
    this.renderer = new THREE.WebGLRenderer({ antialias: !software, powerPreference: "high-performance" });
    this.renderer.setPixelRatio(software ? 1 : Math.min(window.devicePixelRatio, 2));
    this.renderer.shadowMap.enabled = !software;
    this.renderer.shadowMap.type = THREE.PCFShadowMap;
    container.appendChild(this.renderer.domElement);

    this.scene = new THREE.Scene();
    this.scene.background = new THREE.Color(0x2b3036);
    this.scene.fog = new THREE.Fog(0x2b3036, 10, 40);
    this.camera = new THREE.PerspectiveCamera(40, 1, 0.005, 100);
    this.camera.position.set(0.6, -0.9, 0.6);
    this.controls = new OrbitControls(this.camera, this.renderer.domElement);
    this.controls.enableDamping = true;
    // Drawn only when something changed (each method below that changes
    // what is shown sets it; the camera is read at each draw): a software
    // rasteriser drawing an unchanged scene every animation frame takes a
    // core from the server on the same machine.
    this.dirty = true;

    this.scene.add(new THREE.HemisphereLight(0xdde6f0, 0x3a3228, 0.9));
    this.sun = new THREE.DirectionalLight(0xffffff, 2.0);
    this.sun.castShadow = true;
    this.sun.shadow.mapSize.set(2048, 2048);
    this.scene.add(this.sun, this.sun.target);

    this.bodies = new Map(); // id → { mesh, body }
    this.proxyId = null;
    this.framed = false;
    this.sceneSize = 1;

    // The device's goal for the proxy, and the coupling force on the proxy.
    this.ghost = new THREE.Mesh(
      new THREE.SphereGeometry(1, 16, 10),
      new THREE.MeshBasicMaterial({ color: 0x6fc3ff, wireframe: true, transparent: true, opacity: 0.35, depthWrite: false }),
    );
    this.ghost.visible = false;
    this.arrow = new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 0.1, 0xffb347);
    this.arrow.visible = false;
    this.contacts = new THREE.Group();
    this.scene.add(this.ghost, this.arrow, this.contacts);
    this.show = { contacts: true, force: true, ghost: true, stress: false };

    this.resize();
    new ResizeObserver(() => this.resize()).observe(container);
  }

  resize() {
    const { clientWidth: w, clientHeight: h } = this.container;
    if (w === 0 || h === 0) return;
    this.renderer.setSize(w, h, false);
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
    this.dirty = true;
  }

  // Everything from a `scene` message (also after a restart).
  reset(message) {
    this.dirty = true;
    for (const { mesh } of this.bodies.values()) this.remove(mesh);
    this.bodies.clear();
    this.proxyId = message.status?.proxy ?? null;
    this.framed = false;
    for (const body of message.bodies) this.add(body);
    for (const body of message.bodies) if (body.pose) this.pose(body.pose);
    this.frameCamera();
  }

  add(body) {
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', new THREE.Float32BufferAttribute(body.points_m.flat(), 3));
    // Crack surfaces last, drawn with the second material (highlighted).
    const crack = new Set(body.crack_triangles ?? []);
    const outer = body.triangles.filter((_, i) => !crack.has(i));
    const cracked = body.triangles.filter((_, i) => crack.has(i));
    geometry.setIndex([...outer, ...cracked].flat());
    geometry.addGroup(0, outer.length * 3, 0);
    geometry.addGroup(outer.length * 3, cracked.length * 3, 1);
    geometry.computeVertexNormals();
    geometry.computeBoundingSphere();
    const isProxy = body.id === this.proxyId;
    const colour = isProxy ? 0x8fa8c8
      : body.parent !== null ? fragmentColour(body.id)
        : KIND_COLOURS[body.kind] ?? 0xaaaaaa;
    const material = this.software
      ? new THREE.MeshLambertMaterial({ color: colour, flatShading: !isProxy })
      : new THREE.MeshStandardMaterial({
        color: colour,
        roughness: isProxy ? 0.25 : 0.6,
        metalness: isProxy ? 0.8 : 0.0,
        flatShading: !isProxy,
      });
    // Crack faces: the body's colour, lighter and glowing a little, as
    // fresh fracture surfaces look against glazed ones.
    const crackMaterial = material.clone();
    crackMaterial.color = new THREE.Color(colour).lerp(new THREE.Color(0xffffff), 0.55);
    crackMaterial.emissive = new THREE.Color(0x3a2a10);
    const mesh = new THREE.Mesh(geometry, [material, crackMaterial]);
    mesh.userData.colour = new THREE.Color(colour);
    mesh.userData.crackColour = crackMaterial.color.clone();
    mesh.castShadow = body.kind !== 'static';
    mesh.receiveShadow = true;
    mesh.matrixAutoUpdate = true;
    mesh.userData.body = body;
    this.scene.add(mesh);
    this.bodies.set(body.id, { mesh, body, stress: null });
    if (body.stress_ratio) this.setStress(body.id, body.stress_ratio);
    if (isProxy) {
      this.ghost.scale.setScalar(geometry.boundingSphere.radius);
    }
  }

  // A `stress` message: σ₁/R_c per surface point of a breakable body.
  setStress(id, ratio) {
    const entry = this.bodies.get(id);
    if (!entry || ratio.length * 3 !== entry.mesh.geometry.attributes.position.array.length) return;
    entry.stress = ratio;
    const colours = new Float32Array(ratio.length * 3);
    const c = new THREE.Color();
    ratio.forEach((r, i) => stressColour(r, c).toArray(colours, i * 3));
    entry.mesh.geometry.setAttribute('color', new THREE.BufferAttribute(colours, 3));
    this.paint(entry);
    this.dirty = true;
  }

  // The stress map on a body that has one, when shown; its own colour otherwise.
  paint(entry) {
    const mapped = this.show.stress && entry.stress !== null;
    const { colour, crackColour } = entry.mesh.userData;
    entry.mesh.material.forEach((material, i) => {
      if (material.vertexColors !== mapped) {
        material.vertexColors = mapped;
        material.needsUpdate = true;
      }
      material.color.copy(mapped ? new THREE.Color(0xffffff) : i === 0 ? colour : crackColour);
    });
  }

  setShowStress(on) {
    this.show.stress = on;
    for (const entry of this.bodies.values()) this.paint(entry);
    this.dirty = true;
  }

  // Shows or hides the contacts, the force arrow or the ghost (from the
  // next frame or sample on).
  setShown(key, on) {
    this.show[key] = on;
    this.dirty = true;
  }

  stressBodies() {
    return [...this.bodies.values()].filter((e) => e.stress !== null).length;
  }

  remove(mesh) {
    this.scene.remove(mesh);
    mesh.geometry.dispose();
    for (const material of mesh.material) material.dispose();
  }

  pose(p) {
    const entry = this.bodies.get(p.id);
    if (!entry) return;
    const [w, x, y, z] = p.orientation_wxyz;
    entry.mesh.position.set(...p.position_m);
    entry.mesh.quaternion.set(x, y, z, w);
  }

  // A `frame` message: bodies added before those removed (a frame can
  // hold a fragment that appeared and broke again), then every pose.
  frame(message) {
    this.dirty = true;
    for (const body of message.added) this.add(body);
    for (const id of message.removed) {
      const entry = this.bodies.get(id);
      if (entry) {
        this.remove(entry.mesh);
        this.bodies.delete(id);
      }
    }
    for (const p of message.poses) this.pose(p);
    this.setContacts(message.contacts ?? []);
    if (!this.framed) this.frameCamera();
  }

  setContacts(contacts) {
    for (const child of this.contacts.children) child.dispose?.();
    this.contacts.clear();
    if (!this.show.contacts) return;
    const largest = contacts.reduce((m, c) => Math.max(m, c.impulse_n_s), 1e-9);
    const size = this.sceneSize * 0.08;
    for (const c of contacts) {
      const length = Math.max(size * (c.impulse_n_s / largest), size * 0.1);
      const arrow = new THREE.ArrowHelper(
        new THREE.Vector3(...c.normal), new THREE.Vector3(...c.point_m), length, 0x7cfc9a,
        length * 0.3, length * 0.15,
      );
      this.contacts.add(arrow);
    }
  }

  // The newest haptic-rate sample: the ghost at the device's goal and the
  // coupling force as an arrow at the proxy.
  signal(sample) {
    this.dirty = true;
    this.ghost.visible = this.show.ghost && this.proxyId !== null;
    this.ghost.position.set(...sample.goal_position_m);
    const force = new THREE.Vector3(...sample.coupling_force_n).negate();
    const magnitude = force.length();
    this.arrow.visible = this.show.force && magnitude > 1e-3;
    if (this.arrow.visible) {
      // 10 N per scene size, so the arrow stays readable at any scale.
      const length = Math.min(magnitude / 10, 1) * this.sceneSize * 0.4 + 1e-4;
      this.arrow.position.set(...sample.proxy_position_m);
      this.arrow.setDirection(force.normalize());
      this.arrow.setLength(length, length * 0.25, length * 0.12);
    }
  }

  // Frames the camera and the shadow on the moving and breakable bodies
  // (a ground plane would dwarf them), or on everything if there are none.
  frameCamera() {
    const box = new THREE.Box3();
    for (const { mesh, body } of this.bodies.values()) {
      if (body.kind !== 'static') box.expandByObject(mesh);
    }
    if (box.isEmpty()) {
      for (const { mesh } of this.bodies.values()) box.expandByObject(mesh);
    }
    if (box.isEmpty()) return;
    const centre = box.getCenter(new THREE.Vector3());
    const size = Math.max(box.getSize(new THREE.Vector3()).length(), 0.05);
    this.sceneSize = size;
    this.controls.target.copy(centre);
    this.camera.position.copy(centre).add(new THREE.Vector3(0.55, -0.95, 0.65).multiplyScalar(size * 1.3));
    this.camera.near = size * 0.01;
    this.camera.far = size * 50;
    this.camera.updateProjectionMatrix();
    this.scene.fog.near = size * 4;
    this.scene.fog.far = size * 30;
    this.sun.position.copy(centre).add(new THREE.Vector3(0.4, -0.3, 1).multiplyScalar(size * 2));
    this.sun.target.position.copy(centre);
    const shadow = this.sun.shadow.camera;
    shadow.left = shadow.bottom = -size;
    shadow.right = shadow.top = size;
    shadow.near = size * 0.1;
    shadow.far = size * 6;
    shadow.updateProjectionMatrix();
    // Against shadow acne on curved surfaces: offset along the normal by
    // about one shadow-map texel.
    this.sun.shadow.normalBias = (2 * size) / this.sun.shadow.mapSize.x;
    this.framed = true;
  }

  // Draws the scene if it changed since the last draw (the camera still
  // moving under damping counts); returns whether it drew.
  render() {
    const moved = this.controls.update();
    if (!moved && !this.dirty) return false;
    this.dirty = false;
    this.renderer.render(this.scene, this.camera);
    return true;
  }
}
