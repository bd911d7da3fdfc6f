//! Scene files: parse and validate any text; a valid scene's bodies are
//! positioned (arrays expanded) as the world would.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|text: &str| {
    tessera::limits::set_memory_budget_bytes(256 << 20);
    if let Ok(scene) = tessera::config::Scene::parse(text, Path::new("fuzz.toml")) {
        for body in &scene.bodies {
            let _ = body.positions_m();
            if let tessera::config::ShapeSpec::TetMesh { mesh } = &body.shape {
                let _ = scene.resolve_mesh(mesh);
            }
        }
    }
});
