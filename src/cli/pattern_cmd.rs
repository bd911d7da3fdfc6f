//! `tessera pattern`: the distance between two fracture patterns (Glondu
//! 2012 eq. 5.1), each written by `tessera fracture --pattern FILE` or
//! `tessera drop --pattern DIR`.

use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use tessera::fracture::{Pattern, PatternWeights};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Two pattern files (`tessera fracture … --pattern FILE`, `tessera
    /// drop … --pattern DIR`).
    #[arg(num_args = 2, required = true, value_name = "PATTERN")]
    patterns: Vec<PathBuf>,
    /// The weights w_frag,w_crack,w_junc of eq. (5.1); Glondu's by default.
    #[arg(long, default_value = "3,1,1", value_name = "W,W,W")]
    weights: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let weights = parse_weights(&args.weights)?;
    let [a, b] = [&args.patterns[0], &args.patterns[1]].map(|p| read_pattern(p));
    let (a, b) = (a?, b?);
    let d = a.distance(&b, &weights);
    if args.json {
        let json = serde_json::json!({
            "patterns": args.patterns,
            "weights": weights,
            "distance": d,
        });
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        for (path, p) in args.patterns.iter().zip([&a, &b]) {
            println!("{}: {}", path.display(), summary(p));
        }
        println!(
            "distance (eq. 5.1): {:.4} = {} × fragments {:.4} + {} × cracks {:.4} + {} × junctions {:.4}",
            d.total,
            weights.fragments,
            d.fragments,
            weights.cracks,
            d.cracks,
            weights.junctions,
            d.junctions
        );
    }
    Ok(())
}

/// One line about a pattern.
pub fn summary(p: &Pattern) -> String {
    format!(
        "{} fragment(s) (+{} gap), largest {:.3} of the area; {} crack(s), longest {:.3} √area; {} junction(s)",
        p.fragments,
        p.gap_fragments,
        p.fragment_areas.first().copied().unwrap_or(0.0),
        p.crack_lengths.len(),
        p.crack_lengths.first().copied().unwrap_or(0.0),
        p.junction_degrees.len()
    )
}

fn parse_weights(text: &str) -> anyhow::Result<PatternWeights> {
    let [fragments, cracks, junctions] = super::fracture_cmd::numbers::<3>(text, "W,W,W", text)
        .with_context(|| format!("--weights `{text}`"))?;
    if [fragments, cracks, junctions].iter().any(|w| *w < 0.0) {
        bail!("--weights `{text}`: weights must be non-negative");
    }
    Ok(PatternWeights {
        fragments,
        cracks,
        junctions,
    })
}

fn read_pattern(path: &Path) -> anyhow::Result<Pattern> {
    let bytes = std::fs::metadata(path)
        .with_context(|| format!("pattern file {}", path.display()))?
        .len();
    tessera::limits::check_memory(|| format!("pattern file {}", path.display()), bytes as f64)?;
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("pattern file {}", path.display()))?;
    let pattern: Pattern = serde_json::from_str(&text).with_context(|| {
        format!(
            "pattern file {}: not a pattern written by `tessera fracture --pattern` or `tessera drop --pattern`",
            path.display()
        )
    })?;
    let bad = pattern
        .fragment_areas
        .iter()
        .chain(&pattern.crack_lengths)
        .chain([&pattern.thickness_m, &pattern.area_m2])
        .find(|v| !(v.is_finite() && **v >= 0.0))
        .copied();
    if let Some(bad) = bad {
        bail!(
            "pattern file {}: {bad} is not a non-negative number (fragment_areas, crack_lengths, thickness_m and area_m2 must be)",
            path.display()
        );
    }
    Ok(pattern)
}
