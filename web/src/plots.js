// Live plots of the haptic-rate signals (uPlot): the last PLOT_SECONDS of
// coupling force, tick period error and compute, and late syncs per second.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

const PLOT_SECONDS = 10;
const AXIS = { stroke: '#8b949e', grid: { stroke: '#353b43' }, ticks: { stroke: '#353b43' } };

function chart(element, series) {
  const options = {
    width: element.clientWidth || 320,
    height: 120,
    legend: { show: true, live: false },
    cursor: { show: false },
    scales: { x: { time: false } },
    axes: [{ ...AXIS }, { ...AXIS, size: 56 }],
    series: [{ label: 't (s)' }, ...series],
  };
  const plot = new uPlot(options, [[], ...series.map(() => [])], element);
  new ResizeObserver(() => plot.setSize({ width: element.clientWidth, height: options.height }))
    .observe(element);
  return plot;
}

export class Plots {
  constructor() {
    this.force = chart(document.getElementById('plot-force'), [
      { label: '|F|', stroke: '#ffb347', width: 1.5 },
    ]);
    this.tick = chart(document.getElementById('plot-tick'), [
      { label: 'period error', stroke: '#6fc3ff', width: 1 },
      { label: 'compute', stroke: '#7cfc9a', width: 1 },
    ]);
    this.sync = chart(document.getElementById('plot-sync'), [
      { label: 'late syncs/s', stroke: '#ff7b72', width: 1.5 },
    ]);
    this.clear();
  }

  clear() {
    this.t = [];
    this.f = [];
    this.error = [];
    this.compute = [];
    this.lateTimes = [];
    this.late = [];
    this.lastLate = null;
    this.dirty = true;
  }

  add(samples) {
    for (const s of samples) {
      const [fx, fy, fz] = s.coupling_force_n;
      this.t.push(s.time_s);
      this.f.push(Math.hypot(fx, fy, fz));
      this.error.push(s.period_us - 1000);
      this.compute.push(s.compute_us);
      // Late syncs arrive as a running count: a rate over each second.
      if (this.lastLate === null || s.time_s - this.lastLate.time_s >= 1) {
        if (this.lastLate !== null) {
          this.lateTimes.push(s.time_s);
          this.late.push((s.late_syncs - this.lastLate.count) / (s.time_s - this.lastLate.time_s));
        }
        this.lastLate = { time_s: s.time_s, count: s.late_syncs };
      }
    }
    const newest = this.t.at(-1) ?? 0;
    let drop = 0;
    while (drop < this.t.length && this.t[drop] < newest - PLOT_SECONDS) drop++;
    if (drop > 0) {
      for (const a of [this.t, this.f, this.error, this.compute]) a.splice(0, drop);
    }
    while (this.lateTimes.length && this.lateTimes[0] < newest - PLOT_SECONDS) {
      this.lateTimes.shift();
      this.late.shift();
    }
    this.dirty = true;
  }

  // Redraws at most as often as it is called (the page calls it 10 times a second).
  draw() {
    if (!this.dirty) return;
    this.dirty = false;
    this.force.setData([this.t, this.f]);
    this.tick.setData([this.t, this.error, this.compute]);
    this.sync.setData([this.lateTimes, this.late]);
  }
}
