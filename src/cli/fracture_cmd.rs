//! `tessera fracture`: applies impacts (or a held load) to a breakable body
//! and reports the cracks and fragments.

use super::{material_library, modes, solve_progress, BodyArgs, Cli};
use anyhow::{bail, Context};
use clap::builder::TypedValueParser as _;
use nalgebra::{Point3, Vector3};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;
use tessera::cache_eviction::CacheEviction;
use tessera::fracture::{
    BreakableBody, ContactPoint, Counters, FractureSettings, Fragment, ImpactOutcome, Impactor,
    ModesAtRest, Pattern, StaticLoad,
};
use tessera::mesh::{write_obj, write_vtk, CellField, MeshSpec, NodeField};
use tessera::modal::{analyse, default_cache_dir, ModalCache};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub body: BodyArgs,
    /// An impact `X,Y,Z:NX,NY,NZ:IMPULSE[:SPEED]`: contact point (m), inward
    /// normal, the rigid step's normal impulse (N·s), approach speed (m/s;
    /// default impulse / impactor mass). The load is computed from the
    /// impactor's mass and speed (Hertz contact against the modes); several
    /// `--impact` act together as one event, sharing the impactor's mass as
    /// their impulses.
    #[arg(long = "impact", value_name = "SPEC", allow_hyphen_values = true)]
    pub impacts: Vec<String>,
    /// A held force `X,Y,Z:FX,FY,FZ` (N) for the quasi-static check.
    #[arg(long = "load", value_name = "SPEC", allow_hyphen_values = true)]
    pub loads: Vec<String>,
    /// Seed of the weak points and the crack noise.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Elastic modes of the basis.
    #[arg(long, default_value_t = 100, value_parser = super::at_least_one)]
    pub modes: usize,
    /// Impactor mass (kg), Young's modulus (Pa) and radius (m); default the
    /// 110 g, 25 mm steel ball.
    #[arg(long, default_value_t = 0.110)]
    pub impactor_mass: f64,
    #[arg(long, default_value_t = 200e9)]
    pub impactor_modulus: f64,
    #[arg(long, default_value_t = 0.0125)]
    pub impactor_radius: f64,
    /// Coefficient of restitution of the impactor on the body against a
    /// rigid wall, in [0, 1]: the contact's own dissipation, which scales
    /// the unloading of the reported exchanged impulse
    /// (`contact_impulses_n_s`; Poisson's hypothesis); 1 is Hertz's
    /// elastic contact. The stresses are the elastic contact's.
    #[arg(long, default_value_t = 1.0)]
    pub impactor_restitution: f64,
    /// γ of Glondu eq. 3.8 (m).
    #[arg(long, default_value_t = FractureSettings::default().energy_length_m, value_name = "METRES",
          value_parser = super::energy_length)]
    pub energy_length: f64,
    /// Most cracks started at one time sample of a contact (Glondu Alg. 3
    /// starts one).
    #[arg(long, default_value_t = FractureSettings::default().max_cracks_per_sample,
          value_parser = clap::value_parser!(u32).range(1..).map(|n| n as usize))]
    pub cracks_per_sample: usize,
    /// Most time samples over one contact, at which the stresses are
    /// tested and cracks start (for convergence studies).
    #[arg(long, default_value_t = FractureSettings::default().max_steps,
          value_parser = clap::value_parser!(u32).range(1..=4096).map(|n| n as usize))]
    pub max_samples: usize,
    /// Leave out the static correction of the modes not retained: stresses
    /// from the modal sum alone (Glondu 2012 §3.3.4), for comparison.
    #[arg(long)]
    pub no_static_correction: bool,
    /// Add the static correction's second-order term, the dynamic
    /// amplification of the modes left out (docs/fracture.md): it matters
    /// with few modes and costs another solve per contact.
    #[arg(long, conflicts_with = "no_static_correction")]
    pub second_order_correction: bool,
    /// Let the modes left out answer the contact as a continuum of modes
    /// above the basis, whose response builds up and rings, instead of at
    /// once (docs/fracture.md, the static correction)
    #[arg(long, conflicts_with = "no_static_correction")]
    pub residual_tail: bool,
    /// Set the elastic modes above the N-th to rest during the event, at
    /// `--rest-at`: what the modes above a basis of N carry from one
    /// contact phase to the next, measured on a larger basis (a study, not
    /// a simulation; docs/fracture.md)
    #[arg(long, value_name = "N", requires = "rest_at", value_parser = super::at_least_one)]
    pub rest_modes_above: Option<usize>,
    /// When `--rest-modes-above` sets its modes to rest (s after the
    /// event's start)
    #[arg(long, value_name = "SECONDS", requires = "rest_modes_above",
          value_parser = super::non_negative_seconds)]
    pub rest_at: Option<f64>,
    /// Start every crack of an event in the intact body's stress (Glondu
    /// 2012 Alg. 3), without the relief of the cracks before it, for
    /// comparison.
    #[arg(long)]
    pub no_crack_shielding: bool,
    /// Pay each crack by the energy of the traction on its plane, the
    /// stress its opening releases, instead of the whole strain-energy
    /// density (docs/fracture.md, the energy stop).
    #[arg(long)]
    pub crack_plane_energy: bool,
    /// Evaluate only the elements that can crack, as the world does: an
    /// event that breaks nothing then costs less and reports a lower
    /// bound of its peak stress (`peak_stress_pa`); one that breaks
    /// reports the same cracks and pieces.
    #[arg(long)]
    pub no_exact_peak: bool,
    /// Run the event N more times after the first, each on a copy of the
    /// body as it was before it (warm: the process, its threads and the
    /// CPU caches have run it once), and report each run's milliseconds
    /// (`repeats`).
    #[arg(long, value_name = "N", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=1000).map(|n| n as usize))]
    pub repeat: usize,
    /// Before each repeated event, write 128 MB elsewhere, so that it finds
    /// none of the tables the last one read in the CPU caches, as when
    /// other work runs between fractures.
    #[arg(long, requires = "repeat")]
    pub cache_cold: bool,
    /// Then strike the event's largest fragment, `NX,NY,NZ:IMPULSE[:SPEED]`
    /// (inward normal, impulse in N·s, speed in m/s), once it has a modal
    /// basis of its own as the world's background analysis gives it
    /// (its intact part), where an impactor moving along the normal
    /// through that part's centre meets it first (a bent piece the line
    /// misses: the centre of its face nearest the line). Reported as
    /// `fragment_event` (repeated as the first event is).
    #[arg(long, value_name = "SPEC", allow_hyphen_values = true)]
    pub strike_fragment: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write one OBJ per fragment and fracture.vtu (damage per tet,
    /// fragment per node) into DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write the fracture pattern's statistics (Glondu §5.1: fragment
    /// areas, crack lengths, junctions) as JSON to FILE, for `tessera
    /// pattern`.
    #[arg(long, value_name = "FILE")]
    pub pattern: Option<PathBuf>,
}

