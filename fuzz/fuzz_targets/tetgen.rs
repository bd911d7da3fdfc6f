//! TetGen `.node`/`.ele` pairs: the input is split at the first NUL into
//! the two files.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|text: &str| {
    let (node, ele) = text.split_once('\0').unwrap_or((text, ""));
    let _ = tessera::mesh::read_tetgen_strs(node, Path::new("f.node"), ele, Path::new("f.ele"));
});
