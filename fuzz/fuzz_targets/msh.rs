//! Gmsh MSH files (ASCII or binary).
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|bytes: &[u8]| {
    let _ = tessera::mesh::read_gmsh_bytes(bytes, Path::new("fuzz.msh"));
});