/// `N` finite numbers separated by commas; errors name `what` and `spec`.
pub(super) fn numbers<const N: usize>(
    text: &str,
    what: &str,
    spec: &str,
) -> anyhow::Result<[f64; N]> {
    let values: Vec<f64> = text
        .split(',')
        .map(|v| v.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .with_context(|| format!("`{spec}`: {what} `{text}` is not a list of numbers"))?;
    let array: [f64; N] = values.try_into().map_err(|v: Vec<f64>| {
        anyhow::anyhow!("`{spec}`: {what} needs {N} numbers, got {}", v.len())
    })?;
    if array.iter().any(|v| !v.is_finite()) {
        bail!("`{spec}`: {what} must be finite");
    }
    Ok(array)
}

fn parse_impact(spec: &str, impactor: &Impactor) -> anyhow::Result<ContactPoint> {
    const FORM: &str = "X,Y,Z:NX,NY,NZ:IMPULSE[:SPEED]";
    let Some((point, strike)) = spec.split_once(':') else {
        bail!("--impact `{spec}`: expected {FORM}");
    };
    let point = numbers::<3>(point, "the point", spec)?;
    parse_strike(strike, "--impact", spec, FORM, impactor).map(|c| ContactPoint {
        point_m: Point3::from(point),
        ..c
    })
}

/// The `NX,NY,NZ:IMPULSE[:SPEED]` part `strike` of `flag`'s value `spec`
/// (of the form `form`), as a contact at the origin.
fn parse_strike(
    strike: &str,
    flag: &str,
    spec: &str,
    form: &str,
    impactor: &Impactor,
) -> anyhow::Result<ContactPoint> {
    let parts: Vec<&str> = strike.split(':').collect();
    if !(2..=3).contains(&parts.len()) {
        bail!("{flag} `{spec}`: expected {form}");
    }
    let normal = Vector3::from(numbers::<3>(parts[0], "the normal", spec)?);
    if normal.norm() == 0.0 {
        bail!("{flag} `{spec}`: the normal is zero");
    }
    let [impulse] = numbers::<1>(parts[1], "the impulse", spec)?;
    if impulse <= 0.0 {
        bail!("{flag} `{spec}`: the impulse must be positive");
    }
    let speed = match parts.get(2) {
        Some(text) => numbers::<1>(text, "the speed", spec)?[0],
        None => impulse / impactor.mass_kg,
    };
    if speed <= 0.0 {
        bail!("{flag} `{spec}`: the speed must be positive");
    }
    Ok(ContactPoint {
        point_m: Point3::origin(),
        normal: normal.normalize(),
        impulse_n_s: impulse,
        relative_speed_m_s: speed,
        impactor: *impactor,
        face: None,
        gap_m: 0.0,
    })
}

fn parse_load(spec: &str) -> anyhow::Result<StaticLoad> {
    let parts: Vec<&str> = spec.split(':').collect();
    if parts.len() != 2 {
        bail!("--load `{spec}`: expected X,Y,Z:FX,FY,FZ");
    }
    Ok(StaticLoad {
        point_m: Point3::from(numbers::<3>(parts[0], "the point", spec)?),
        force_n: Vector3::from(numbers::<3>(parts[1], "the force", spec)?),
        face: None,
    })
}

#[derive(Serialize)]
struct FragmentJson {
    id: u32,
    is_gap: bool,
    volume_m3: f64,
    mass_kg: f64,
    centroid_m: [f64; 3],
    triangles: usize,
    tets: usize,
}

/// The contact loads whose static-correction residual the event solved
/// directly, and those it formed from kept unit shapes (`fracture::Counters`).
#[derive(Serialize, Clone, Copy)]
struct ResidualLoads {
    solved: u64,
    from_unit_shapes: u64,
}

#[derive(Serialize)]
struct Milliseconds {
    initiation: f64,
    /// Of `initiation`, the event's scaled threshold.
    strength: f64,
    propagation: f64,
    meshing: f64,
    total: f64,
}

pub fn run(args: &Args, cli: &Cli) -> anyhow::Result<()> {
    if args.impacts.is_empty() && args.loads.is_empty() {
        bail!("give at least one --impact or --load");
    }
    let impactor = Impactor {
        mass_kg: args.impactor_mass,
        youngs_modulus_pa: args.impactor_modulus,
        poisson_ratio: 0.3,
        radius_m: args.impactor_radius,
        restitution: args.impactor_restitution,
    };
    if !(impactor.mass_kg > 0.0 && impactor.youngs_modulus_pa > 0.0 && impactor.radius_m > 0.0) {
        bail!("--impactor-mass, --impactor-modulus and --impactor-radius must be positive");
    }
    if !(0.0..=1.0).contains(&impactor.restitution) {
        bail!(
            "--impactor-restitution {} must be in [0, 1]",
            impactor.restitution
        );
    }
    let mut contacts: Vec<ContactPoint> = args
        .impacts
        .iter()
        .map(|s| parse_impact(s, &impactor))
        .collect::<Result<_, _>>()?;
    // One impactor touching at every point: its mass is shared among them.
    let impulses: Vec<f64> = contacts.iter().map(|c| c.impulse_n_s).collect();
    for (contact, shared) in contacts.iter_mut().zip(impactor.shared(&impulses)) {
        contact.impactor = shared;
    }
    let loads: Vec<StaticLoad> = args
        .loads
        .iter()
        .map(|s| parse_load(s))
        .collect::<Result<_, _>>()?;
    let strike_fragment = args
        .strike_fragment
        .as_deref()
        .map(|spec| {
            parse_strike(
                spec,
                "--strike-fragment",
                spec,
                "NX,NY,NZ:IMPULSE[:SPEED]",
                &impactor,
            )
        })
        .transpose()?;
    if let Some(above) = args.rest_modes_above.filter(|&n| n >= args.modes) {
        bail!(
            "--rest-modes-above {above}: the basis has {} modes, none above mode {above}",
            args.modes
        );
    }
    let library = material_library(cli)?;
    let material = library.get(&args.body.material)?.clone();
    let rankine_threshold_pa = material.rankine_threshold_pa;
    let mesh = MeshSpec::parse(&args.body.mesh)?.load()?;
    let settings = modes::settings(args.modes, None, 10.0, args.body.element)?;
    let threads = rayon::ThreadPoolBuilder::new().build()?;
    let cache = ModalCache::new(default_cache_dir());
    let bar = solve_progress("modal analysis");
    let (basis, _) = analyse(&mesh, &material, &settings, Some(&cache), &threads, &|n| {
        bar.set_position(n as u64)
    })?;
    bar.finish_and_clear();

    let fracture_settings = FractureSettings {
        energy_length_m: args.energy_length,
        max_cracks_per_sample: args.cracks_per_sample,
        max_steps: args.max_samples,
        static_correction: !args.no_static_correction,
        second_order_correction: args.second_order_correction,
        residual_tail: args.residual_tail,
        modes_at_rest: args
            .rest_modes_above
            .zip(args.rest_at)
            .map(|(first_mode, time_s)| ModesAtRest { first_mode, time_s }),
        crack_shielding: !args.no_crack_shielding,
        crack_plane_energy: args.crack_plane_energy,
        exact_peak_stress: !args.no_exact_peak,
        seed: args.seed,
        ..Default::default()
    };
    // Making the body (weak points, fracture state, per-tet tables) is
    // preparation, like the modal basis; the event is timed from the impact.
    let mut body = BreakableBody::new(mesh, material, basis, args.seed).with_context(|| {
        format!(
            "--mesh {} --material {}",
            args.body.mesh, args.body.material
        )
    })?;
    let mut eviction = CacheEviction::new(args.cache_cold);
    let pristine = (args.repeat > 0).then(|| body.clone());
    let EventRun {
        outcomes,
        fragments,
        milliseconds,
        residual_loads,
    } = run_event(&mut body, &contacts, &loads, &fracture_settings, &threads);
    let repeats = pristine
        .map(|pristine| {
            repeat_event(
                &pristine,
                &contacts,
                &loads,
                &fracture_settings,
                &threads,
                args.repeat,
                &mut eviction,
            )
        })
        .unwrap_or_default();
    let fragment_event = strike_fragment
        .map(|strike| {
            strike_largest_fragment(
                &body,
                &fragments,
                strike,
                &fracture_settings,
                &cache,
                &threads,
                args.repeat,
                &mut eviction,
            )
        })
        .transpose()?;
    let pattern = Pattern::of(body.mesh(), body.state(), &fragments);
    if let Some(path) = &args.pattern {
        std::fs::write(path, serde_json::to_string_pretty(&pattern)?)
            .with_context(|| format!("writing the pattern to {}", path.display()))?;
    }
    let cracks: Vec<_> = outcomes
        .iter()
        .flat_map(|o| o.cracks.iter().cloned())
        .collect();
    let crack_area: f64 = cracks.iter().map(|c| c.area_m2).fold(0.0, |a, b| a + b);

    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for f in &fragments {
            write_obj(
                &dir.join(format!("fragment_{:04}.obj", f.id)),
                &f.points,
                &f.triangles,
            )?;
        }
        let damaged: Vec<f64> = (0..body.mesh().tet_count())
            .map(|t| f64::from(u8::from(body.state().is_damaged(t))))
            .collect();
        let fragment_of: Vec<f64> = body
            .state()
            .node_fragments()
            .iter()
            .map(|&f| f64::from(f))
            .collect();
        write_vtk(
            &dir.join("fracture.vtu"),
            body.mesh(),
            &[CellField {
                name: "damaged",
                components: 1,
                values: &damaged,
            }],
            &[NodeField {
                name: "fragment",
                components: 1,
                values: &fragment_of,
            }],
        )?;
    }
    if args.json {
        let json = serde_json::json!({
            "mesh": args.body.mesh,
            "material": args.body.material,
            "tets": body.mesh().tet_count(),
            "weak_points": body.weak_points().len(),
            "fragments": fragments.iter().map(|f| FragmentJson {
                id: f.id,
                is_gap: f.is_gap,
                volume_m3: f.volume_m3,
                mass_kg: f.mass_kg,
                centroid_m: [f.centroid_m.x, f.centroid_m.y, f.centroid_m.z],
                triangles: f.triangles.len(),
                tets: f.tets.len(),
            }).collect::<Vec<_>>(),
            "crack_area_m2": crack_area,
            "pattern": pattern,
            "bytes": body.table_bytes(),
            "cracks": cracks,
            "events": events_json(&outcomes),
            "residual_loads": residual_loads,
            "milliseconds": milliseconds,
            "repeats": repeats,
            "fragment_event": fragment_event.as_ref().map(FragmentEvent::json),
        });
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        for o in &outcomes {
            println!(
                "event: contact {:.1} µs in {} phase(s) (peak force {:.1} N, {:.1} N in the first phase, \
                 impulse {:.4} N·s, restitution {:.3}), sampled in {} step(s) of {:.1} µs, \
                 peak principal stress {:.2} MPa at {:.1} µs (threshold {:.1} MPa{})",
                o.contact_duration_s * 1e6,
                o.contact.phases,
                o.contact.peak_force_n,
                o.contact.first_phase_peak_force_n,
                o.contact.striking_impulse_n_s,
                o.contact.restitution,
                o.steps,
                o.time_step_s * 1e6,
                o.peak_stress_pa / 1e6,
                o.peak_stress_time_s * 1e6,
                o.strength.threshold_pa / 1e6,
                scaling(&o.strength, rankine_threshold_pa)
            );
        }
        for (i, c) in cracks.iter().enumerate() {
            println!(
                "crack {}: {} elements, {:.3e} m², stopped by {:?}",
                i + 1,
                c.elements,
                c.area_m2,
                c.stop
            );
        }
        println!(
            "{} fragment(s), crack area {:.3e} m²",
            fragments.len(),
            crack_area
        );
        println!("pattern: {}", super::pattern_cmd::summary(&pattern));
        let bytes = body.table_bytes();
        println!(
            "tables: {}; weak points {}, fracture state {}",
            modes::table_bytes_text(&bytes.modal),
            tessera::limits::human_bytes(bytes.weak_points as u64),
            tessera::limits::human_bytes(bytes.fracture_state as u64)
        );
        for f in &fragments {
            println!(
                "  fragment {:>4}{}: {:.3e} m³, {:.4} kg, {} triangles",
                f.id,
                if f.is_gap { " (gap)" } else { "" },
                f.volume_m3,
                f.mass_kg,
                f.triangles.len()
            );
        }
        if residual_loads.solved + residual_loads.from_unit_shapes > 0 {
            println!(
                "static correction: {} load(s) solved, {} formed from kept unit shapes",
                residual_loads.solved, residual_loads.from_unit_shapes
            );
        }
        print_milliseconds("milliseconds", &milliseconds);
        print_repeats(&repeats, args.cache_cold);
        if let Some(event) = &fragment_event {
            let [x, y, z] = event.point_m;
            println!(
                "fragment {} ({} intact tets, its own {} modes) struck at ({x:.4}, {y:.4}, {z:.4}) m: \
                 peak principal stress {:.2} MPa, {} crack(s), {} fragment(s)",
                event.fragment,
                event.tets,
                event.modes,
                event.outcome.peak_stress_pa / 1e6,
                event.outcome.cracks.len(),
                event.fragments
            );
            print_milliseconds("  milliseconds", &event.milliseconds);
            print_repeats(&event.repeats, args.cache_cold);
        }
        if let Some(dir) = &args.out {
            println!("wrote {}", dir.display());
        }
    }
    Ok(())
}

