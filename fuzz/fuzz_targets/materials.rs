//! Material libraries: parse and validate any text.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|text: &str| {
    if let Ok(library) = tessera::config::MaterialLibrary::parse(text, Path::new("fuzz.toml")) {
        for name in library.names() {
            let material = library.get(name).expect("listed");
            let _ = material.lame();
        }
    }
});
