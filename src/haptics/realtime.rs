//! Real-time scheduling for the haptic thread: SCHED_FIFO, locked memory
//! and a core of its own choosing are requested, and what the system
//! granted is read back and reported (never assumed).
//!
//! The core: by default the allowed CPU that has served the fewest device
//! interrupts (`/proc/interrupts`). A SCHED_FIFO thread preempts every
//! ordinary thread but not interrupt handling, and a machine may route all
//! of a disk's interrupts to one CPU: a haptic thread there wakes late
//! while the session log is written.

use serde::Serialize;

/// What the haptic thread obtained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RealtimeReport {
    /// Whether real-time scheduling was asked for.
    pub requested: bool,
    /// The policy in effect after the request (`SCHED_FIFO`, `SCHED_OTHER`).
    pub policy: String,
    /// The priority in effect.
    pub priority: i32,
    /// Whether `mlockall` succeeded.
    pub memory_locked: bool,
    /// Heap faulted in for the world before the first tick, in the
    /// calling thread's and the simulation thread's arenas
    /// ([`reserve_heap`]; 0 when none was).
    pub heap_reserved_bytes: u64,
    /// The CPU the haptic thread is pinned to, if it is.
    pub cpu: Option<usize>,
    /// Why that CPU (or why none).
    pub cpu_choice: String,
    /// Why a request failed, if one did.
    pub errors: Vec<String>,
}

/// SCHED_FIFO priority asked for: above ordinary real-time helpers, below
/// the kernel's own threads (99).
const FIFO_PRIORITY: i32 = 80;

/// Which CPU the haptic thread asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpuPin {
    /// The allowed CPU with the fewest device interrupts.
    #[default]
    Auto,
    /// This CPU.
    Cpu(usize),
    /// Not pinned.
    None,
}

/// A `--haptic-cpu` value that is neither a CPU number, `auto` nor `none`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a CPU: expected a CPU number, `auto` or `none`")]
pub struct ParseCpuPinError(pub String);

impl std::str::FromStr for CpuPin {
    type Err = ParseCpuPinError;
    fn from_str(s: &str) -> Result<Self, ParseCpuPinError> {
        match s {
            "auto" => Ok(Self::Auto),
            "none" => Ok(Self::None),
            n => n
                .parse()
                .map(Self::Cpu)
                .map_err(|_| ParseCpuPinError(n.to_owned())),
        }
    }
}

/// SCHED_FIFO priority of a study's device keeper (the thread that
/// commands a device between trials): below the haptic thread's, which
/// it must never delay, above the simulation's and every ordinary thread,
/// which builds the next trial's world meanwhile.
pub const KEEPER_PRIORITY: i32 = 60;

/// Requests SCHED_FIFO at `priority` for the calling thread, neither
/// pinned nor locking memory (the haptic thread locks it for the process
/// when its session starts), if `request`; reports the policy in effect
/// either way.
pub(super) fn request_fifo(request: bool, priority: i32) -> RealtimeReport {
    let mut errors = Vec::new();
    if request {
        if let Err(e) = fifo_calling_thread(priority) {
            errors.push(format!("SCHED_FIFO: {e}"));
        }
    }
    let (policy, priority) = current_policy();
    RealtimeReport {
        requested: request,
        policy,
        priority,
        memory_locked: false,
        heap_reserved_bytes: 0,
        cpu: None,
        cpu_choice: "not pinned".to_owned(),
        errors,
    }
}