/// One event's physics and wall times.
struct EventRun {
    outcomes: Vec<ImpactOutcome>,
    fragments: Vec<Fragment>,
    milliseconds: Milliseconds,
    residual_loads: ResidualLoads,
}

/// The impacts as one event, then the held loads, then the fragments'
/// meshes, timed from the impact (making the body is preparation, like
/// its modal basis).
fn run_event(
    body: &mut BreakableBody,
    contacts: &[ContactPoint],
    loads: &[StaticLoad],
    settings: &FractureSettings,
    threads: &rayon::ThreadPool,
) -> EventRun {
    let mut counters = Counters::default();
    let start = Instant::now();
    let mut outcomes = Vec::new();
    if !contacts.is_empty() {
        outcomes.push(body.impact(contacts, settings, threads, &mut counters));
    }
    if !loads.is_empty() {
        outcomes.push(body.static_load(loads, settings, threads, &mut counters));
    }
    let t = Instant::now();
    let fragments = body.fragments(threads);
    let meshing = t.elapsed().as_secs_f64() * 1e3;
    let milliseconds = Milliseconds {
        initiation: counters.initiation_s * 1e3,
        strength: counters.strength_s * 1e3,
        propagation: counters.propagation_s * 1e3,
        meshing,
        total: start.elapsed().as_secs_f64() * 1e3,
    };
    EventRun {
        outcomes,
        fragments,
        milliseconds,
        residual_loads: ResidualLoads {
            solved: counters.residual_loads_solved,
            from_unit_shapes: counters.residual_loads_from_unit_shapes,
        },
    }
}

