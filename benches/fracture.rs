//! One fracture event (initiation, propagation, fragment meshing) on glass
//! slabs of 30 × 30 × 3 cm in Glondu's slab material (Table 3.1), of about
//! 1.7k, 8k, 40k and 175k tets, 100 modes, struck at the centre by a 20 kg
//! steel impactor of 10 cm radius at 30 m/s (600 N·s), enough to crack the
//! coarsest slab (Glondu's R_c of 1 GPa needs it; finer slabs resolve the
//! stress under the impactor better and shatter more).
//!
//! `impact+fragments` starts at most one crack per time sample, as Glondu's
//! Alg. 3 (the default); `impact+fragments-4-per-sample` up to four, which
//! shatters the finer slabs more (cracks and fragments: benches/README.md).
//! Criterion repeats an event, which then finds the parts of the modal
//! tables it reads in the last-level cache;
//! `impact+fragments-cache-cold` first writes 128 MB elsewhere, as other
//! work between two fractures would.
//!
//!     cargo bench --bench fracture
//!
//! Modal bases come from the on-disk cache (`TESSERA_CACHE_DIR` or the
//! user cache); the first run computes them. A slab whose analysis does not
//! fit the memory budget (the 175k slab in the default quadratic element,
//! on a 24 GB machine) is left out with the reason.
//! Per-phase figures of the same events: `tools/fracture_phases.sh`.
//! Run as a test (`cargo test --benches`), only the smallest slab is used.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use nalgebra::{Point3, Vector3};
use std::time::Duration;
use tessera::cache_eviction::CacheEviction;
use tessera::config::MaterialLibrary;
use tessera::fracture::{BreakableBody, ContactPoint, Counters, FractureSettings, Impactor};
use tessera::mesh::box_mesh;
use tessera::modal::{analyse, default_cache_dir, EigenSettings, ModalCache};

/// Cells along x and y, and through the thickness: 6·N²·NZ tets.
const SLABS: [(usize, usize); 4] = [(12, 2), (26, 2), (41, 4), (54, 10)];
/// Approach speed (m/s) and mass (kg) of the impactor.
const SPEED_M_S: f64 = 30.0;
const IMPACTOR_KG: f64 = 20.0;
fn fracture_event(c: &mut Criterion) {
    let bench_mode = std::env::args().any(|a| a == "--bench");
    let material = MaterialLibrary::builtin()
        .get("glondu-slab")
        .unwrap()
        .clone();
    let cache = ModalCache::new(default_cache_dir());
    let mut group = c.benchmark_group("fracture-event");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    let slabs = if bench_mode { &SLABS[..] } else { &SLABS[..1] };
    let threads = rayon::ThreadPoolBuilder::new().build().unwrap();
    for &(cells, cells_z) in slabs {
        let mesh = box_mesh([0.3, 0.3, 0.03], [cells, cells, cells_z], None).unwrap();
        // The quadratic 175k-tet slab's factor does not fit this machine's
        // memory: its analysis is refused, and the slab left out.
        let basis = match analyse(
            &mesh,
            &material,
            &EigenSettings::new(100),
            Some(&cache),
            &threads,
            &|_| {},
        ) {
            Ok((basis, _)) => basis,
            Err(why) => {
                eprintln!("slab {cells}×{cells}×{cells_z} left out: {why}");
                continue;
            }
        };
        let body = BreakableBody::new(mesh, material.clone(), basis, 0)
            .expect("weak points fit in memory");
        let strike = [ContactPoint {
            point_m: Point3::new(0.15, 0.15, 0.03),
            normal: -Vector3::z(),
            impulse_n_s: IMPACTOR_KG * SPEED_M_S,
            relative_speed_m_s: SPEED_M_S,
            impactor: Impactor {
                mass_kg: IMPACTOR_KG,
                radius_m: 0.1,
                ..Impactor::steel_ball()
            },
            face: None,
            gap_m: 0.0,
        }];
        let variants = if bench_mode {
            &[(1, false), (4, false), (1, true)][..]
        } else {
            &[(1, false)][..]
        };
        for &(cracks_per_sample, cache_cold) in variants {
            let settings = FractureSettings {
                max_cracks_per_sample: cracks_per_sample,
                ..FractureSettings::default()
            };
            let name = match (cracks_per_sample, cache_cold) {
                (1, false) => "impact+fragments".to_string(),
                (1, true) => "impact+fragments-cache-cold".to_string(),
                (n, _) => format!("impact+fragments-{n}-per-sample"),
            };
            let mut eviction = CacheEviction::new(cache_cold);
            group.bench_with_input(
                BenchmarkId::new(name, body.mesh().tet_count()),
                &body,
                |b, body| {
                    b.iter_batched(
                        || {
                            eviction.evict();
                            body.clone()
                        },
                        |mut body| {
                            let outcome =
                                body.impact(&strike, &settings, &threads, &mut Counters::default());
                            // An event that cracks nothing leaves the body as it was.
                            let pieces =
                                (!outcome.cracks.is_empty()).then(|| body.fragments(&threads));
                            (outcome, pieces)
                        },
                        BatchSize::LargeInput,
                    )
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, fracture_event);
criterion_main!(benches);