/// Requests SCHED_FIFO for the calling thread, pins it as `pin` says and
/// locks the process's memory if `request`; reports the policy in effect
/// either way, with what the world's heap reserves gave (`heap`, the sum
/// of [`reserve_heap`]'s).
pub(super) fn request(
    request: bool,
    pin: CpuPin,
    heap: Result<u64, HeapReserveError>,
) -> RealtimeReport {
    let mut errors = Vec::new();
    let heap_reserved_bytes = match heap {
        Ok(bytes) => bytes,
        Err(e) => {
            errors.push(format!("heap reserve: {e}"));
            0
        }
    };
    let mut memory_locked = false;
    let (mut cpu, mut cpu_choice) = (None, "not pinned".to_owned());
    if request {
        match pin_calling_thread(pin) {
            Ok(Some((chosen, why))) => (cpu, cpu_choice) = (Some(chosen), why.to_owned()),
            Ok(None) => {}
            Err(e) => errors.push(e.to_string()),
        }
        if let Err(e) = fifo_calling_thread(FIFO_PRIORITY) {
            errors.push(format!("SCHED_FIFO: {e}"));
        }
        // The pages the process has now are faulted in and locked here,
        // before the first tick; later mappings are locked as they are
        // touched (MCL_ONFAULT), not faulted in whole when mapped: a large
        // allocation of another thread (a fracture event's) faulted in at
        // mmap holds the process's memory map meanwhile, and stalls this
        // thread's ticks (`tools/many_tiles.sh` shows it with large
        // tiles). MCL_CURRENT goes first: a call without it leaves the
        // current pages as they are.
        #[cfg(target_os = "linux")]
        unsafe {
            // SAFETY: plain system calls with valid flags.
            if libc::mlockall(libc::MCL_CURRENT) == 0
                && libc::mlockall(libc::MCL_FUTURE | libc::MCL_ONFAULT) == 0
            {
                memory_locked = true;
            } else {
                errors.push(format!("mlockall: {}", std::io::Error::last_os_error()));
            }
        }
    }
    let (policy, priority) = current_policy();
    RealtimeReport {
        requested: request,
        policy,
        priority,
        memory_locked,
        heap_reserved_bytes,
        cpu,
        cpu_choice,
        errors,
    }
}

/// Heap faulted in before a real-time session's first tick, in each of
/// the two arenas the world allocates from (docs/haptics.md). The world's
/// memory grows in steps no scene announces: `cube-push`'s 2000 cubes
/// meet at their second step and take 9 MB of contact manifolds at once,
/// whose page faults made that step 11–16 ms instead of 5.5–6.5
/// (benches/README.md). A fixed budget: the memory is the process's from
/// then on, locked with the rest.
pub const SIMULATION_HEAP_RESERVE_BYTES: u64 = 64 << 20;

/// Heap faulted in on the haptic thread before its first tick, in its own
/// arena ([`private_arenas`]). A new arena's heap starts small and grows
/// by `mprotect`, which takes the process's memory map for writing and so
/// waits behind every other thread's page faults and mappings: among
/// eight 40k-tet tiles a tick whose allocation grew it waited 10–15 ms
/// there (benches/README.md). The sub-world's step allocates a few small
/// blocks a tick, and the arena grew by at most 20 pages in those
/// sessions: the reserve leaves a wide margin.
pub const HAPTIC_HEAP_RESERVE_BYTES: u64 = 16 << 20;

/// The blocks the reserve is faulted in with: below
/// [`ARENA_ALLOCATION_MAX_BYTES`], so they come from the thread's arena.
const RESERVE_BLOCK_BYTES: usize = 1 << 20;

/// Allocations up to this size come from the allocator's arenas, larger
/// ones are mapped and unmapped on their own (glibc's own ceiling for its
/// adaptive threshold on 64-bit): a fracture event's gigabyte
/// factorisation goes back to the system when freed.
const ARENA_ALLOCATION_MAX_BYTES: i32 = 32 << 20;

/// Why a heap reserve failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeapReserveError {
    /// The allocator refused a parameter.
    #[error("the allocator refused mallopt({0})")]
    Refused(&'static str),
    /// The allocator is not glibc's, whose parameters the reserve sets.
    #[error("only reserved with glibc's allocator")]
    Unsupported,
    /// The simulation thread did not report its reserve in time.
    #[error("the simulation thread did not report within {0:?}")]
    TimedOut(std::time::Duration),
}