/// A repeated event: its wall times, and its cracks and pieces, which are
/// the first run's (the engine is deterministic).
#[derive(Serialize)]
struct Repeat {
    milliseconds: Milliseconds,
    cracks: usize,
    fragments: usize,
}

/// `count` runs of the event, each on a copy of `pristine`, the caches
/// evicted first by `eviction` (which may be disabled).
fn repeat_event(
    pristine: &BreakableBody,
    contacts: &[ContactPoint],
    loads: &[StaticLoad],
    settings: &FractureSettings,
    threads: &rayon::ThreadPool,
    count: usize,
    eviction: &mut CacheEviction,
) -> Vec<Repeat> {
    (0..count)
        .map(|_| {
            let mut body = pristine.clone();
            eviction.evict();
            let run = run_event(&mut body, contacts, loads, settings, threads);
            Repeat {
                milliseconds: run.milliseconds,
                cracks: run.outcomes.iter().map(|o| o.cracks.len()).sum(),
                fragments: run.fragments.len(),
            }
        })
        .collect()
}

/// The event `--strike-fragment` made: a fragment of the first struck in
/// its own basis.
struct FragmentEvent {
    /// The fragment's identifier in the first event.
    fragment: u32,
    /// Its intact tets, which its basis holds.
    tets: usize,
    modes: usize,
    point_m: [f64; 3],
    outcome: ImpactOutcome,
    fragments: usize,
    /// The fragment body's precomputed tables.
    bytes: tessera::fracture::BodyBytes,
    milliseconds: Milliseconds,
    repeats: Vec<Repeat>,
}

