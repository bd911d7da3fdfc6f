//! Real-time scheduling for the haptic thread: SCHED_FIFO and locked
//! memory are requested, and what the system granted is read back and
//! reported (never assumed).

use serde::Serialize;

/// What the haptic thread obtained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RealtimeReport {
    pub requested: bool,
    /// The policy in effect after the request (`SCHED_FIFO`, `SCHED_OTHER`).
    pub policy: String,
    pub priority: i32,
    /// Whether `mlockall` succeeded.
    pub memory_locked: bool,
    /// Why a request failed, if one did.
    pub errors: Vec<String>,
}

/// SCHED_FIFO priority asked for: above ordinary real-time helpers, below
/// the kernel's own threads (99).
const FIFO_PRIORITY: i32 = 80;

/// Requests SCHED_FIFO for the calling thread and locks the process's
/// memory if `request`; reports the policy in effect either way.
pub fn request(request: bool) -> RealtimeReport {
    let mut errors = Vec::new();
    let mut memory_locked = false;
    if request {
        #[cfg(target_os = "linux")]
        unsafe {
            // SAFETY: plain system calls on the calling thread with a valid,
            // initialised parameter struct.
            let param = libc::sched_param {
                sched_priority: FIFO_PRIORITY,
            };
            if libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) != 0 {
                errors.push(format!("SCHED_FIFO: {}", std::io::Error::last_os_error()));
            }
            if libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) == 0 {
                memory_locked = true;
            } else {
                errors.push(format!("mlockall: {}", std::io::Error::last_os_error()));
            }
        }
        #[cfg(not(target_os = "linux"))]
        errors.push("real-time scheduling is only requested on Linux".into());
    }
    let (policy, priority) = current_policy();
    RealtimeReport {
        requested: request,
        policy,
        priority,
        memory_locked,
        errors,
    }
}

/// Undoes the memory lock (the process goes on after a run).
pub fn release(report: &RealtimeReport) {
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
