//! HID reports from a device (or a command report read back) decoded with
//! each shipped profile.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use tessera::device::{DeviceProfile, ReportCodec};

fn codecs() -> &'static [ReportCodec] {
    static CODECS: OnceLock<Vec<ReportCodec>> = OnceLock::new();
    CODECS.get_or_init(|| {
        DeviceProfile::shipped()
            .expect("shipped profiles")
            .iter()
            .map(|(_, p)| ReportCodec::new(p))
            .collect()
    })
}

fuzz_target!(|bytes: &[u8]| {
    for codec in codecs() {
        if let Ok(decoded) = codec.decode(bytes) {
            assert!(decoded.state.position_m.iter().all(|x| x.is_finite()));
        }
        let _ = codec.decode_command(bytes);
    }
});