impl FragmentEvent {
    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "fragment": self.fragment,
            "tets": self.tets,
            "modes": self.modes,
            "point_m": self.point_m,
            "cracks": self.outcome.cracks,
            "fragments": self.fragments,
            "bytes": self.bytes,
            "events": events_json(std::slice::from_ref(&self.outcome)),
            "milliseconds": self.milliseconds,
            "repeats": self.repeats,
        })
    }
}

/// Strikes the largest of `pieces` (the fragments of `body`'s event) with
/// `strike` once it has its own modal basis, analysed as the world's
/// background analysis does (`BreakableBody::own_basis_job`,
/// `BasisJob::run`, the same cache); then `repeat` more times on copies
/// of it.
#[allow(clippy::too_many_arguments)]
fn strike_largest_fragment(
    body: &BreakableBody,
    pieces: &[Fragment],
    strike: ContactPoint,
    settings: &FractureSettings,
    cache: &ModalCache,
    threads: &rayon::ThreadPool,
    repeat: usize,
    eviction: &mut CacheEviction,
) -> anyhow::Result<FragmentEvent> {
    if pieces.len() < 2 {
        bail!("--strike-fragment: the first event did not break the body");
    }
    let largest = pieces
        .iter()
        .filter(|f| !f.is_gap)
        .max_by(|a, b| a.volume_m3.total_cmp(&b.volume_m3))
        .context("--strike-fragment: the first event left only gap pieces")?;
    let job = body.own_basis_job(largest, 0, 1).with_context(|| {
        format!(
            "--strike-fragment: fragment {} has no intact part to analyse",
            largest.id
        )
    })?;
    let bar = solve_progress("the fragment's modal analysis");
    let modes = job.settings.modes;
    let result = job.run(Some(cache), threads, &|n| bar.set_position(n as u64));
    bar.finish_and_clear();
    let mut piece = body.with_own_basis(result).with_context(|| {
        format!(
            "--strike-fragment: fragment {}'s modal analysis",
            largest.id
        )
    })?;
    let point_m = strike_point(piece.mesh(), &strike.normal).with_context(|| {
        format!(
            "--strike-fragment: no face of fragment {}'s intact part faces the impactor",
            largest.id
        )
    })?;
    let contacts = [ContactPoint { point_m, ..strike }];
    let pristine = (repeat > 0).then(|| piece.clone());
    let mut run = run_event(&mut piece, &contacts, &[], settings, threads);
    let repeats = pristine
        .map(|p| repeat_event(&p, &contacts, &[], settings, threads, repeat, eviction))
        .unwrap_or_default();
    Ok(FragmentEvent {
        fragment: largest.id,
        tets: piece.mesh().tet_count(),
        modes,
        point_m: [point_m.x, point_m.y, point_m.z],
        outcome: run.outcomes.remove(0),
        fragments: run.fragments.len(),
        bytes: piece.table_bytes(),
        milliseconds: run.milliseconds,
        repeats,
    })
}

