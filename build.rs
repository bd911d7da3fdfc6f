//! Builds the viewer page (`web/`: three.js and uPlot from npm, bundled by
//! esbuild) into `OUT_DIR/page`, which the binary embeds, when the `page`
//! feature is on (the default). Without Node.js and npm the build stops
//! with a message saying how to get them or how to leave the page out.
//!
//! npm works on a copy of `web/package.json` and `web/package-lock.json`
//! in `OUT_DIR/web` (a build script writes only there), and `npm ci` runs
//! again only when the lockfile changes.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    for path in [
        "web/package.json",
        "web/package-lock.json",
        "web/build.mjs",
        "web/src",
    ] {
        println!("cargo:rerun-if-changed={path}");
    }
    if std::env::var_os("CARGO_FEATURE_PAGE").is_none() {
        return;
    }
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    let web = root.join("web");
    let work = out.join("web");
    let page = out.join("page");
    if let Err(message) = build_page(&web, &work, &page) {
        eprintln!(
            "error: the viewer page could not be built: {message}\n\
             The page (web/) is built with Node.js (18 or later) and npm, from the npm \
             registry. Install them (Debian: `apt-get install nodejs npm`), or build \
             without the page: `cargo build --no-default-features` (the viewer then \
             serves its protocol, /ws and /api/state, without the page)."
        );
        std::process::exit(1);
    }
    println!("cargo:rustc-env=TESSERA_PAGE_DIR={}", page.display());
    println!(
        "cargo:rustc-env=TESSERA_WEB_NODE_MODULES={}",
        work.join("node_modules").display()
    );
}

fn build_page(web: &Path, work: &Path, page: &Path) -> Result<(), String> {
    std::fs::create_dir_all(work).map_err(|e| format!("{}: {e}", work.display()))?;
    let lock_path = web.join("package-lock.json");
    let lock = std::fs::read(&lock_path).map_err(|e| format!("{}: {e}", lock_path.display()))?;
    let stamp = work.join("installed-package-lock.json");
    if std::fs::read(&stamp).ok().as_deref() != Some(&lock[..]) {
        for file in ["package.json", "package-lock.json"] {
            std::fs::copy(web.join(file), work.join(file))
                .map_err(|e| format!("copying web/{file}: {e}"))?;
        }
        // No install scripts: esbuild finds its platform package without
        // its postinstall check, and nothing else needs one.
        run(
            Command::new("npm")
                .args(["ci", "--ignore-scripts", "--no-audit", "--no-fund"])
                .current_dir(work),
            "npm ci",
        )?;
        std::fs::write(&stamp, &lock).map_err(|e| format!("{}: {e}", stamp.display()))?;
    }
    // The build script imports esbuild, which node resolves from the
    // script's own directory: run a copy placed beside node_modules.
    let script = work.join("build.mjs");
    std::fs::copy(web.join("build.mjs"), &script).map_err(|e| format!("web/build.mjs: {e}"))?;
    run(
        Command::new("node")
            .arg(&script)
            .arg(web.join("src"))
            .arg(page)
            .arg(work.join("node_modules")),
        "node web/build.mjs",
    )
}

fn run(command: &mut Command, what: &str) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|e| format!("`{what}` could not be started: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{what}` failed ({status})"))
    }
}
