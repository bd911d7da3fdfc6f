//! `tessera devices`: HID devices present and the profiles that match them.

use anyhow::Context;
use std::path::PathBuf;
use tessera::device::hid::present_devices;
use tessera::device::DeviceProfile;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder of device profiles (default: the repository's devices/).
    #[arg(long, value_name = "DIR")]
    pub profiles: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let dir = args
        .profiles
        .clone()
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/devices")));
    let profiles = DeviceProfile::load_dir(&dir).context("reading device profiles")?;
    // No HID access (no hidraw, a container) is not an error: no devices.
    let (present, hid_error) = match present_devices() {
        Ok(list) => (list, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    let matches = |vid: u16, pid: u16, page: u16| -> Vec<String> {
        profiles
            .iter()
            .filter(|(_, p)| {
                p.vendor_id == vid && p.product_id == pid && p.usage_page.is_none_or(|u| u == page)
            })
            .map(|(path, _)| path.display().to_string())
            .collect()
    };
    if args.json {
        let devices: Vec<_> = present
            .iter()
            .map(|d| {
                serde_json::json!({
                    "vendor_id": d.vendor_id,
                    "product_id": d.product_id,
                    "usage_page": d.usage_page,
                    "product": d.product,
                    "path": d.path,
                    "profiles": matches(d.vendor_id, d.product_id, d.usage_page),
                })
            })
            .collect();
        let json = serde_json::json!({
            "devices": devices,
            "hid_error": hid_error,
            "profiles": profiles.iter().map(|(path, p)| serde_json::json!({
                "path": path.display().to_string(),
                "name": p.spec.name,
                "vendor_id": p.vendor_id,
                "product_id": p.product_id,
                "control": p.spec.control,
            })).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(());
    }
    if let Some(e) = &hid_error {
        println!("HID not available here: {e}");
    }
    println!("{} HID device(s) present", present.len());
    for d in &present {
        let m = matches(d.vendor_id, d.product_id, d.usage_page);
        println!(
            "  {:04x}:{:04x} page {:04x} {:?} {} → {}",
            d.vendor_id,
            d.product_id,
            d.usage_page,
            d.product,
            d.path,
            if m.is_empty() {
                "no profile".to_owned()
            } else {
                m.join(", ")
            }
        );
    }
    println!("{} profile(s) in {}", profiles.len(), dir.display());
    for (path, p) in &profiles {
        println!(
            "  {:04x}:{:04x} {} ({:?}) {}",
            p.vendor_id,
            p.product_id,
            p.spec.name,
            p.spec.control,
            path.display()
        );
    }
    Ok(())
}