/// Where a body moving along `normal` through the centre of `mesh`'s
/// volume touches its boundary first: of the line's crossings of the
/// boundary triangles (Möller & Trumbore 1997), the farthest back along
/// `normal`. A piece whose line misses it (a bent or notched piece) is
/// struck at the centre of the boundary triangle facing the impactor
/// (within 60° of it) whose centre lies nearest the line.
fn strike_point(mesh: &tessera::mesh::TetMesh, normal: &Vector3<f64>) -> Option<Point3<f64>> {
    let volume = mesh.volume();
    let centre = (0..mesh.tet_count()).fold(Point3::origin(), |sum, t| {
        sum + mesh.tet_centroid(t).coords * (mesh.tet_volume(t) / volume)
    });
    let (points, triangles) = mesh.boundary_surface();
    let back = -normal;
    let corners = |tri: &[u32; 3]| tri.map(|i| points[i as usize]);
    let crossing = triangles
        .iter()
        .filter_map(|tri| {
            let [a, b, c] = corners(tri);
            let (e1, e2) = (b - a, c - a);
            let p = back.cross(&e2);
            let det = e1.dot(&p);
            if det.abs() < 1e-300 {
                return None;
            }
            let s = centre - a;
            let u = s.dot(&p) / det;
            let q = s.cross(&e1);
            let v = back.dot(&q) / det;
            let inside = (0.0..=1.0).contains(&u) && v >= 0.0 && u + v <= 1.0;
            inside.then(|| e2.dot(&q) / det)
        })
        .max_by(f64::total_cmp);
    if let Some(t) = crossing {
        return Some(centre + back * t);
    }
    triangles
        .iter()
        .filter_map(|tri| {
            let [a, b, c] = corners(tri);
            let outward = (b - a).cross(&(c - a)).normalize();
            let middle = Point3::from((a.coords + b.coords + c.coords) / 3.0);
            let off_line = (middle - centre) - normal * (middle - centre).dot(normal);
            (outward.dot(normal) <= -0.5).then_some((off_line.norm(), middle))
        })
        .min_by(|x, y| x.0.total_cmp(&y.0))
        .map(|(_, middle)| middle)
}

