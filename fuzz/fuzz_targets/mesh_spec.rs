//! Mesh generator specifications (`box:…`, `tile:…`, `plate:…`): parsed and
//! built under a small memory budget, which large requests must respect.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tessera::mesh::MeshSpec;

fuzz_target!(|text: &str| {
    tessera::limits::set_memory_budget_bytes(64 << 20);
    if let Ok(spec) = MeshSpec::parse(text) {
        if !matches!(spec, MeshSpec::File(_)) {
            let _ = spec.load();
        }
    }
});