/// Arenas the allocator may create at least: one per thread of a session
/// (about 17 in the demo on 2 cores: the haptic, simulation, fracture,
/// modal and log threads and their pools; the viewer's add a few), with
/// room to spare.
const ARENAS_MIN: usize = 64;
/// Arenas per core beside [`ARENAS_MIN`]: the pools grow with the cores,
/// and glibc's own limit (8 per core) must never be lowered.
const ARENAS_PER_CORE: usize = 16;

/// Lets every thread the process starts have an allocator arena of its
/// own (up to 64 or 16 per core, whichever is more); call it first in
/// `main`, before any thread starts. glibc creates
/// at most 8 arenas per core and then hands later threads arenas that
/// others use: the haptic thread, started last, would share one, and its
/// allocations inside a tick (rapier's step makes a few) wait on that
/// arena's lock while another thread holds it (docs/haptics.md). Returns
/// whether the allocator took the setting.
pub fn private_arenas() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let arenas = ARENAS_MIN.max(ARENAS_PER_CORE.saturating_mul(cores));
        let arenas = i32::try_from(arenas).unwrap_or(i32::MAX);
        // SAFETY: mallopt only sets an allocator parameter, in range.
        unsafe { libc::mallopt(libc::M_ARENA_MAX, arenas) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Faults in `bytes` of heap for the calling thread and keeps them: the
/// allocator stops returning freed memory to the system (`M_TRIM_THRESHOLD
/// = -1`, for the whole process) and serves allocations below 32 MiB from
/// its arenas, then `bytes` are allocated in blocks, written and freed.
/// The calling thread's later
/// allocations (up to `bytes` at a time) reuse those pages without a page
/// fault; the memory the process frees afterwards also stays, so a
/// fracture event's working set is faulted in once per session, not once
/// per event. Returns the bytes faulted in.
pub fn reserve_heap(bytes: u64) -> Result<u64, HeapReserveError> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only sets the allocator's parameters; both
        // values are in their documented ranges.
        unsafe {
            if libc::mallopt(libc::M_TRIM_THRESHOLD, -1) != 1 {
                return Err(HeapReserveError::Refused("M_TRIM_THRESHOLD"));
            }
            if libc::mallopt(libc::M_MMAP_THRESHOLD, ARENA_ALLOCATION_MAX_BYTES) != 1 {
                return Err(HeapReserveError::Refused("M_MMAP_THRESHOLD"));
            }
        }
        let blocks = bytes.div_ceil(RESERVE_BLOCK_BYTES as u64) as usize;
        // Written with a non-zero byte: a zeroed allocation may come from
        // calloc, which leaves fresh pages untouched.
        let reserve: Vec<Box<[u8]>> = (0..blocks)
            .map(|_| vec![1u8; RESERVE_BLOCK_BYTES].into_boxed_slice())
            .collect();
        drop(std::hint::black_box(reserve));
        Ok((blocks * RESERVE_BLOCK_BYTES) as u64)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = bytes;
        Err(HeapReserveError::Unsupported)
    }
}

/// SCHED_FIFO priority of the simulation's threads (the world step and
/// the rayon workers of its fracture checks) when they ask for it: below
/// the haptic thread's, above every ordinary thread.
pub const SIMULATION_PRIORITY: i32 = 40;

/// What the simulation's threads obtained (`tessera run --realtime`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SimulationRealtime {
    /// The policy of the stepping thread, e.g. `SCHED_FIFO/40`.
    pub policy: String,
    /// The policy of each rayon worker, read back from the workers.
    pub worker_policies: Vec<String>,
    /// Why a request failed, one line each.
    pub errors: Vec<String>,
}

