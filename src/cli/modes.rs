//! `tessera modes`: the lowest elastic modes of a body.

use super::{material_library, solve_progress, BodyArgs, Cli};
use anyhow::Context;
use serde::Serialize;
use std::path::PathBuf;
use tessera::config::Material;
use tessera::fem::{write_diagonal_matrix_market, write_matrix_market, ElasticMesh, ElementOrder};
use tessera::mesh::MeshSpec;
use tessera::mesh::TetMesh;
use tessera::modal::{
    default_cache_dir, mode_dynamics, solve_modes, EigenSettings, ModalBasis, ModalBytes,
    ModalCache, ModalReport, ModeDynamics, Modes,
};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub body: BodyArgs,
    /// Number of elastic modes (rigid modes excluded), at least 1.
    #[arg(long, default_value_t = 100, value_parser = super::at_least_one)]
    pub modes: usize,
    /// Extra modes computed and dropped (default max(20, modes/5)).
    #[arg(long)]
    pub guard: Option<usize>,
    /// The shift as a frequency: σ = −(2π·F)² (default 10 Hz).
    #[arg(long, value_name = "HZ", default_value_t = 10.0)]
    pub shift_hz: f64,
    /// The ordering of the factor of K − σM: `nested-dissection` (METIS)
    /// or `minimum-degree` (AMD, for comparison; with --no-cache, as a
    /// cached analysis solves nothing).
    #[arg(long, default_value = "nested-dissection")]
    pub ordering: tessera::modal::FactorOrdering,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write K.mtx, M.mtx (Matrix Market, exactly the eigenproblem's
    /// matrices) and eigenproblem.json into DIR.
    #[arg(long, value_name = "DIR")]
    pub export_mtx: Option<PathBuf>,
    /// Neither read nor write the modal cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Cache directory (default $TESSERA_CACHE_DIR or ~/.cache/tessera/modal).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

#[derive(Serialize)]
struct ModesJson<'a> {
    mesh: &'a str,
    material: &'a str,
    tets: usize,
    nodes: usize,
    element: &'static str,
    ordering: &'static str,
    dofs: usize,
    modes: usize,
    shift: f64,
    frequencies_hz: Vec<f64>,
    eigenvalues: &'a [f64],
    damping_ratios: Vec<f64>,
    max_residual: f64,
    from_cache: bool,
    seconds: &'a tessera::modal::ModalTimings,
    solver: &'a Option<tessera::modal::EigenStats>,
    /// Bytes held by each table of the body's modal basis.
    bytes: ModalBytes,
}

pub fn settings(
    args_modes: usize,
    guard: Option<usize>,
    shift_hz: f64,
    element: ElementOrder,
) -> anyhow::Result<EigenSettings> {
    anyhow::ensure!(
        shift_hz.is_finite() && shift_hz > 0.0,
        "--shift-hz must be a positive frequency, got {shift_hz}"
    );
    let mut settings = EigenSettings::new(args_modes);
    if let Some(guard) = guard {
        settings.guard = guard;
    }
    settings.shift = -(std::f64::consts::TAU * shift_hz).powi(2);
    settings.element = element;
    Ok(settings)
}

pub fn run(args: &Args, cli: &Cli) -> anyhow::Result<()> {
    let library = material_library(cli)?;
    let material = library.get(&args.body.material)?;
    let spec = MeshSpec::parse(&args.body.mesh)?;
    let mesh = spec.load()?;
    let mut settings = settings(args.modes, args.guard, args.shift_hz, args.body.element)?;
    settings.ordering = args.ordering;
    let cache = (!args.no_cache)
        .then(|| ModalCache::new(args.cache_dir.clone().unwrap_or_else(default_cache_dir)));
    let threads = rayon::ThreadPoolBuilder::new().build()?;
    let bar = solve_progress("modal analysis");
    let (modes, mut report) =
        solve_modes(&mesh, material, &settings, cache.as_ref(), &threads, &|n| {
            bar.set_position(n as u64)
        })
        .with_context(|| {
            format!(
                "modal analysis of `{}` in `{}`",
                args.body.mesh, args.body.material
            )
        })?;
    bar.finish_and_clear();
    if let Some(dir) = &args.export_mtx {
        export(dir, &mesh, material, &settings, &modes, &report)?;
    }
    // The basis a body would hold: its stress and displacement tables.
    let t = std::time::Instant::now();
    let basis = threads.install(|| ModalBasis::from_modes(&mesh, material, modes));
    report.seconds.modal_stress = t.elapsed().as_secs_f64();
    report.seconds.total += report.seconds.modal_stress;
    let dynamics = &basis.dynamics;
    if args.json {
        let out = ModesJson {
            mesh: &args.body.mesh,
            material: &args.body.material,
            tets: mesh.tet_count(),
            nodes: mesh.node_count(),
            element: settings.element.name(),
            ordering: settings.ordering.name(),
            dofs: report.dofs,
            modes: basis.eigenvalues.len(),
            shift: settings.shift,
            frequencies_hz: dynamics
                .iter()
                .map(ModeDynamics::natural_frequency_hz)
                .collect(),
            eigenvalues: &basis.eigenvalues,
            damping_ratios: dynamics.iter().map(ModeDynamics::damping_ratio).collect(),
            max_residual: basis.residuals.iter().copied().fold(0.0, f64::max),
            from_cache: report.from_cache,
            seconds: &report.seconds,
            solver: &report.solver,
            bytes: basis.table_bytes(),
        };
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print_text(
            &args.body.mesh,
            &args.body.material,
            &mesh,
            dynamics,
            &basis.residuals,
            &report,
        );
        println!("tables: {}", table_bytes_text(&basis.table_bytes()));
    }
    Ok(())
}

