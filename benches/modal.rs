//! Assembly and modal analysis on square plates (30 × 30 × 1 cm, porcelain)
//! of about 2k, 10k and 40k tets, 100 modes; the default (quadratic)
//! element, and assembly of both.
//!
//!     cargo bench --bench modal
//!
//! Side by side with scipy's eigsh on the same matrices:
//! `tools/compare_modal.sh 100 1e-8 tile:0.3,0.01:58,2:porcelain`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::time::Duration;
use tessera::config::MaterialLibrary;
use tessera::fem::{ElasticMesh, ElementOrder};
use tessera::mesh::tile_mesh;
use tessera::modal::{analyse, solve_modes, EigenSettings};

/// (cells along each side, cells through the thickness): 6·N²·NZ tets.
const PLATES: [(usize, usize); 3] = [(13, 2), (29, 2), (58, 2)];

fn assembly(c: &mut Criterion) {
    let material = MaterialLibrary::builtin().get("porcelain").unwrap().clone();
    let mut group = c.benchmark_group("assembly");
    for (cells, cells_z) in PLATES {
        let mesh = tile_mesh(0.3, 0.01, cells, cells_z, None).unwrap();
        for order in [ElementOrder::Linear, ElementOrder::Quadratic] {
            group.bench_with_input(
                BenchmarkId::new(format!("stiffness+mass-{}", order.name()), mesh.tet_count()),
                &mesh,
                |b, mesh| {
                    b.iter(|| {
                        let elastic = ElasticMesh::new(mesh, order);
                        let k = elastic.stiffness(&material);
                        let m = elastic.lumped_mass(material.density_kg_m3);
                        (k, m)
                    })
                },
            );
        }
    }
    group.finish();
}

fn modal(c: &mut Criterion) {
    let threads = rayon::ThreadPoolBuilder::new().build().unwrap();
    let material = MaterialLibrary::builtin().get("porcelain").unwrap().clone();
    let settings = EigenSettings::new(100);
    let mut group = c.benchmark_group("modal");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(30));
    for (cells, cells_z) in PLATES {
        let mesh = tile_mesh(0.3, 0.01, cells, cells_z, None).unwrap();
        group.bench_with_input(
            BenchmarkId::new("eigensolve-100-modes", mesh.tet_count()),
            &mesh,
            |b, mesh| {
                b.iter(|| solve_modes(mesh, &material, &settings, None, &threads, &|_| {}).unwrap())
            },
        );
        group.bench_with_input(
            BenchmarkId::new("basis-with-modal-stress", mesh.tet_count()),
            &mesh,
            |b, mesh| {
                b.iter(|| analyse(mesh, &material, &settings, None, &threads, &|_| {}).unwrap())
            },
        );
    }
    group.finish();
}

criterion_group!(benches, assembly, modal);
criterion_main!(benches);
