//! Device profiles: parse and validate any text; an accepted profile's
//! codec encodes and decodes its own reports and its safety layer starts.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use tessera::device::SafetyFilter;
use tessera::device::{DeviceCommand, DeviceProfile, ReportCodec, SafetySettings};

fuzz_target!(|text: &str| {
    let Ok(profile) = DeviceProfile::parse(text, Path::new("fuzz.toml")) else {
        return;
    };
    let codec = ReportCodec::new(&profile);
    let mut report = Vec::new();
    codec.encode(&DeviceCommand::zero_wrench(), true, 1, &mut report);
    let _ = codec.decode_command(&report);
    codec.encode_state(&Default::default(), 0, &mut report);
    let _ = codec.decode(&report);
    let settings = SafetySettings::for_spec(&profile.spec);
    assert!(SafetyFilter::new(profile.spec.clone(), settings).is_ok());
});
