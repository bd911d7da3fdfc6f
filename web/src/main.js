// The tessera viewer page: connects to the session's WebSocket
// (docs/viewer.md), draws the scene, the plots and the fracture list, and
// sends the session controls. `?view=participant` shows only the scene and
// the prompt, and forwards key presses as answers.
import './style.css';
import { SceneView } from './scene.js';
import { Plots } from './plots.js';

const params = new URLSearchParams(location.search);
const token = params.get('token');
const participant = params.get('view') === 'participant';
document.body.classList.toggle('participant', participant);

// `?renderer=software` or a SwiftShader context: the cheaper settings.
function softwareRenderer() {
  if (params.get('renderer')) return params.get('renderer') === 'software';
  const gl = document.createElement('canvas').getContext('webgl2');
  const info = gl?.getExtension('WEBGL_debug_renderer_info');
  const name = info ? gl.getParameter(info.UNMASKED_RENDERER_WEBGL) : '';
  return /swiftshader|llvmpipe|software/i.test(name);
}
const view = new SceneView(document.getElementById('scene'), { software: softwareRenderer() });
const plots = participant ? null : new Plots();
const connection = document.getElementById('connection');
const statusList = document.getElementById('status');
const fractureRows = document.querySelector('#fractures tbody');
const prompt = document.getElementById('prompt');
const controls = document.getElementById('controls');
const timeline = document.getElementById('timeline');
const clock = document.getElementById('clock');
const playButton = document.getElementById('play');
const speedSelect = document.getElementById('speed');

// What the page knows; `window.tessera` exposes it to tests and the console.
const state = {
  status: null,
  time_s: 0,
  frames: 0,
  scenes: 0,
  fractures: [],
  fps: 0,
  // Draw every animation frame, changed or not (tools/viewer_fps.sh
  // measures the drawing rate the page can reach).
  continuous: false,
  lastError: null,
  answers: [],
  bodies: () => view.bodies.size,
  stressBodies: () => view.stressBodies(),
  contacts: () => view.contacts.children.length,
  bodyIds: () => [...view.bodies.keys()].sort((a, b) => a - b),
};
window.tessera = state;

let socket = null;
let seeking = false;