pub fn print_text(
    spec: &str,
    material: &str,
    mesh: &TetMesh,
    dynamics: &[ModeDynamics],
    residuals: &[f64],
    report: &ModalReport,
) {
    println!(
        "{spec} in {material}: {} tets, {} nodes, {} DOFs, volume {:.6e} m³",
        mesh.tet_count(),
        mesh.node_count(),
        report.dofs,
        mesh.volume()
    );
    println!(
        "{} elastic modes{}:",
        dynamics.len(),
        if report.from_cache {
            " (from cache)"
        } else {
            ""
        }
    );
    for (i, d) in dynamics.iter().enumerate() {
        println!(
            "  mode {:>3}  {:>12.3} Hz   ζ = {:.2e}",
            i + 1,
            d.natural_frequency_hz(),
            d.damping_ratio()
        );
    }
    let s = &report.seconds;
    println!(
        "seconds: assembly {:.3}, factorization {:.3}, lanczos {:.3}, polish {:.3}, modal stress {:.3}, cache {:.3}, total {:.3}",
        s.assembly, s.factorization, s.lanczos, s.polish, s.modal_stress, s.cache, s.total
    );
    if let Some(solver) = &report.solver {
        println!(
            "solver: {} solves, factor nnz {}, {} Lanczos restart(s), {} polish step(s), {} mode(s) recovered by polishing",
            solver.solves, solver.factor_nnz, solver.lanczos_restarts, solver.polish_steps, solver.recovered_modes
        );
    }
    println!(
        "max residual ‖Kx − λMx‖/‖Kx‖ = {:.2e}",
        residuals.iter().copied().fold(0.0, f64::max)
    );
}

/// The modal tables' sizes, for a line of text.
pub fn table_bytes_text(bytes: &ModalBytes) -> String {
    use tessera::limits::human_bytes;
    format!(
        "mode shapes {}, modal stresses {}, modal displacements {}, static correction {}; {} in all",
        human_bytes(bytes.shapes as u64),
        human_bytes(bytes.stress as u64),
        human_bytes(bytes.displacement as u64),
        bytes.static_correction.map_or_else(
            || "not built yet (at the first impact)".to_owned(),
            |b| human_bytes(b as u64)
        ),
        human_bytes(bytes.total() as u64)
    )
}

fn export(
    dir: &std::path::Path,
    mesh: &TetMesh,
    material: &Material,
    settings: &EigenSettings,
    modes: &Modes,
    report: &ModalReport,
) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let elastic = ElasticMesh::new(mesh, settings.element);
    let k = elastic.stiffness(material);
    let m = elastic.lumped_mass(material.density_kg_m3);
    let k_path = dir.join("K.mtx");
    let m_path = dir.join("M.mtx");
    write_matrix_market(&k_path, &k).with_context(|| format!("writing {}", k_path.display()))?;
    write_diagonal_matrix_market(&m_path, &m)
        .with_context(|| format!("writing {}", m_path.display()))?;
    let json = serde_json::json!({
        "shift": settings.shift,
        "modes": settings.modes,
        "element": settings.element.name(),
        "rigid_modes": 6,
        "eigenvalues": modes.eigenvalues,
        "frequencies_hz": mode_dynamics(&modes.eigenvalues, material).iter().map(ModeDynamics::natural_frequency_hz).collect::<Vec<_>>(),
        "seconds": report.seconds,
        "from_cache": report.from_cache,
    });
    let json_path = dir.join("eigenproblem.json");
    std::fs::write(&json_path, serde_json::to_string_pretty(&json)?)
        .with_context(|| format!("writing {}", json_path.display()))?;
    Ok(())
}
