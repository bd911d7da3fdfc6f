//! `tessera demo`: the README's main job. At this stage it runs the modal
//! analysis of the default ceramic floor tile (15 × 15 × 0.6 cm) and prints
//! its lowest frequencies and the time of each phase.

use super::{material_library, modes, solve_progress, BodyArgs, Cli};
use tessera::mesh::MeshSpec;
use tessera::modal::{analyse, default_cache_dir, ModalCache};

/// The tile of the tile-on-supports scene.
pub const DEFAULT_TILE: &str = "tile:0.15,0.006:30,2";
pub const DEFAULT_MATERIAL: &str = "ceramic-tile";

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Number of elastic modes.
    #[arg(long, default_value_t = 100)]
    pub modes: usize,
}

pub fn run(args: &Args, cli: &Cli) -> anyhow::Result<()> {
    let modes_args = modes::Args {
        body: BodyArgs {
            mesh: DEFAULT_TILE.into(),
            material: DEFAULT_MATERIAL.into(),
        },
        modes: args.modes,
        guard: None,
        shift_hz: 10.0,
        json: args.json,
        export_mtx: None,
        no_cache: false,
        cache_dir: None,
    };
    if args.json {
        return modes::run(&modes_args, cli);
    }
    let library = material_library(cli)?;
    let material = library.get(DEFAULT_MATERIAL)?;
    let mesh = MeshSpec::parse(DEFAULT_TILE)?.load()?;
    let settings = modes::settings(args.modes, None, 10.0)?;
    let cache = ModalCache::new(default_cache_dir());
    println!("tessera demo: modal analysis of the default ceramic floor tile (15 × 15 × 0.6 cm)");
    let bar = solve_progress("modal analysis");
    let (basis, report) = analyse(&mesh, material, &settings, Some(&cache), &|n| {
        bar.set_position(n as u64)
    })?;
    bar.finish_and_clear();
    modes::print_text(
        DEFAULT_TILE,
        DEFAULT_MATERIAL,
        &mesh,
        &basis.dynamics,
        &basis.residuals,
        &report,
    );
    println!(
        "modal stress table: {} elements × {} modes, {:.1} MiB (f32), built in {:.3} s",
        mesh.tet_count(),
        basis.mode_count(),
        basis.stress().bytes() as f64 / (1024.0 * 1024.0),
        report.seconds.modal_stress
    );
    println!("(cache: {})", cache.dir().display());
    Ok(())
}