/// The worker pool of the world's fracture checks, a pool of its own
/// (rayon's global pool is never used). With `realtime`, the calling
/// (stepping) thread and the pool's workers ask for SCHED_FIFO at
/// [`SIMULATION_PRIORITY`], so that a step's parallel fracture checks are
/// not preempted by ordinary threads (a kernel worker taking a worker's
/// CPU for a scheduler tick stalls the whole step; see benches/README.md),
/// and what they obtained is returned.
pub fn simulation_threads(
    realtime: bool,
) -> Result<(rayon::ThreadPool, Option<SimulationRealtime>), rayon::ThreadPoolBuildError> {
    let mut errors = Vec::new();
    if realtime {
        if let Err(e) = fifo_calling_thread(SIMULATION_PRIORITY) {
            errors.push(format!("SCHED_FIFO: {e}"));
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("tessera-fracture-{i}"))
        .start_handler(move |_| {
            if realtime {
                // Read back below through the workers' policies.
                let _ = fifo_calling_thread(SIMULATION_PRIORITY);
            }
        })
        .build()?;
    let policy_name = || {
        let (policy, priority) = current_policy();
        format!("{policy}/{priority}")
    };
    let report = realtime.then(|| SimulationRealtime {
        policy: policy_name(),
        worker_policies: pool.broadcast(|_| policy_name()),
        errors,
    });
    Ok((pool, report))
}

/// SCHED_FIFO at `priority` for the calling thread.
fn fifo_calling_thread(priority: i32) -> Result<(), std::io::Error> {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param {
            sched_priority: priority,
        };
        // SAFETY: a plain system call on the calling thread with a valid,
        // initialised parameter struct.
        if unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) }
            != 0
        {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = priority;
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "real-time scheduling is only requested on Linux",
        ))
    }
}

/// Why the haptic thread could not be pinned.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    /// The CPU asked for is not one this process may run on.
    #[error("CPU {cpu} is not among the allowed CPUs {allowed:?}")]
    NotAllowed {
        /// The CPU asked for.
        cpu: usize,
        /// The CPUs this process may run on.
        allowed: Vec<usize>,
    },
    /// The allowed CPUs could not be read.
    #[error("CPU affinity: {0}")]
    Affinity(std::io::Error),
    /// Setting the thread's affinity failed.
    #[error("pin to CPU {cpu}: {source}")]
    Pin {
        /// The CPU.
        cpu: usize,
        /// The system's error.
        source: std::io::Error,
    },
}

/// Pins the calling thread; the CPU and why it was chosen, or `None` when
/// there is nothing to choose (one CPU allowed, or `CpuPin::None`).
#[cfg(target_os = "linux")]
fn pin_calling_thread(pin: CpuPin) -> Result<Option<(usize, &'static str)>, PinError> {
    let allowed = allowed_cpus()?;
    let (cpu, why) = match pin {
        CpuPin::None => return Ok(None),
        CpuPin::Cpu(cpu) if allowed.contains(&cpu) => (cpu, "requested"),
        CpuPin::Cpu(cpu) => return Err(PinError::NotAllowed { cpu, allowed }),
        CpuPin::Auto if allowed.len() < 2 => return Ok(None),
        CpuPin::Auto => {
            let text = std::fs::read_to_string("/proc/interrupts").unwrap_or_default();
            match quietest_cpu(&text, &allowed) {
                Some(cpu) => (cpu, "fewest device interrupts"),
                None => return Ok(None),
            }
        }
    };
    // SAFETY: a zeroed cpu_set_t is a valid empty set; `cpu` is below
    // CPU_SETSIZE (it came from the allowed set or was checked against it).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(PinError::Pin {
                cpu,
                source: std::io::Error::last_os_error(),
            });
        }
    }
    Ok(Some((cpu, why)))
}

#[cfg(not(target_os = "linux"))]
fn pin_calling_thread(_pin: CpuPin) -> Result<Option<(usize, &'static str)>, PinError> {
    Ok(None)
}

/// The CPUs the calling thread may run on.
#[cfg(target_os = "linux")]
fn allowed_cpus() -> Result<Vec<usize>, PinError> {
    // SAFETY: a zeroed cpu_set_t is valid; the kernel fills it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(PinError::Affinity(std::io::Error::last_os_error()));
        }
        Ok((0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect())
    }
}

