//! Statistics of the haptic loop, kept in fixed histograms so that the
//! haptic thread records a tick without allocating.

use serde::Serialize;

/// Bins of 1 µs up to 20 ms; slower values land in the last bin (the
/// exact maximum is kept beside it).
const BINS: usize = 20_000;

/// A histogram of durations in microseconds.
#[derive(Clone)]
pub(super) struct Histogram {
    counts: Box<[u32; BINS]>,
    total: u64,
    max_us: f64,
    sum_us: f64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self {
            counts: Box::new([0; BINS]),
            total: 0,
            max_us: 0.0,
            sum_us: 0.0,
        }
    }
}

impl Histogram {
    /// Adds one value (µs).
    pub(super) fn record(&mut self, us: f64) {
        let us = us.max(0.0);
        let bin = (us as usize).min(BINS - 1);
        self.counts[bin] += 1;
        self.total += 1;
        self.sum_us += us;
        if us > self.max_us {
            self.max_us = us;
        }
    }

    /// The value below which a fraction `q` of the values lie, to the 1 µs
    /// bin (the bin's lower edge; the exact maximum in the last bin).
    pub(super) fn quantile(&self, q: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0u64;
        for (bin, &count) in self.counts.iter().enumerate() {
            seen += u64::from(count);
            if seen >= rank {
                return if bin == BINS - 1 {
                    self.max_us
                } else {
                    (bin as f64).min(self.max_us)
                };
            }
        }
        self.max_us
    }

    /// How many values were recorded.
    pub(super) fn total(&self) -> u64 {
        self.total
    }

    /// How many values exceed `us`.
    pub(super) fn count_over(&self, us: f64) -> u64 {
        let first = (us.max(0.0) as usize + 1).min(BINS);
        self.counts[first..].iter().map(|&c| u64::from(c)).sum()
    }

    /// The distribution's summary.
    pub(super) fn summary(&self) -> Distribution {
        Distribution {
            p50: self.quantile(0.5),
            p99: self.quantile(0.99),
            max: self.max_us,
            mean: if self.total > 0 {
                self.sum_us / self.total as f64
            } else {
                0.0
            },
        }
    }
}

/// p50, p99, max and mean of a histogram (µs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Distribution {
    /// Median (µs).
    pub p50: f64,
    /// 99th percentile (µs).
    pub p99: f64,
    /// Largest (µs).
    pub max: f64,
    /// Mean (µs).
    pub mean: f64,
}

/// What the haptic loop measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoopStats {
    /// Ticks run.
    pub ticks: u64,
    /// How late each tick started after its deadline (µs); zero in lockstep.
    pub period_error_us: Distribution,
    /// Time from reading the device to the tick record (µs).
    pub compute_us: Distribution,
    /// Ticks that started over 100 µs late.
    pub late_over_100us: u64,
    /// Ticks that started over 1 ms late.
    pub late_over_1ms: u64,
    /// How far the session clock fell behind the wall clock (ms): a tick
    /// that starts a whole period late or more restarts the deadlines from
    /// its own start, and missed ticks are not run back to back.
    pub clock_lag_ms: f64,
    /// Bodies in the sub-world, largest seen.
    pub max_sub_world_bodies: usize,
    /// The tick with the longest compute.
    pub slowest_tick: SlowestTick,
}

/// The tick with the longest compute, and how much of it the haptic thread
/// ran: a tick that ran about as long as it took was working (a large
/// sub-world step), one that ran far less was off its CPU (preempted by the
/// host or the kernel, or waiting in a page fault or on a lock).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SlowestTick {
    /// Its index from the session's start.
    pub tick: u64,
    /// Its compute, as in [`LoopStats::compute_us`] (µs).
    pub compute_us: f64,
    /// The haptic thread's CPU time over that tick (µs;
    /// `CLOCK_THREAD_CPUTIME_ID`). In lockstep it includes the thread's
    /// spin waiting for the simulation's answer, which the compute leaves
    /// out; read it against the compute in real time.
    pub on_cpu_us: f64,
    /// The thread's voluntary context switches in it: it waited (a lock, a
    /// page fault's I/O; in lockstep also for the simulation's answer).
    pub waits: u64,
    /// Its involuntary context switches: it was preempted. Off its CPU
    /// with neither, the host (`host_steal`) or an interrupt had the CPU.
    pub preemptions: u64,
}

/// Histograms the haptic thread fills.
#[derive(Clone, Default)]
pub(super) struct LoopRecorder {
    pub lateness: Histogram,
    pub compute: Histogram,
    pub ticks: u64,
    pub clock_lag_s: f64,
    pub max_sub_world_bodies: usize,
    pub slowest_tick: SlowestTick,
}

impl LoopRecorder {
    pub(super) fn stats(&self) -> LoopStats {
        LoopStats {
            ticks: self.ticks,
            period_error_us: self.lateness.summary(),
            compute_us: self.compute.summary(),
            late_over_100us: self.lateness.count_over(100.0),
            late_over_1ms: self.lateness.count_over(1000.0),
            clock_lag_ms: self.clock_lag_s * 1e3,
            max_sub_world_bodies: self.max_sub_world_bodies,
            slowest_tick: self.slowest_tick,
        }
    }
}

/// Synchronisations between the haptic and simulation threads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SyncStats {
    /// Syncs made.
    pub total: u64,
    /// Syncs at which the answer to the previous one had not arrived.
    pub late: u64,
    /// Global steps (wall time, ms).
    pub global_step_ms_mean: f64,
    /// Longest global step (wall time, ms).
    pub global_step_ms_max: f64,
    /// Impacts whose fracture check ran beside the steps and whose
    /// contacts exchanged, in their step, the impulses of the contact on
    /// the body taken as rigid (docs/world.md, "Checks beside the steps").
    pub rigid_exchanges: u64,
    /// Such impacts whose rigid contact ran past the world's budget or its
    /// horizon: they kept the solver's impulses until their check was back.
    pub solver_exchanges: u64,
    /// Such impacts never checked, their rigid impulses left standing
    /// (`world::Counters::unchecked_impacts`).
    pub unchecked_impacts: u64,
}
