//! Haptic tick compute time against sub-world size: one 1 ms step of a
//! sub-world holding the pusher and 10, 20 or 50 cubes of the `cube-push`
//! pile (the ground included), with the coupling force on the pusher.
//!
//!     cargo bench --bench haptics
//!
//! The whole-loop figures (period error, late ticks, the largest pile the
//! loop holds at 1 kHz against direct coupling) come from real sessions:
//! `tools/haptic_capacity.sh`. Run as a test (`cargo test --benches`), only
//! the 10-body case runs.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use nalgebra::Vector3;
use std::path::Path;
use tessera::config::{MaterialLibrary, Scene};
use tessera::world::{Extraction, SceneAssets, SubWorld, SubWorldUpdate, World};

fn sub_world(cubes: usize) -> (SubWorld, tessera::world::BodyId) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/scenes/cube-push.toml");
    let mut scene = Scene::load(&path).unwrap();
    scene.set_array_count(cubes).unwrap();
    let threads = rayon::ThreadPoolBuilder::new().build().unwrap();
    let assets =
        SceneAssets::load(&scene, &MaterialLibrary::builtin(), None, &threads, &|_| {}).unwrap();
    let world = World::from_scene(&scene, &assets, 0, &threads).unwrap();
    let proxy = world.find("pusher").unwrap();
    let mut update = SubWorldUpdate::default();
    world.extract_sub_world(
        &Extraction {
            proxy,
            max_graph_bodies: usize::MAX,
            max_bodies: usize::MAX,
            max_added_per_sync: usize::MAX,
            boundary_side_m: 0.0,
            everything: true,
        },
        &[],
        &[],
        &mut update,
    );
    let mut sub = SubWorld::new(world.settings(), 1e-3);
    sub.apply(&update);
    (sub, proxy)
}

fn tick(c: &mut Criterion) {
    let bench_mode = std::env::args().any(|a| a == "--bench");
    let sizes: &[usize] = if bench_mode { &[10, 20, 50] } else { &[10] };
    let mut group = c.benchmark_group("sub-world-step");
    for &bodies in sizes {
        let (mut sub, proxy) = sub_world(bodies);
        // Let the pile settle so the step is the steady state.
        for _ in 0..200 {
            sub.step(proxy, &Vector3::zeros(), &Vector3::zeros());
        }
        let push = Vector3::new(2.0, 0.0, 3.0);
        group.bench_with_input(BenchmarkId::from_parameter(bodies), &bodies, |b, _| {
            b.iter(|| sub.step(proxy, &push, &Vector3::zeros()))
        });
    }
    group.finish();
}

criterion_group!(benches, tick);
criterion_main!(benches);
