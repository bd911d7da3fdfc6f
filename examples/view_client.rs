//! A viewer client that reads everything a tessera viewer sends until the
//! connection closes, and prints what it received: the load a browser puts
//! on the viewer, without a browser (tools/viewer_load.sh).
//!
//!     cargo run --release --example view_client -- ws://127.0.0.1:7878/ws

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "ws://127.0.0.1:7878/ws".into());
    // The session may not have started its viewer yet.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut socket = loop {
        match tungstenite::connect(url.as_str()) {
            Ok((socket, _)) => break socket,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(e.into()),
        }
    };
    let start = Instant::now();
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut bytes = 0usize;
    while let Ok(message) = socket.read() {
        if let tungstenite::Message::Text(text) = message {
            bytes += text.len();
            let value: serde_json::Value = serde_json::from_str(text.as_str())?;
            let kind = value["type"].as_str().unwrap_or("?").to_string();
            *counts.entry(kind).or_default() += 1;
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let frames = counts.get("frame").copied().unwrap_or(0);
    println!(
        "{{\"seconds\": {seconds:.3}, \"bytes\": {bytes}, \"frames_per_s\": {:.1}, \"messages\": {}}}",
        frames as f64 / seconds,
        serde_json::to_string(&counts)?
    );
    Ok(())
}
