//! `tessera strength`: a material's strength as its tests measure it. The
//! ring-on-ring (ASTM C1499) and three-point bending (ASTM C1161) tests are
//! simulated statically against their closed forms; their effective areas
//! give each test's strength for the material's Weibull modulus, and the
//! slow-crack-growth exponent its strength at other stress rates.

use super::fracture_cmd::numbers;
use super::{material_library, Cli};
use anyhow::Context;
use tessera::config::WeibullCriterion;
use tessera::fem::ElementOrder;
use tessera::fracture::{
    FlawPopulation, FlexureField, RingOnRing, Strength, ThreePointBending, WeibullScaling,
};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The material (from the library).
    #[arg(long, default_value = "float-glass")]
    material: String,
    /// The ring-on-ring disc: diameter, support and load ring diameters,
    /// thickness (m).
    #[arg(long, default_value = "0.05,0.04,0.02,0.002", value_name = "D,DS,DL,H")]
    disc: String,
    /// Rings of the disc's mesh inside the load ring (their spacing must
    /// divide the support and disc radii), and layers through it.
    #[arg(long, default_value = "8,4", value_name = "RINGS,LAYERS")]
    disc_mesh: String,
    /// The three-point bar: span, overhang past each support, width, depth (m).
    #[arg(
        long,
        default_value = "0.04,0.0025,0.004,0.003",
        value_name = "L,O,B,H"
    )]
    bar: String,
    /// Cells of the bar's mesh along the span (even), and across its width
    /// and depth.
    #[arg(long, default_value = "32,6", value_name = "SPAN,SECTION")]
    bar_mesh: String,
    /// The Weibull modulus for the effective sizes, if not the material's.
    #[arg(long, value_name = "M")]
    weibull_modulus: Option<f64>,
    /// How a multiaxial stress loads the flaws in the effective sizes
    /// (`maximum-principal`, `independent-action` or
    /// `batdorf-normal-stress`), if not the material's.
    #[arg(long, value_name = "CRITERION")]
    weibull_criterion: Option<WeibullCriterion>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Force on the disc and on the bar: the fields are linear in it, and the
/// strengths below do not depend on it.
const DISC_FORCE_N: f64 = 1000.0;
const BAR_FORCE_N: f64 = 100.0;

