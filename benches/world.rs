//! Step time of the global world (Glondu 2012, Table 4.3):
//! * `cube-basin` with 500, 1000 and 2000 cubes: the first second (100
//!   steps of 10 ms), cubes falling into the basin and piling up;
//! * `bricks`: the first two seconds (200 steps of 10 ms), all 32 bricks
//!   landing and breaking.
//!
//!     cargo bench --bench world
//!
//! Criterion reports the time of a whole run; divide by the step count for
//! the mean step. Per-step mean, p99 and max of the same runs:
//! `tools/world_steps.sh`. Run as a test (`cargo test --benches`), only the
//! 500-cube basin runs, for 10 steps.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use std::path::Path;
use std::time::Duration;
use tessera::config::{MaterialLibrary, Scene};
use tessera::modal::{default_cache_dir, ModalCache};
use tessera::world::{Counters, SceneAssets, StepInputs, World};

fn scene(name: &str) -> Scene {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("configs/scenes/{name}.toml"));
    Scene::load(&path).unwrap()
}

fn world_steps(c: &mut Criterion) {
    let bench_mode = std::env::args().any(|a| a == "--bench");
    let library = MaterialLibrary::builtin();
    let threads = rayon::ThreadPoolBuilder::new().build().unwrap();
    let cache = ModalCache::new(default_cache_dir());
    let mut group = c.benchmark_group("world-run");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    let counts: &[usize] = if bench_mode {
        &[500, 1000, 2000]
    } else {
        &[500]
    };
    let steps = if bench_mode { 100 } else { 10 };
    for &count in counts {
        let mut basin = scene("cube-basin");
        basin.set_array_count(count).unwrap();
        let assets = SceneAssets::load(&basin, &library, Some(&cache), &threads, &|_| {}).unwrap();
        group.bench_with_input(
            BenchmarkId::new(format!("cube-basin-{steps}-steps"), count),
            &count,
            |b, _| {
                b.iter_batched(
                    || World::from_scene(&basin, &assets, 0, &threads).unwrap(),
                    |mut world| {
                        for _ in 0..steps {
                            world.step(&StepInputs::default(), &threads, &mut Counters::default());
                        }
                        world
                    },
                    BatchSize::PerIteration,
                )
            },
        );
    }
    if bench_mode {
        let bricks = scene("bricks");
        let assets = SceneAssets::load(&bricks, &library, Some(&cache), &threads, &|_| {}).unwrap();
        group.bench_function("bricks-200-steps", |b| {
            b.iter_batched(
                || World::from_scene(&bricks, &assets, 0, &threads).unwrap(),
                |mut world| {
                    for _ in 0..200 {
                        world.step(&StepInputs::default(), &threads, &mut Counters::default());
                    }
                    world
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, world_steps);
criterion_main!(benches);
