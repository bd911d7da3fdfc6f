//! Panics of dependencies, contained. Two parsers we depend on panic on
//! some damaged inputs (found by fuzzing, see their callers): mshio 0.4.2
//! on MSH headers and mcap 0.26 on a chunk whose records overrun it (an
//! unchecked subtraction: a panic with overflow checks, a wrapped count
//! without). Such a call runs through [`contained`], which turns a panic
//! inside it into `None`.

use std::cell::Cell;
use std::panic::UnwindSafe;
use std::sync::Once;

std::thread_local! {
    static CONTAINING: Cell<bool> = const { Cell::new(false) };
}

/// `f()`, or `None` if it panicked. While `f` runs the panic hook is silent
/// on this thread (a contained panic is not a crash to report); elsewhere,
/// and on this thread otherwise, the previous hook runs unchanged.
pub(crate) fn contained<R>(f: impl FnOnce() -> R + UnwindSafe) -> Option<R> {
    static QUIET_HOOK: Once = Once::new();
    QUIET_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !CONTAINING.with(Cell::get) {
                previous(info);
            }
        }));
    });
    let outer = CONTAINING.with(|flag| flag.replace(true));
    let result = std::panic::catch_unwind(f);
    CONTAINING.with(|flag| flag.set(outer));
    result.ok()
}

#[cfg(test)]
mod tests {
    use super::contained;

    #[test]
    fn a_panic_inside_becomes_none_and_values_pass_through() {
        assert_eq!(contained(|| 7), Some(7));
        let none: Option<()> = contained(|| panic!("a dependency's bug"));
        assert_eq!(none, None);
        // A nested call restores the outer containment when it returns.
        assert_eq!(contained(|| contained(|| 1)), Some(Some(1)));
    }
}
