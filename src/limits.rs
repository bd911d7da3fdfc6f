//! Limits on what input may ask for: every size derived from a file or an
//! option (mesh cells, weak points, bodies, simulated steps, ticks, log
//! lengths) is estimated in bytes and checked here before anything is
//! allocated, so a mistyped number gets an error naming the request, its
//! estimate and the option that raises the limit, never an abort.
//!
//! The budget is three quarters of this machine's physical memory unless
//! the caller sets another ([`set_memory_budget_bytes`]; the command line's
//! `--max-memory GIB`). Counts that no memory makes sensible (a session of
//! more than [`MAX_SESSION_S`]) have fixed limits.

use std::sync::atomic::{AtomicU64, Ordering};

/// Longest haptic session or hand script (s): one week.
pub const MAX_SESSION_S: f64 = 7.0 * 24.0 * 3600.0;
/// Most simulated steps one command may ask for (`run`, `drop`): a day
/// at 1 kHz; a longer run is a mistake in the time step or the duration.
pub const MAX_STEPS: u64 = 86_400_000;
/// Longest energy length γ (Glondu eq. 3.8) a scene or option may set
/// (m). γ is millimetres (5 mm by default); the bound catches a value in
/// the wrong unit, with which every crack would run through its body.
pub const MAX_ENERGY_LENGTH_M: f64 = 1.0;

/// Checks an energy length γ (m) against (0, [`MAX_ENERGY_LENGTH_M`]];
/// the error reads `{γ} m is outside (0, {MAX_ENERGY_LENGTH_M}] m`, for
/// the caller to prefix with the file and field or the option.
pub fn energy_length_m(gamma_m: f64) -> Result<f64, String> {
    if gamma_m > 0.0 && gamma_m <= MAX_ENERGY_LENGTH_M {
        Ok(gamma_m)
    } else {
        Err(format!(
            "{gamma_m} m is outside (0, {MAX_ENERGY_LENGTH_M}] m"
        ))
    }
}

/// 0: not set, use the default.
static BUDGET_BYTES: AtomicU64 = AtomicU64::new(0);

/// A request that would need more memory than the budget, or more of
/// something than makes sense.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LimitError {
    /// An allocation larger than the memory budget.
    #[error("{what} needs about {} of memory, over the limit of {} (--max-memory GIB raises it)", human_bytes(*.estimate_bytes), human_bytes(*.budget_bytes))]
    Memory {
        /// What would be allocated.
        what: String,
        /// Estimated size (bytes).
        estimate_bytes: u64,
        /// The budget (bytes).
        budget_bytes: u64,
    },
    /// A count larger than its limit.
    #[error("{what}: {} is more than the {} allowed", readable(*.count), readable(*.limit))]
    Count {
        /// What is counted.
        what: String,
        /// The count asked for.
        count: f64,
        /// Its limit.
        limit: f64,
    },
}

/// Sets the memory budget (bytes) for this process.
pub fn set_memory_budget_bytes(bytes: u64) {
    BUDGET_BYTES.store(bytes.max(1), Ordering::Relaxed);
}

/// The memory budget in bytes: as set, or ¾ of physical memory.
pub fn memory_budget_bytes() -> u64 {
    match BUDGET_BYTES.load(Ordering::Relaxed) {
        0 => physical_memory_bytes().map_or(8 << 30, |b| b / 4 * 3),
        set => set,
    }
}

/// Physical memory of this machine, where the OS says.
pub fn physical_memory_bytes() -> Option<u64> {
    #[cfg(unix)]
    {
        // SAFETY: sysconf reads constants; no memory is passed.
        let (pages, page) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        if pages > 0 && page > 0 {
            return Some((pages as u64).saturating_mul(page as u64));
        }
    }
    None
}

/// `Ok` when `estimate_bytes` (an `f64` so that overflowing products stay
/// ordered) fits the budget; `what` names the request in the error.
pub fn check_memory(what: impl FnOnce() -> String, estimate_bytes: f64) -> Result<(), LimitError> {
    check_against(what, estimate_bytes, memory_budget_bytes())
}

fn check_against(
    what: impl FnOnce() -> String,
    estimate_bytes: f64,
    budget: u64,
) -> Result<(), LimitError> {
    if estimate_bytes.is_nan() || estimate_bytes > budget as f64 {
        return Err(LimitError::Memory {
            what: what(),
            estimate_bytes: if estimate_bytes.is_finite() {
                estimate_bytes as u64
            } else {
                u64::MAX
            },
            budget_bytes: budget,
        });
    }
    Ok(())
}

/// Parties sharing the memory budget now ([`share_memory`]); 0 when none.
static SHARING: AtomicU64 = AtomicU64::new(0);

