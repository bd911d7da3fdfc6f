//! `tessera log info FILE`: what a session log holds.

use std::path::PathBuf;
use tessera::session::SessionReader;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Duration, ticks, drops and events of a session log.
    Info {
        file: PathBuf,
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    match &args.action {
        Action::Info { file, json } => {
            let log = SessionReader::open(file)?;
            let summary = log.summary();
            if *json {
                println!("{}", serde_json::to_string_pretty(&summary)?);
                return Ok(());
            }
            println!("{}", file.display());
            println!("  duration   {:.3} s", summary.duration_s);
            println!("  ticks      {}", summary.ticks);
            println!(
                "  dropped    {} tick(s), {} event(s)",
                summary.dropped_ticks, summary.dropped_events
            );
            for (kind, count) in &summary.events {
                println!("  event      {kind}: {count}");
            }
            if !summary.complete {
                println!("  incomplete: no end-of-session record (the run was cut short)");
            }
            if let Some(reason) = &summary.truncated {
                println!("  truncated: read up to the last complete chunk ({reason})");
            }
            Ok(())
        }
    }
}