/// The CPU of `allowed` that has served the fewest device interrupts
/// according to `interrupts` (the text of `/proc/interrupts`: a header of
/// `CPUn` columns, then one line per source; device lines start with a
/// number). Lowest CPU on ties; `None` if the text says nothing usable.
fn quietest_cpu(interrupts: &str, allowed: &[usize]) -> Option<usize> {
    let mut lines = interrupts.lines();
    let columns: Vec<usize> = lines
        .next()?
        .split_whitespace()
        .map(|c| c.strip_prefix("CPU")?.parse().ok())
        .collect::<Option<_>>()?;
    let mut counts = vec![0u64; columns.len()];
    for line in lines {
        let Some((source, rest)) = line.trim_start().split_once(':') else {
            continue;
        };
        if source.parse::<u32>().is_err() {
            continue;
        }
        for (count, field) in counts.iter_mut().zip(rest.split_whitespace()) {
            match field.parse::<u64>() {
                Ok(n) => *count = count.saturating_add(n),
                Err(_) => break,
            }
        }
    }
    columns
        .iter()
        .zip(&counts)
        .filter(|(cpu, _)| allowed.contains(cpu))
        .min_by_key(|&(&cpu, &count)| (count, cpu))
        .map(|(&cpu, _)| cpu)
}

/// CPU time the host (hypervisor) took from this machine's CPUs while
/// they had work to run: the `steal` column of `/proc/stat`. A SCHED_FIFO
/// thread cannot preempt it, so on a VM a tick late by more than a
/// millisecond with little compute is the host's, and a run's late ticks
/// are read against it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HostSteal {
    /// Summed over all CPUs (ms).
    pub all_cpus_ms: f64,
    /// On the haptic thread's CPU, if it was pinned (ms).
    pub haptic_cpu_ms: Option<f64>,
}

/// The steal counters at one moment: the text of `/proc/stat`, read where
/// it exists.
#[derive(Debug, Clone, Default)]
pub(super) struct StealSample(Option<String>);

impl StealSample {
    pub(super) fn now() -> Self {
        Self(std::fs::read_to_string("/proc/stat").ok())
    }

    /// The steal between `self` and the later sample `after`; `None` where
    /// the kernel does not report it.
    pub(super) fn until(
        &self,
        after: &StealSample,
        haptic_cpu: Option<usize>,
    ) -> Option<HostSteal> {
        let (before, after) = (self.0.as_deref()?, after.0.as_deref()?);
        let ms = |cpu: Option<usize>| -> Option<f64> {
            let ticks = steal_ticks(after, cpu)?.checked_sub(steal_ticks(before, cpu)?)?;
            Some(ticks as f64 * 1e3 / clock_ticks_per_s())
        };
        Some(HostSteal {
            all_cpus_ms: ms(None)?,
            haptic_cpu_ms: haptic_cpu.and_then(|cpu| ms(Some(cpu))),
        })
    }
}

/// The steal counter (clock ticks) of `cpu`'s line of `stat`, the text of
/// `/proc/stat` (`cpu` for all CPUs, `cpuN` for one); the eighth number of
/// the line. `None` if the line or the column is missing.
fn steal_ticks(stat: &str, cpu: Option<usize>) -> Option<u64> {
    stat.lines().find_map(|line| {
        let mut fields = line.split_whitespace();
        let name = fields.next()?.strip_prefix("cpu")?;
        let matches = match cpu {
            None => name.is_empty(),
            Some(cpu) => name.parse::<usize>().ok() == Some(cpu),
        };
        if !matches {
            return None;
        }
        fields.nth(7)?.parse().ok()
    })
}

fn clock_ticks_per_s() -> f64 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf with a valid name has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        if hz > 0 {
            return hz as f64;
        }
    }
    100.0
}

