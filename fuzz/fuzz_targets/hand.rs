//! Hand scripts: parse any text; an accepted script's path is built and
//! sampled.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    tessera::limits::set_memory_budget_bytes(256 << 20);
    if let Ok(script) = tessera::device::HandScript::parse(text, "fuzz") {
        let path = script.trajectory();
        let end = path.duration_s();
        for k in 0..=8 {
            let (p, v) = path.at(end * f64::from(k) / 8.0);
            assert!(p.iter().chain(v.iter()).all(|x| !x.is_nan()));
        }
    }
});
