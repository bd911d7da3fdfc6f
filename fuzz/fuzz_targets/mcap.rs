//! Session logs: any bytes read as an MCAP session log, then summarised
//! and turned into a hand path as `log info` and replays do.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(log) = tessera::session::SessionReader::from_bytes(bytes, "fuzz.mcap") {
        let _ = log.summary();
        let _ = log.hand_trajectory();
    }
});