pub fn run(args: &Args, cli: &Cli) -> anyhow::Result<()> {
    let library = material_library(cli)?;
    let material = library.get(&args.material)?.clone();
    let [d, ds, dl, h] = numbers::<4>(&args.disc, "the disc", &args.disc)?;
    let disc = RingOnRing {
        specimen_diameter_m: d,
        support_diameter_m: ds,
        load_diameter_m: dl,
        thickness_m: h,
    };
    let [span, overhang, width, depth] = numbers::<4>(&args.bar, "the bar", &args.bar)?;
    let bar = ThreePointBending {
        span_m: span,
        overhang_m: overhang,
        width_m: width,
        depth_m: depth,
    };
    let [rings, layers] = counts(&args.disc_mesh, "--disc-mesh")?;
    let [span_cells, section_cells] = counts(&args.bar_mesh, "--bar-mesh")?;
    let strength = Strength::of(&material);
    let weibull = match (args.weibull_modulus, strength.weibull) {
        (Some(m), _) if !(1.0..=100.0).contains(&m) => {
            anyhow::bail!("--weibull-modulus {m}: must be in 1 to 100")
        }
        (Some(m), Some(w)) => Some(WeibullScaling { modulus: m, ..w }),
        (Some(m), None) => Some(WeibullScaling {
            modulus: m,
            flaws: FlawPopulation::Surface,
            reference_size: 0.0,
            criterion: WeibullCriterion::default(),
        }),
        (None, w) => w,
    }
    .map(|w| WeibullScaling {
        criterion: args.weibull_criterion.unwrap_or(w.criterion),
        ..w
    });
    let nu = material.poisson_ratio;
    eprintln!("simulating the ring-on-ring test …");
    let disc_field = disc
        .simulate(
            &material,
            DISC_FORCE_N,
            rings,
            layers,
            ElementOrder::Quadratic,
        )
        .with_context(|| format!("--disc {} --disc-mesh {}", args.disc, args.disc_mesh))?;
    eprintln!("simulating the three-point bending test …");
    let bar_field = bar
        .simulate(
            &material,
            BAR_FORCE_N,
            span_cells,
            section_cells,
            section_cells,
            ElementOrder::Quadratic,
        )
        .with_context(|| format!("--bar {} --bar-mesh {}", args.bar, args.bar_mesh))?;
    let disc_closed = disc.closed_form_stress_pa(DISC_FORCE_N, nu);
    let bar_closed = bar.closed_form_stress_pa(BAR_FORCE_N);
    let disc_centre = disc_field.point_stress(0)[0];
    let disc_peak = peak(&disc_field);
    let bar_peak = peak(&bar_field);
    let sizes = weibull.map(|w| {
        let m = w.modulus;
        let (disc_closed_size, bar_closed_size) = match w.flaws {
            FlawPopulation::Surface => (
                Some(disc.plate_theory_effective_area_m2(nu, m, w.criterion)),
                bar.closed_form_effective_area_m2(m),
            ),
            FlawPopulation::Volume => (None, bar.closed_form_effective_volume_m3(m)),
        };
        let disc_size = disc_field.effective_size(w.flaws, m, w.criterion);
        let bar_size = bar_field.effective_size(w.flaws, m, w.criterion);
        // A test reports its closed-form stress at the failure load: the
        // load at which the simulated peak reaches the threshold of the
        // simulated field's effective size.
        let reported = |size: f64, peak: f64, closed: f64| {
            let threshold = Strength {
                weibull: Some(w),
                rate: None,
                ..strength
            }
            .threshold_pa(size, None);
            threshold * closed / peak
        };
        serde_json::json!({
            "modulus": m,
            "flaws": match w.flaws { FlawPopulation::Surface => "surface", FlawPopulation::Volume => "volume" },
            "criterion": w.criterion.name(),
            "ring_on_ring": {
                "simulated": disc_size,
                "thin_plate_theory": disc_closed_size,
                "strength_pa": (w.reference_size > 0.0).then(|| reported(disc_size, disc_peak, disc_closed)),
            },
            "three_point": {
                "simulated": bar_size,
                "closed_form": bar_closed_size,
                "strength_pa": (w.reference_size > 0.0).then(|| reported(bar_size, bar_peak, bar_closed)),
            },
            "closed_form_strength_ratio": disc_closed_size.map(|a| (bar_closed_size / a).powf(1.0 / m)),
        })
    });
    let rates: Vec<(f64, f64)> = match strength.rate {
        Some(r) => [1e-3, 1.0, 1e3, 1e6]
            .iter()
            .map(|f| {
                let rate = r.reference_rate_pa_s * f;
                let only_rate = Strength {
                    weibull: None,
                    ..strength
                };
                (rate, only_rate.threshold_pa(0.0, Some(rate)))
            })
            .collect(),
        None => Vec::new(),
    };
    let json = serde_json::json!({
        "material": args.material,
        "rankine_threshold_pa": strength.reference_pa,
        "ring_on_ring": {
            "disc_m": [d, ds, dl, h],
            "force_n": DISC_FORCE_N,
            "astm_c1499_stress_pa": disc_closed,
            "simulated_centre_stress_pa": disc_centre,
            "simulated_peak_stress_pa": disc_peak,
        },
        "three_point": {
            "bar_m": [span, overhang, width, depth],
            "force_n": BAR_FORCE_N,
            "astm_c1161_stress_pa": bar_closed,
            "simulated_peak_stress_pa": bar_peak,
        },
        "effective_sizes": sizes,
        "rate": rates.iter().map(|(rate, s)| serde_json::json!({"stress_rate_pa_s": rate, "strength_pa": s})).collect::<Vec<_>>(),
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(());
    }
    let mpa = |pa: f64| pa / 1e6;
    let percent = |a: f64, b: f64| 100.0 * (a - b) / b;
    println!(
        "{}: R_c {:.1} MPa{}{}",
        args.material,
        mpa(strength.reference_pa),
        strength.weibull.map_or(String::new(), |w| format!(
            ", at an effective {} of {:.3e} {} (Weibull m {})",
            match w.flaws {
                FlawPopulation::Surface => "area",
                FlawPopulation::Volume => "volume",
            },
            w.reference_size,
            match w.flaws {
                FlawPopulation::Surface => "m²",
                FlawPopulation::Volume => "m³",
            },
            w.modulus
        )),
        strength.rate.map_or(String::new(), |r| format!(
            ", at {:.3e} Pa/s (slow crack growth n {})",
            r.reference_rate_pa_s, r.exponent
        )),
    );
    println!(
        "ring-on-ring, disc {} / rings {} and {} / {} m thick, {DISC_FORCE_N} N:",
        d, ds, dl, h
    );
    println!(
        "  centre stress {:.2} MPa simulated, {:.2} MPa ASTM C1499 ({:+.2} %); simulated peak {:.2} MPa",
        mpa(disc_centre),
        mpa(disc_closed),
        percent(disc_centre, disc_closed),
        mpa(disc_peak)
    );
    println!(
        "three-point bending, span {} m, {} × {} m, {BAR_FORCE_N} N:",
        span, width, depth
    );
    println!(
        "  peak stress {:.2} MPa simulated, {:.2} MPa ASTM C1161 ({:+.2} %)",
        mpa(bar_peak),
        mpa(bar_closed),
        percent(bar_peak, bar_closed)
    );
    match &sizes {
        Some(s) => {
            let what = if s["flaws"] == "surface" {
                "areas (m²)"
            } else {
                "volumes (m³)"
            };
            println!(
                "effective {what} for m = {}, {}:",
                s["modulus"],
                s["criterion"].as_str().unwrap_or("")
            );
            println!(
                "  ring-on-ring {:.4e} simulated, {} thin-plate theory",
                s["ring_on_ring"]["simulated"].as_f64().unwrap_or(0.0),
                s["ring_on_ring"]["thin_plate_theory"]
                    .as_f64()
                    .map_or("(no closed form for volumes)".to_owned(), |a| format!(
                        "{a:.4e}"
                    ))
            );
            println!(
                "  three-point  {:.4e} simulated, {:.4e} ASTM C1683",
                s["three_point"]["simulated"].as_f64().unwrap_or(0.0),
                s["three_point"]["closed_form"].as_f64().unwrap_or(0.0)
            );
            if let (Some(a), Some(b)) = (
                s["ring_on_ring"]["strength_pa"].as_f64(),
                s["three_point"]["strength_pa"].as_f64(),
            ) {
                println!(
                    "  strength: ring-on-ring {:.1} MPa, three-point {:.1} MPa, ratio {:.4} (closed-form area ratio^(1/m): {})",
                    mpa(a),
                    mpa(b),
                    a / b,
                    s["closed_form_strength_ratio"]
                        .as_f64()
                        .map_or("-".to_owned(), |r| format!("{r:.4}"))
                );
            }
        }
        None => println!("no Weibull modulus: one threshold whatever the stressed area"),
    }
    if rates.is_empty() {
        println!("no slow-crack-growth exponent: one threshold whatever the stress rate");
    } else {
        println!("slow crack growth:");
    }
    for (rate, s) in &rates {
        println!(
            "  at {rate:.1e} Pa/s: strength {:.1} MPa (at the reference size)",
            mpa(*s)
        );
    }
    Ok(())
}

/// The largest σ₁ of a field.
fn peak(field: &FlexureField) -> f64 {
    field.principal_pa().into_iter().fold(0.0, f64::max)
}

/// Two positive whole numbers `A,B`.
fn counts(text: &str, option: &str) -> anyhow::Result<[usize; 2]> {
    let values = numbers::<2>(text, "the mesh", text).with_context(|| option.to_owned())?;
    if values
        .iter()
        .any(|v| !(v.fract() == 0.0 && (1.0..=4096.0).contains(v)))
    {
        anyhow::bail!("{option} `{text}`: expected two whole numbers from 1 to 4096");
    }
    Ok(values.map(|v| v as usize))
}
