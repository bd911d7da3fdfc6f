//! `tessera devices`: HID devices present and the profiles that match them.

use anyhow::Context;
use std::path::PathBuf;
use tessera::device::present_devices;
use tessera::device::DeviceProfile;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder of device profiles (default: the shipped profiles).
    #[arg(long, value_name = "DIR")]
    pub profiles: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &Args) -> anyhow::Result<()> {
    let (profiles, from) = match &args.profiles {
        Some(dir) => (
            DeviceProfile::load_dir(dir).context("reading device profiles")?,
            dir.display().to_string(),
        ),
        None => (DeviceProfile::shipped()?, "the shipped profiles".into()),
    };
    let hidraw = hidraw_nodes();
    // No HID access (no hidraw, a container) is not an error: no devices.
    let (present, hid_error) = match present_devices() {
        Ok(list) => (list, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
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
            "hidraw": hidraw.iter().map(|(path, readable)| serde_json::json!({
                "path": path.display().to_string(),
                "read_write": readable,
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
    println!("{} profile(s) in {from}", profiles.len());
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
    let unmatched: Vec<_> = profiles
        .iter()
        .filter(|(_, p)| {
            p.product_id != SIM_ARM_PRODUCT_ID
                && !present
                    .iter()
                    .any(|d| d.vendor_id == p.vendor_id && d.product_id == p.product_id)
        })
        .collect();
    if !unmatched.is_empty() {
        println!();
        print_checklist(&hidraw, &unmatched);
    }
    Ok(())
}

/// The simulated arm's product id: its profile never matches hardware.
const SIM_ARM_PRODUCT_ID: u16 = 0x7E56;

/// `/dev/hidraw*` nodes and whether this user may read and write them.
fn hidraw_nodes() -> Vec<(PathBuf, bool)> {
    let mut nodes: Vec<(PathBuf, bool)> = std::fs::read_dir("/dev")
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("hidraw"))
                })
                .map(|p| {
                    let rw = std::fs::OpenOptions::new()
                        .read(true)
                        .write(true)
                        .open(&p)
                        .is_ok();
                    (p, rw)
                })
                .collect()
        })
        .unwrap_or_default();
    nodes.sort();
    nodes
}

/// What a person with a real arm should check when its profile finds no
/// device.
fn print_checklist(hidraw: &[(PathBuf, bool)], unmatched: &[&(PathBuf, DeviceProfile)]) {
    println!("no device present for:");
    for (path, p) in unmatched {
        println!(
            "  {} ({:04x}:{:04x}, {})",
            p.spec.name,
            p.vendor_id,
            p.product_id,
            path.display()
        );
    }
    println!("to check:");
    println!("  1. the arm is plugged in and powered: `lsusb` lists its vendor:product id");
    if hidraw.is_empty() {
        println!("  2. no /dev/hidraw* node exists: the kernel has not bound the device to hidraw");
    } else {
        for (node, rw) in hidraw {
            println!(
                "  2. {}: {}",
                node.display(),
                if *rw {
                    "readable and writable"
                } else {
                    "NOT readable and writable by you"
                }
            );
        }
    }
    println!(
        "  3. give your user access with a udev rule, e.g. /etc/udev/rules.d/70-tessera.rules:"
    );
    for (_, p) in unmatched {
        println!(
            "       KERNEL==\"hidraw*\", ATTRS{{idVendor}}==\"{:04x}\", ATTRS{{idProduct}}==\"{:04x}\", MODE=\"0660\", TAG+=\"uaccess\"",
            p.vendor_id, p.product_id
        );
    }
    println!("     then `sudo udevadm control --reload && sudo udevadm trigger`, and plug the arm in again");
}