fn events_json(outcomes: &[ImpactOutcome]) -> Vec<serde_json::Value> {
    outcomes
        .iter()
        .map(|o| {
            serde_json::json!({
                "contact_duration_s": o.contact_duration_s,
                "time_step_s": o.time_step_s,
                "steps": o.steps,
                "peak_stress_pa": o.peak_stress_pa,
                "peak_stress_time_s": o.peak_stress_time_s,
                "strength": o.strength,
                "points_evaluated": o.points_evaluated,
                "contact": o.contact,
                "contact_impulses_n_s": o.contact_impulses_n_s,
            })
        })
        .collect()
}

fn print_milliseconds(label: &str, ms: &Milliseconds) {
    println!(
        "{label}: initiation {:.2} (of which the threshold {:.2}), propagation {:.2}, meshing {:.2}, total {:.2}",
        ms.initiation, ms.strength, ms.propagation, ms.meshing, ms.total
    );
}

fn print_repeats(repeats: &[Repeat], cache_cold: bool) {
    let kind = if cache_cold { "cache-cold" } else { "warm" };
    for (i, r) in repeats.iter().enumerate() {
        print_milliseconds(
            &format!(
                "  again {} ({kind}; {} crack(s), {} fragment(s)), milliseconds",
                i + 1,
                r.cracks,
                r.fragments
            ),
            &r.milliseconds,
        );
    }
}