/// While held, [`check_shared_memory`] checks against the budget divided
/// among this share's parties and any other share's: work run at once
/// (a scene's modal analyses) must fit the budget together.
#[must_use = "the share lasts as long as the guard"]
pub struct MemoryShare {
    parties: u64,
}

/// Divides the memory budget among `parties` more, until the guard drops.
pub fn share_memory(parties: usize) -> MemoryShare {
    let parties = parties as u64;
    SHARING.fetch_add(parties, Ordering::AcqRel);
    MemoryShare { parties }
}

impl Drop for MemoryShare {
    fn drop(&mut self) {
        SHARING.fetch_sub(self.parties, Ordering::AcqRel);
    }
}

/// [`check_memory`] against the budget divided among the parties that
/// share it now ([`share_memory`]): for the large allocations of work that
/// may run beside others of its kind. A request refused while shared may
/// fit alone.
pub fn check_shared_memory(
    what: impl FnOnce() -> String,
    estimate_bytes: f64,
) -> Result<(), LimitError> {
    let parties = SHARING.load(Ordering::Acquire).max(1);
    check_against(what, estimate_bytes, memory_budget_bytes() / parties)
}

/// `Ok` when `count` is at most `limit` (and not NaN).
pub fn check_count(
    what: impl FnOnce() -> String,
    count: f64,
    limit: f64,
) -> Result<(), LimitError> {
    if count.is_nan() || count > limit {
        return Err(LimitError::Count {
            what: what(),
            count,
            limit,
        });
    }
    Ok(())
}

/// The number of steps of `time_step_s` in `duration_s` (rounded up), if at
/// most [`MAX_STEPS`].
pub fn simulated_steps(duration_s: f64, time_step_s: f64) -> Result<u64, LimitError> {
    let steps = (duration_s / time_step_s).ceil().max(1.0);
    check_count(
        || {
            format!(
                "simulated steps ({} s in steps of {} s)",
                readable(duration_s),
                readable(time_step_s)
            )
        },
        steps,
        MAX_STEPS as f64,
    )?;
    Ok(steps as u64)
}

/// A number as people read it: plain when moderate (`0.25`, `4096`), in
/// exponent form when huge or tiny (`1e300`, `1e-12`).
pub fn readable(value: f64) -> String {
    let magnitude = value.abs();
    if value == 0.0 || !value.is_finite() || (1e-3..1e7).contains(&magnitude) {
        format!("{value}")
    } else {
        format!("{value:e}")
    }
}

/// `1.5 GB`, `812 MB`, `4 kB`; `u64::MAX` reads "more than 16 EB".
pub fn human_bytes(bytes: u64) -> String {
    if bytes == u64::MAX {
        return "more than 16 EB".into();
    }
    let units = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < units.len() {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", units[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_over_the_budget_is_refused_with_the_estimate() {
        let budget = memory_budget_bytes() as f64;
        assert!(check_memory(|| "x".into(), budget * 0.5).is_ok());
        let error = check_memory(|| "a box of 10⁹ cells".into(), budget * 4.0).unwrap_err();
        let text = error.to_string();
        assert!(
            text.starts_with("a box of 10⁹ cells needs about "),
            "{text}"
        );
        assert!(text.contains("--max-memory"), "{text}");
        assert!(check_memory(|| "inf".into(), f64::INFINITY).is_err());
        assert!(check_memory(|| "nan".into(), f64::NAN).is_err());
    }

    #[test]
    fn a_shared_budget_is_divided_among_its_parties() {
        let budget = memory_budget_bytes() as f64;
        assert!(check_shared_memory(|| "x".into(), budget * 0.4).is_ok());
        {
            let _three = share_memory(3);
            let error = check_shared_memory(|| "x".into(), budget * 0.4).unwrap_err();
            assert!(
                matches!(error, LimitError::Memory { budget_bytes, .. } if budget_bytes == memory_budget_bytes() / 3),
                "{error:?}"
            );
            assert!(check_shared_memory(|| "x".into(), budget * 0.3).is_ok());
            assert!(
                check_memory(|| "x".into(), budget * 0.4).is_ok(),
                "an unshared check has the whole budget"
            );
        }
        assert!(check_shared_memory(|| "x".into(), budget * 0.4).is_ok());
    }

    #[test]
    fn numbers_read_as_people_write_them() {
        assert_eq!(readable(0.25), "0.25");
        assert_eq!(readable(86_400_000.0), "8.64e7");
        assert_eq!(readable(1e-300), "1e-300");
        assert_eq!(readable(f64::NAN), "NaN");
    }

    #[test]
    fn bytes_read_as_people_write_them() {
        assert_eq!(human_bytes(812), "812 B");
        assert_eq!(human_bytes(9_800_000_000), "9.8 GB");
        assert_eq!(human_bytes(u64::MAX), "more than 16 EB");
    }
}