function connect() {
  const url = new URL('ws', location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  if (token) url.searchParams.set('token', token);
  socket = new WebSocket(url);
  socket.onopen = () => { connection.textContent = 'connected'; };
  socket.onclose = () => {
    connection.textContent = state.status?.finished ? 'session ended' : 'disconnected; retrying…';
    setTimeout(connect, 1000);
  };
  socket.onmessage = (event) => receive(JSON.parse(event.data));
}

function send(message) {
  if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
}

function receive(message) {
  switch (message.type) {
    case 'scene':
      state.scenes += 1;
      state.time_s = message.time_s;
      state.fractures = [...message.fractures];
      view.reset(message);
      plots?.clear();
      showStatus(message.status);
      showFractures();
      break;
    case 'frame':
      state.frames += 1;
      state.time_s = message.time_s;
      view.frame(message);
      if (message.fractures.length) {
        state.fractures.push(...message.fractures);
        showFractures();
      }
      showClock();
      break;
    case 'signals':
      plots?.add(message.samples);
      if (message.samples.length) view.signal(message.samples.at(-1));
      break;
    case 'status':
      showStatus(message);
      break;
    case 'stress':
      view.setStress(message.id, message.ratio);
      break;
    case 'prompt':
      prompt.hidden = !message.text;
      prompt.textContent = message.text;
      prompt.classList.remove('answered');
      break;
    case 'answer':
      state.answers.push(message);
      prompt.classList.add('answered');
      break;
    case 'error':
      state.lastError = message.message;
      console.warn('tessera:', message.message);
      break;
    default:
      break;
  }
}

// A lockstep session's clock stands still while it waits at a sync for
// its fragments' own modal bases (seconds each).
function sessionState(status) {
  if (status.finished) return 'finished';
  if (status.paused) return 'paused';
  if (status.mode === 'lockstep' && status.analysing > 0) {
    return `waiting for ${status.analysing} fragment ${status.analysing === 1 ? 'analysis' : 'analyses'}`;
  }
  return 'running';
}

function showStatus(status) {
  state.status = status;
  const rows = [
    ['mode', status.mode],
    ['scene', status.scene],
    ['device', status.device],
    ['time', `${(status.ticks / 1000).toFixed(2)} / ${status.seconds.toFixed(2)} s`],
    ['real time', status.realtime ?? '—'],
    ['safety trips', status.safety_trips],
    ['late syncs', status.late_syncs],
    ['viewers', status.clients],
    ['fragment analyses', status.analysing],
    ['state', sessionState(status)],
  ];
  statusList.replaceChildren(...rows.flatMap(([k, v]) => {
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    dd.textContent = String(v);
    return [dt, dd];
  }));
  // Controls are for sessions without a hand in the loop.
  controls.hidden = participant || !status.controls;
  timeline.max = String(status.seconds);
  playButton.textContent = status.paused ? 'play' : 'pause';
  const speed = status.speed === null ? 'max' : String(status.speed);
  if (document.activeElement !== speedSelect && [...speedSelect.options].some((o) => o.value === speed)) {
    speedSelect.value = speed;
  }
  showClock();
}

function showClock() {
  clock.textContent = `${state.time_s.toFixed(3)} s`;
  if (!seeking) timeline.value = String(state.time_s);
}

function showFractures() {
  fractureRows.replaceChildren(...state.fractures.map((f) => {
    const row = document.createElement('tr');
    for (const value of [f.time_s.toFixed(3), f.body, f.fragments.length, (f.crack_area_m2 * 1e4).toFixed(1)]) {
      const cell = document.createElement('td');
      cell.textContent = String(value);
      row.append(cell);
    }
    return row;
  }));
}

playButton.onclick = () => send({ type: state.status?.paused ? 'resume' : 'pause' });
document.getElementById('step').onclick = () => send({ type: 'step' });
document.getElementById('restart').onclick = () => send({ type: 'restart' });
document.getElementById('reset').onclick = () => send({ type: 'reset' });
speedSelect.onchange = () => {
  const value = speedSelect.value;
  send({ type: 'speed', factor: value === 'max' ? null : Number(value) });
};
timeline.oninput = () => {
  seeking = true;
  clock.textContent = `→ ${Number(timeline.value).toFixed(3)} s`;
};
timeline.onchange = () => {
  seeking = false;
  send({ type: 'seek', time_s: Number(timeline.value) });
};

for (const [id, key] of [['show-contacts', 'contacts'], ['show-force', 'force'], ['show-ghost', 'ghost']]) {
  const box = document.getElementById(id);
  box.onchange = () => view.setShown(key, box.checked);
}
const stressBox = document.getElementById('show-stress');
stressBox.onchange = () => {
  view.setShowStress(stressBox.checked);
  document.getElementById('stress-legend').hidden = !stressBox.checked;
};

document.addEventListener('keydown', (event) => {
  if (event.repeat || event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) return;
  if (participant) {
    // The study runner reads answers from the session's controls.
    send({ type: 'answer', key: event.key });
    event.preventDefault();
  } else if (event.key === ' ' && !controls.hidden) {
    playButton.click();
    event.preventDefault();
  } else if (event.key === '.' && !controls.hidden) {
    send({ type: 'step' });
  }
});

// Draw at most once per animation frame, and only what changed; count the
// draws for the page's frame rate.
let frames = 0;
let since = performance.now();
function animate(now) {
  if (state.continuous) view.dirty = true;
  if (view.render()) frames += 1;
  if (now - since >= 1000) {
    state.fps = (frames * 1000) / (now - since);
    frames = 0;
    since = now;
  }
  requestAnimationFrame(animate);
}
requestAnimationFrame(animate);
if (plots) setInterval(() => plots.draw(), 100);
connect();