/// How an event's threshold came from R_c, if it was scaled.
fn scaling(strength: &tessera::fracture::EventStrength, rankine_threshold_pa: f64) -> String {
    let mut parts = Vec::new();
    if strength.effective_size > 0.0 {
        parts.push(format!("effective size {:.3e}", strength.effective_size));
    }
    if strength.stress_rate_pa_s > 0.0 {
        parts.push(format!(
            "stress rate {:.3e} Pa/s",
            strength.stress_rate_pa_s
        ));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(
            ": R_c {:.1} MPa at {}",
            rankine_threshold_pa / 1e6,
            parts.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera::mesh::{box_mesh, TetMesh};

    /// A 3 × 3 × 1 m slab of 3 × 3 cells, without its middle cell when
    /// `ring`.
    fn slab(ring: bool) -> TetMesh {
        let full = box_mesh([3.0, 3.0, 1.0], [3, 3, 1], None).unwrap();
        let tets = (0..full.tet_count())
            .filter(|&t| {
                let c = full.tet_centroid(t);
                !(ring && (1.0..2.0).contains(&c.x) && (1.0..2.0).contains(&c.y))
            })
            .map(|t| full.tets()[t])
            .collect();
        TetMesh::new(full.nodes().to_vec(), tets).unwrap()
    }

    #[test]
    fn a_strike_meets_the_top_above_the_centre_or_the_face_nearest_the_line() {
        let down = -Vector3::z();
        let hit = strike_point(&slab(false), &down).unwrap();
        assert!((hit - Point3::new(1.5, 1.5, 1.0)).norm() < 1e-12, "{hit}");
        // Struck from below, the same line meets the bottom.
        let below = strike_point(&slab(false), &Vector3::z()).unwrap();
        assert!(
            (below - Point3::new(1.5, 1.5, 0.0)).norm() < 1e-12,
            "{below}"
        );
        // The ring's centre is in its hole: the line misses it, and the
        // strike lands on a top face at the hole's edge.
        let ring = strike_point(&slab(true), &down).unwrap();
        let off_line = (ring.x - 1.5).hypot(ring.y - 1.5);
        assert!((ring.z - 1.0).abs() < 1e-12, "{ring}");
        assert!(off_line > 0.5 && off_line < 1.0, "{ring}");
    }
}