/// The calling thread's CPU time so far (s; `CLOCK_THREAD_CPUTIME_ID`, a
/// system call of well under a microsecond and no allocation).
pub(super) fn thread_cpu_s() -> f64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec to write to.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } != 0 {
        return 0.0;
    }
    now.tv_sec as f64 + now.tv_nsec as f64 * 1e-9
}

/// The calling thread's resource usage (`getrusage(RUSAGE_THREAD)`), where
/// it exists. A system call; no allocation.
#[cfg(target_os = "linux")]
fn thread_usage() -> Option<libc::rusage> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: a valid out-pointer for the calling thread's usage.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: getrusage succeeded and wrote the struct.
    Some(unsafe { usage.assume_init() })
}

/// The calling thread's context switches so far: (voluntary, involuntary).
/// A voluntary one is a wait (a lock, a page fault's I/O, a sleep), an
/// involuntary one a preemption; a host taking the CPU makes neither.
/// `(0, 0)` where `getrusage(RUSAGE_THREAD)` does not exist.
pub(super) fn thread_switches() -> (u64, u64) {
    #[cfg(target_os = "linux")]
    if let Some(usage) = thread_usage() {
        return (usage.ru_nvcsw as u64, usage.ru_nivcsw as u64);
    }
    (0, 0)
}

/// Undoes the memory lock (the process goes on after a run).
pub(super) fn release(report: &RealtimeReport) {
    #[cfg(target_os = "linux")]
    if report.memory_locked {
        // SAFETY: no arguments; unlocks pages locked by `request`.
        unsafe {
            libc::munlockall();
        }
    }
}

fn current_policy() -> (String, i32) {
    #[cfg(target_os = "linux")]
    {
        let mut policy = 0;
        let mut param = libc::sched_param { sched_priority: 0 };
        // SAFETY: valid out-pointers for the calling thread.
        let ok =
            unsafe { libc::pthread_getschedparam(libc::pthread_self(), &mut policy, &mut param) }
                == 0;
        if !ok {
            return ("unknown".into(), 0);
        }
        let name = match policy {
            libc::SCHED_FIFO => "SCHED_FIFO",
            libc::SCHED_RR => "SCHED_RR",
            libc::SCHED_OTHER => "SCHED_OTHER",
            libc::SCHED_BATCH => "SCHED_BATCH",
            libc::SCHED_IDLE => "SCHED_IDLE",
            _ => "other",
        };
        (name.into(), param.sched_priority)
    }
    #[cfg(not(target_os = "linux"))]
    ("unknown".into(), 0)
}

#[cfg(test)]
mod tests {
    use super::{quietest_cpu, steal_ticks, thread_cpu_s, thread_switches};
    use proptest::prelude::*;

    #[test]
    fn thread_cpu_time_and_switches_tell_work_from_waiting() {
        let before = thread_cpu_s();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let switches = thread_switches();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let slept_s = thread_cpu_s() - before;
        assert!(slept_s < 0.005, "{slept_s} s of CPU while asleep for 0.1 s");
        #[cfg(target_os = "linux")]
        assert!(
            thread_switches().0 > switches.0,
            "a sleep is a voluntary switch"
        );
        let spin = |seconds: f64| {
            let started = std::time::Instant::now();
            while started.elapsed().as_secs_f64() < seconds {}
        };
        // Another thread's work is not this thread's.
        let before = thread_cpu_s();
        std::thread::spawn(move || spin(0.05)).join().unwrap();
        let waited_s = thread_cpu_s() - before;
        assert!(
            waited_s < 0.005,
            "{waited_s} s of CPU while another thread worked"
        );
        let started = std::time::Instant::now();
        let before = thread_cpu_s();
        spin(0.02);
        let (worked_s, wall_s) = (thread_cpu_s() - before, started.elapsed().as_secs_f64());
        assert!(
            worked_s > 0.0 && worked_s <= wall_s + 1e-3,
            "{worked_s} s of CPU over {wall_s} s of work"
        );
    }

    /// Minor page faults of the calling thread so far.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn thread_page_faults() -> i64 {
        super::thread_usage().expect("getrusage").ru_minflt
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn a_reserved_heap_is_allocated_again_without_page_faults() {
        const BYTES: usize = 16 << 20;
        let pages = (BYTES / 4096) as i64;
        let (reserved, mapped) = std::thread::spawn(|| {
            assert_eq!(super::reserve_heap(2 * BYTES as u64), Ok(2 * BYTES as u64));
            let before = thread_page_faults();
            let held: Vec<Vec<u8>> = (0..BYTES / 4096).map(|_| vec![7u8; 4096]).collect();
            let reserved = thread_page_faults() - before;
            // Above the arenas' ceiling: fresh pages from the system, a
            // fault each (4 KiB pages: transparent huge pages only where
            // madvised, Debian's default).
            let before = thread_page_faults();
            let large = vec![7u8; 2 * super::ARENA_ALLOCATION_MAX_BYTES as usize];
            let mapped = thread_page_faults() - before;
            std::hint::black_box((held, large));
            (reserved, mapped)
        })
        .join()
        .expect("the thread");
        assert!(
            mapped > pages,
            "{mapped} faults writing 64 MiB of fresh pages"
        );
        assert!(
            reserved < pages / 20,
            "{reserved} faults for {pages} reserved pages"
        );
    }

    #[test]
    fn the_haptic_thread_takes_the_cpu_with_the_fewest_device_interrupts() {
        let interrupts = "           CPU0       CPU1       CPU2
     24:          1          0          0  IO-APIC   5-edge      ACPI:Ged
     36:          0     369259          7  PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0
     41:       6386          0         90  PCI-MSIX-0000:00:04.0   1-edge      virtio3-rx
    LOC:    3594716    5095238         10   Local timer interrupts
    ";
        assert_eq!(quietest_cpu(interrupts, &[0, 1, 2]), Some(2));
        assert_eq!(
            quietest_cpu(interrupts, &[0, 1]),
            Some(0),
            "CPU 2 not allowed"
        );
        assert_eq!(quietest_cpu(interrupts, &[5]), None, "no allowed column");
        assert_eq!(quietest_cpu("", &[0, 1]), None);
    }

    proptest! {
        #[test]
        fn reading_any_interrupt_table_never_panics(
            text in "(CPU[0-9] +){0,3}\n(( *[0-9A-Z]{1,3}:( +[0-9]{1,12}){0,4}[ a-zA-Z-]*)\n){0,6}",
            allowed in proptest::collection::vec(0usize..4, 0..4),
        ) {
            if let Some(cpu) = quietest_cpu(&text, &allowed) {
                prop_assert!(allowed.contains(&cpu));
            }
        }
    }

    #[test]
    fn host_steal_is_read_from_the_steal_column_of_each_cpu_line() {
        let stat = "cpu  3133163 0 168145 1675939 9678 0 1355 1141 0 0
    cpu0 1565000 0 84000 837000 4800 0 700 600 0 0
    cpu1 1568163 0 84145 838939 4878 0 655 541 0 0
    intr 123 4 5
    ";
        assert_eq!(steal_ticks(stat, None), Some(1141));
        assert_eq!(steal_ticks(stat, Some(0)), Some(600));
        assert_eq!(steal_ticks(stat, Some(1)), Some(541));
        assert_eq!(steal_ticks(stat, Some(2)), None, "no such CPU");
        assert_eq!(
            steal_ticks("cpu  1 2 3 4 5 6 7\n", None),
            None,
            "a kernel without the steal column"
        );
    }

    proptest! {
        #[test]
        fn reading_any_cpu_statistics_never_panics(
            text in "((cpu[0-9]?|intr|ctxt)( +[0-9]{1,20}){0,10}\n){0,5}",
            cpu in proptest::option::of(0usize..4),
        ) {
            let _ = steal_ticks(&text, cpu);
        }
    }
}
