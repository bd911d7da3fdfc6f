//! The viewer's protocol: what a client receives during a lockstep session,
//! `GET /api/state`, errors, slow and many clients, access tokens.

use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tessera::config::{MaterialLibrary, Scene};
use tessera::device::{sim_arm_spec, ArmModel, HandScript, SimulatedArm};
use tessera::fracture::BasisWorker;
use tessera::haptics::{serve, ServeInputs, ServerOptions, SessionControls, Summary, ViewFeed};
use tessera::ui::{UiError, Viewer, ViewerOptions};
use tessera::world::{SceneAssets, World};

mod common;
use common::threads;

/// Taken by every test of this file: one test counts the process's
/// threads, which the sessions and viewers of tests running beside it
/// would add to.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

type Socket = tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// The demo's lockstep session (`tile-strike` and its hand) over
/// `seconds`, shown on `view` if given.
fn demo(seconds: f64, view: Option<Arc<ViewFeed>>) -> Summary {
    controlled_demo(seconds, view, None)
}

/// As [`demo`], with a viewer's `controls`.
fn controlled_demo(
    seconds: f64,
    view: Option<Arc<ViewFeed>>,
    controls: Option<Arc<SessionControls>>,
) -> Summary {
    lockstep_session("tile-strike", "tile-strikes", seconds, view, controls, None)
}

/// The lockstep session of the shipped scene `scene` with the shipped hand
/// `hand` over `seconds`; its fragments of at least `own_bases_min_tets`
/// intact tets, if given, get their own modal bases.
fn lockstep_session(
    scene_name: &str,
    hand: &str,
    seconds: f64,
    view: Option<Arc<ViewFeed>>,
    controls: Option<Arc<SessionControls>>,
    own_bases_min_tets: Option<usize>,
) -> Summary {
    let scene = Scene::load(&repo(&format!("configs/scenes/{scene_name}.toml"))).unwrap();
    let assets = SceneAssets::load(
        &scene,
        &MaterialLibrary::builtin(),
        None,
        threads(),
        &|_| {},
    )
    .unwrap();
    let mut world = World::from_scene(&scene, &assets, 0, threads()).unwrap();
    if let Some(min_tets) = own_bases_min_tets {
        let pool = rayon::ThreadPoolBuilder::new().build().unwrap();
        world.enable_own_bases(BasisWorker::spawn(None, pool).unwrap(), min_tets);
    }
    let hand = HandScript::load(&repo(&format!("configs/hands/{hand}.toml")))
        .unwrap()
        .trajectory();
    let arm = SimulatedArm::new(sim_arm_spec(), ArmModel::default(), hand.clone());
    serve(ServeInputs {
        world,
        threads: rayon::ThreadPoolBuilder::new().build().unwrap(),
        haptic: scene.haptic.clone().unwrap(),
        scene_name: scene_name.into(),
        device: Box::new(arm),
        device_name: "sim-arm".into(),
        hand: Some(hand),
        recorder: None,
        options: ServerOptions {
            seconds,
            lockstep: true,
            ..ServerOptions::default()
        },
        stop: None,
        on_notice: None,
        view,
        controls,
        watch: None,
    })
    .unwrap()
}

fn local_viewer(feed: &Arc<ViewFeed>) -> Viewer {
    controlled_viewer(feed, None)
}

fn controlled_viewer(feed: &Arc<ViewFeed>, controls: Option<Arc<SessionControls>>) -> Viewer {
    let options = ViewerOptions {
        addr: Some("127.0.0.1:0".parse().unwrap()),
        public: false,
    };
    Viewer::start(&options, Arc::clone(feed), controls).unwrap()
}

fn connect(addr: SocketAddr) -> Socket {
    let (socket, _) = tungstenite::connect(format!("ws://{addr}/ws")).expect("websocket");
    socket
}

/// The next text message as JSON; `None` when the socket closes.
fn next(socket: &mut Socket) -> Option<Value> {
    loop {
        match socket.read() {
            Ok(tungstenite::Message::Text(text)) => {
                return Some(serde_json::from_str(text.as_str()).expect("JSON"))
            }
            Ok(_) => {}
            Err(_) => return None,
        }
    }
}

/// `GET path` over HTTP/1.1: status and body.
fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response[9..12].parse().unwrap();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// Volume enclosed by a closed, outward-oriented triangle surface
/// (divergence theorem).
fn enclosed_volume_m3(body: &Value) -> f64 {
    let points: Vec<[f64; 3]> = serde_json::from_value(body["points_m"].clone()).unwrap();
    let triangles: Vec<[usize; 3]> = serde_json::from_value(body["triangles"].clone()).unwrap();
    triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| nalgebra::Vector3::from(points[i]));
            a.dot(&b.cross(&c)) / 6.0
        })
        .sum()
}

#[test]
fn a_client_sees_the_scene_advance_and_the_fragments_of_the_break() {
    let _one = one_at_a_time();
    let feed = ViewFeed::new();
    let viewer = local_viewer(&feed);
    let mut socket = connect(viewer.addr());
    let scene = next(&mut socket).unwrap();
    assert_eq!(scene["type"], "scene");
    // Paced at twice real time: 2.25 s of wall time, so the frames a
    // client sees do not depend on how fast this machine runs the session.
    let controls = Arc::new(SessionControls::new(Some(2.0)).unwrap());
    let session = std::thread::spawn({
        let feed = Arc::clone(&feed);
        move || controlled_demo(4.5, Some(feed), Some(controls))
    });
    let mut bodies: BTreeMap<u64, Value> = BTreeMap::new();
    let mut fractures = Vec::new();
    let mut ticks = Vec::new();
    let mut signals = 0;
    let splits = |f: &Value| f["fragments"].as_array().is_some_and(|a| !a.is_empty());
    let mut at_first_break: Option<BTreeMap<u64, Value>> = None;
    // Each body's first stress map's largest ratio.
    let mut stress_maps: BTreeMap<u64, f64> = BTreeMap::new();
    while let Some(message) = next(&mut socket) {
        match message["type"].as_str().unwrap() {
            // The session's start: every body, with its pose.
            "scene" => {
                bodies.clear();
                for body in message["bodies"].as_array().unwrap() {
                    assert!(body["pose"].is_object(), "{}", body["name"]);
                    bodies.insert(body["id"].as_u64().unwrap(), body.clone());
                }
                ticks.push(message["tick"].as_u64().unwrap());
            }
            "frame" => {
                for body in message["added"].as_array().unwrap() {
                    bodies.insert(body["id"].as_u64().unwrap(), body.clone());
                }
                for id in message["removed"].as_array().unwrap() {
                    bodies.remove(&id.as_u64().unwrap());
                }
                fractures.extend(message["fractures"].as_array().unwrap().iter().cloned());
                // The bodies as the first break left them: its fragments
                // may break again before the end.
                if at_first_break.is_none() && fractures.iter().any(splits) {
                    at_first_break = Some(bodies.clone());
                }
                let poses = message["poses"].as_array().unwrap();
                assert_eq!(poses.len(), bodies.len(), "a pose for every live body");
                ticks.push(message["tick"].as_u64().unwrap());
            }
            "signals" => signals += message["samples"].as_array().unwrap().len(),
            "stress" => {
                let id = message["id"].as_u64().unwrap();
                let points = bodies[&id]["points_m"].as_array().unwrap().len();
                let ratio = message["ratio"].as_array().unwrap();
                assert_eq!(ratio.len(), points, "a ratio per surface point");
                let max_ratio = message["max_ratio"].as_f64().unwrap();
                stress_maps.entry(id).or_insert(max_ratio);
            }
            "status" if message["finished"] == true => break,
            _ => {}
        }
    }
    let summary = session.join().unwrap();
    assert!(ticks.len() >= 10, "{} frames", ticks.len());
    assert!(ticks.windows(2).all(|w| w[0] < w[1]), "ticks advance");
    assert_eq!(
        *ticks.last().unwrap(),
        summary.haptic.ticks,
        "the last frame"
    );
    assert!(signals >= 100, "{signals} signal samples");

    // The tile breaks (an earlier strike may only crack it); its fragments
    // arrive as bodies of their own whose surfaces enclose the tile's
    // volume, less the debris.
    let first = fractures
        .iter()
        .find(|f| splits(f))
        .expect("the tile breaks within 4.5 s");
    let at_first_break = at_first_break.expect("the break's frame");
    assert_eq!(first["body"], "tile");
    let fragments: Vec<u64> = serde_json::from_value(first["fragments"].clone()).unwrap();
    assert!(fragments.len() >= 2);
    let tile_volume_m3 = 0.15 * 0.15 * 0.006;
    let pieces_m3: f64 = fragments
        .iter()
        .map(|id| {
            let body = at_first_break
                .get(id)
                .expect("every fragment is in the scene with the break");
            assert_eq!(body["parent"], first["id"]);
            enclosed_volume_m3(body)
        })
        .sum();
    let mass_ratio =
        1.0 - first["debris_mass_kg"].as_f64().unwrap() / first["parent_mass_kg"].as_f64().unwrap();
    assert!(
        (pieces_m3 / tile_volume_m3 - mass_ratio).abs() < 1e-4,
        "{pieces_m3} m³ of {tile_volume_m3}, mass ratio {mass_ratio}"
    );
    // The fragments are painted first with the stress of the impact that
    // broke the tile, which reached its strength where it cracked.
    let painted: Vec<f64> = fragments
        .iter()
        .filter_map(|id| stress_maps.get(id).copied())
        .collect();
    for id in fragments.iter().filter(|id| bodies.contains_key(id)) {
        assert!(
            stress_maps.contains_key(id),
            "fragment {id} has no stress map"
        );
    }
    let largest = painted.iter().copied().fold(0.0, f64::max);
    assert!(largest >= 1.0, "the fragments' largest σ₁/R_c: {painted:?}");

    // GET /api/state agrees with what the client built.
    let (status, body) = get(viewer.addr(), "/api/state");
    assert_eq!(status, 200);
    let state: Value = serde_json::from_str(&body).unwrap();
    let names: Vec<&str> = state["bodies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    let seen: Vec<&str> = bodies
        .values()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, seen);
    assert_eq!(
        state["fractures"].as_array().unwrap().len(),
        fractures.len()
    );
    assert_eq!(state["status"]["finished"], true);
    assert_eq!(state["status"]["mode"], "lockstep");
    for body in state["bodies"].as_array().unwrap() {
        if let Some(parent) = body["parent"].as_u64() {
            assert!(fractures.iter().any(|f| f["id"] == parent), "{body}");
        }
    }
}

/// The demo's first break leaves a large fragment; lockstep waits at the
/// next sync for its own basis, and the feed says so meanwhile.
#[test]
fn the_feed_counts_the_fragment_analyses_a_lockstep_session_waits_for() {
    let _one = one_at_a_time();
    use std::sync::atomic::{AtomicBool, Ordering};
    let feed = ViewFeed::new();
    let done = Arc::new(AtomicBool::new(false));
    // Polls the feed while the session runs: the wait lasts seconds.
    let watcher = std::thread::spawn({
        let (feed, done) = (Arc::clone(&feed), Arc::clone(&done));
        move || {
            let mut seen = Vec::new();
            while !done.load(Ordering::Relaxed) {
                let analysing = feed.analysing();
                if seen.last() != Some(&(analysing, feed.ticks())) {
                    seen.push((analysing, feed.ticks()));
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            seen
        }
    });
    let summary = lockstep_session(
        "tile-strike",
        "tile-strikes",
        2.2,
        Some(Arc::clone(&feed)),
        None,
        Some(tessera::world::OWN_BASIS_MIN_TETS),
    );
    done.store(true, Ordering::Relaxed);
    let seen = watcher.join().unwrap();
    let split = summary
        .fractures
        .iter()
        .find(|f| f.fragments >= 2)
        .expect("the demo's tile splits before 2.2 s");
    let waited: Vec<_> = seen
        .iter()
        .filter(|(analysing, _)| *analysing > 0)
        .collect();
    assert!(
        !waited.is_empty(),
        "no analysis seen after the split at {} s: {seen:?}",
        split.time_s
    );
    // The session waits at the sync after the split (the scene syncs every
    // 10 ticks), and the analyses are adopted there.
    let split_tick = (split.time_s * 1e3).round() as u64;
    assert!(
        waited
            .iter()
            .all(|(_, tick)| (split_tick..=split_tick + 20).contains(tick)),
        "the split at tick {split_tick}: {seen:?}"
    );
    assert_eq!(feed.analysing(), 0, "{seen:?}");
}

#[test]
fn malformed_and_unknown_messages_are_answered_with_errors() {
    let _one = one_at_a_time();
    let feed = ViewFeed::new();
    let viewer = local_viewer(&feed);
    let before = get(viewer.addr(), "/api/state");
    let mut socket = connect(viewer.addr());
    assert_eq!(next(&mut socket).unwrap()["type"], "scene");
    let cases = [
        ("not json", "not JSON"),
        ("[1, 2]", "string \"type\""),
        ("{\"type\": 3}", "string \"type\""),
        ("{\"type\": \"fly\"}", "unknown message type `fly`"),
    ];
    for (sent, expected) in cases {
        socket.send(tungstenite::Message::text(sent)).unwrap();
        let answer = loop {
            let message = next(&mut socket).unwrap();
            if message["type"] != "status" {
                break message;
            }
        };
        assert_eq!(answer["type"], "error", "{sent}");
        let text = answer["message"].as_str().unwrap();
        assert!(text.contains(expected), "{sent}: {text}");
    }
    socket
        .send(tungstenite::Message::binary(vec![1, 2, 3]))
        .unwrap();
    assert_eq!(next(&mut socket).unwrap()["type"], "error");
    socket
        .send(tungstenite::Message::text("{\"type\": \"ping\"}"))
        .unwrap();
    assert_eq!(next(&mut socket).unwrap()["type"], "pong");
    let mut after: Value = serde_json::from_str(&get(viewer.addr(), "/api/state").1).unwrap();
    let mut before: Value = serde_json::from_str(&before.1).unwrap();
    // Only the count of connected clients may differ.
    after["status"]["clients"] = Value::Null;
    before["status"]["clients"] = Value::Null;
    assert_eq!(after, before, "errors change nothing");
}

/// Sends `message` and returns the answer: the next `error`, or the
/// `status` that answers it (other messages are passed to `seen`).
fn ask(socket: &mut Socket, message: &str, seen: &mut dyn FnMut(&Value)) -> Value {
    socket.send(tungstenite::Message::text(message)).unwrap();
    let kind = serde_json::from_str::<Value>(message).unwrap()["type"].clone();
    loop {
        let answer = next(socket).expect("an answer");
        let answers =
            answer["type"] == "error" || (answer["type"] == "status" && answer["request"] == kind);
        if answers {
            return answer;
        }
        seen(&answer);
    }
}

/// The tick of the newest frame or scene among `messages` read for `wait`.
fn read_for(socket: &mut Socket, wait: Duration, newest: &mut u64, scenes: &mut usize) {
    let until = Instant::now() + wait;
    socket
        .get_mut()
        .get_mut_tcp()
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    while Instant::now() < until {
        if let Ok(tungstenite::Message::Text(text)) = socket.read() {
            let message: Value = serde_json::from_str(text.as_str()).unwrap();
            note(&message, newest, scenes);
        }
    }
    socket
        .get_mut()
        .get_mut_tcp()
        .set_read_timeout(None)
        .unwrap();
}

fn note(message: &Value, newest: &mut u64, scenes: &mut usize) {
    match message["type"].as_str() {
        Some("frame") => *newest = message["tick"].as_u64().unwrap(),
        Some("scene") => {
            *scenes += 1;
            *newest = message["tick"].as_u64().unwrap();
        }
        _ => {}
    }
}

trait TcpOf {
    fn get_mut_tcp(&mut self) -> &mut TcpStream;
}

impl TcpOf for tungstenite::stream::MaybeTlsStream<TcpStream> {
    fn get_mut_tcp(&mut self) -> &mut TcpStream {
        match self {
            tungstenite::stream::MaybeTlsStream::Plain(s) => s,
            _ => unreachable!("plain TCP only"),
        }
    }
}

#[test]
fn a_lockstep_session_pauses_steps_seeks_back_and_ends_as_if_untouched() {
    let _one = one_at_a_time();
    let feed = ViewFeed::new();
    // Paced at real time, so the client can pause it early.
    let controls = Arc::new(SessionControls::new(Some(1.0)).unwrap());
    let viewer = controlled_viewer(&feed, Some(Arc::clone(&controls)));
    let mut socket = connect(viewer.addr());
    assert_eq!(next(&mut socket).unwrap()["type"], "scene");
    // Before the session: nothing to control.
    let refused = ask(&mut socket, r#"{"type": "pause"}"#, &mut |_| {});
    assert_eq!(refused["type"], "error");
    let session = std::thread::spawn({
        let feed = Arc::clone(&feed);
        let controls = Arc::clone(&controls);
        move || loop {
            let summary =
                controlled_demo(2.0, Some(Arc::clone(&feed)), Some(Arc::clone(&controls)));
            if !controls.take_restart() {
                return summary;
            }
        }
    });
    let (mut newest, mut scenes) = (0u64, 0usize);
    // The session's first frame comes as a new scene; run to 0.3 s.
    while scenes == 0 || newest < 300 {
        note(&next(&mut socket).unwrap(), &mut newest, &mut scenes);
    }
    let mut seen = |m: &Value| note(m, &mut newest, &mut scenes);
    let paused = ask(&mut socket, r#"{"type": "pause"}"#, &mut seen);
    assert_eq!(paused["paused"], true, "{paused}");
    assert_eq!(paused["controls"], true);
    // Held at a sync: frames stop, at a multiple of r_sim (10).
    read_for(
        &mut socket,
        Duration::from_millis(300),
        &mut newest,
        &mut scenes,
    );
    let held = newest;
    assert_eq!(held % 10, 0);
    read_for(
        &mut socket,
        Duration::from_millis(300),
        &mut newest,
        &mut scenes,
    );
    assert_eq!(newest, held, "a paused session does not advance");
    // One step: one sync period.
    let mut seen = |m: &Value| note(m, &mut newest, &mut scenes);
    assert_eq!(
        ask(&mut socket, r#"{"type": "step"}"#, &mut seen)["type"],
        "status"
    );
    read_for(
        &mut socket,
        Duration::from_millis(300),
        &mut newest,
        &mut scenes,
    );
    assert_eq!(newest, held + 10);
    // Bad controls are refused and change nothing.
    for (bad, expected) in [
        (r#"{"type": "speed", "factor": 1000}"#, "0.01..=100"),
        (r#"{"type": "speed"}"#, "needs \"factor\""),
        (r#"{"type": "seek", "time_s": -1}"#, "seek time"),
        (r#"{"type": "seek"}"#, "time_s"),
        (r#"{"type": "step", "syncs": 0}"#, "1..=1000"),
        (r#"{"type": "answer"}"#, "key"),
    ] {
        let answer = ask(&mut socket, bad, &mut |_| {});
        assert_eq!(answer["type"], "error", "{bad}");
        assert!(
            answer["message"].as_str().unwrap().contains(expected),
            "{bad}: {answer}"
        );
    }
    read_for(
        &mut socket,
        Duration::from_millis(200),
        &mut newest,
        &mut scenes,
    );
    assert_eq!(newest, held + 10);
    // Seek back to 0.1 s: the session restarts (a new scene) and holds there.
    let mut seen = |m: &Value| note(m, &mut newest, &mut scenes);
    let sought = ask(&mut socket, r#"{"type": "seek", "time_s": 0.1}"#, &mut seen);
    assert_eq!(sought["paused"], true);
    let scenes_before = scenes;
    let until = Instant::now() + Duration::from_secs(60);
    while !(scenes > scenes_before && newest == 100) && Instant::now() < until {
        read_for(
            &mut socket,
            Duration::from_millis(100),
            &mut newest,
            &mut scenes,
        );
    }
    assert!(scenes > scenes_before, "a restart sends a new scene");
    assert_eq!(newest, 100);
    // As fast as possible to the end.
    let mut seen = |m: &Value| note(m, &mut newest, &mut scenes);
    let fast = ask(
        &mut socket,
        r#"{"type": "speed", "factor": null}"#,
        &mut seen,
    );
    assert_eq!(fast["speed"], Value::Null);
    assert_eq!(
        ask(&mut socket, r#"{"type": "resume"}"#, &mut seen)["paused"],
        false
    );
    let controlled = session.join().unwrap();
    let untouched = demo(2.0, None);
    assert_eq!(controlled.outcome, untouched.outcome);
    assert_eq!(controlled.fractures.len(), untouched.fractures.len());
}

#[test]
fn a_participant_key_reaches_the_study_runner() {
    let _one = one_at_a_time();
    let feed = ViewFeed::new();
    let controls = Arc::new(SessionControls::new(None).unwrap());
    let viewer = controlled_viewer(&feed, Some(Arc::clone(&controls)));
    let mut socket = connect(viewer.addr());
    assert_eq!(next(&mut socket).unwrap()["type"], "scene");
    socket
        .send(tungstenite::Message::text(
            r#"{"type": "answer", "key": "ArrowLeft"}"#,
        ))
        .unwrap();
    let echo = next(&mut socket).unwrap();
    assert_eq!(echo["type"], "answer");
    assert_eq!(echo["key"], "ArrowLeft");
    assert_eq!(controls.take_answer().unwrap().key, "ArrowLeft");
    let long = format!(r#"{{"type": "answer", "key": "{}"}}"#, "k".repeat(40));
    socket.send(tungstenite::Message::text(long)).unwrap();
    assert_eq!(next(&mut socket).unwrap()["type"], "error");
    assert!(controls.take_answer().is_none());
}

/// Threads of this process.
fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}

#[test]
fn stalled_and_churning_clients_leave_the_session_and_the_process_as_they_were() {
    let _one = one_at_a_time();
    // Runs on one viewer, as a study's trials are: each run sends every
    // client its scene (every surface), so the stalled client's share
    // outgrows its socket's buffers and its queue whatever one run's
    // physics sends.
    let run = |view| lockstep_session("tile-strike", "tile-strikes", 3.0, view, None, None);
    let reference = run(None);
    assert!(!reference.fractures.is_empty(), "the run breaks the tile");
    let feed = ViewFeed::new();
    let viewer = local_viewer(&feed);
    let threads_before = thread_count();
    // A client that never reads, its receive window kept small.
    let stalled = TcpStream::connect(viewer.addr()).unwrap();
    set_receive_buffer(&stalled, 4096);
    let (stalled, _) = tungstenite::client(format!("ws://{}/ws", viewer.addr()), stalled).unwrap();
    // Clients connect, read the scene and leave, while the runs go on.
    let churning = std::thread::spawn({
        let addr = viewer.addr();
        move || {
            for _ in 0..50 {
                let mut socket = connect(addr);
                assert_eq!(next(&mut socket).unwrap()["type"], "scene");
                socket.close(None).unwrap();
                while socket.read().is_ok() {}
            }
        }
    });
    let mut runs = 0;
    while viewer.dropped_clients() == 0 && runs < 40 {
        let viewed = run(Some(Arc::clone(&feed)));
        assert_eq!(
            viewed.outcome, reference.outcome,
            "the viewer changed the session"
        );
        assert_eq!(viewed.haptic.ticks, reference.haptic.ticks);
        assert_eq!(viewed.fractures.len(), reference.fractures.len());
        runs += 1;
    }
    churning.join().unwrap();
    assert_eq!(
        viewer.dropped_clients(),
        1,
        "the stalled client is dropped (after {runs} runs)"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while viewer.clients() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(viewer.clients(), 0, "every client is gone");
    drop(stalled);
    // A dropped rayon pool's workers exit on their own time.
    while thread_count() > threads_before && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        thread_count() <= threads_before,
        "{} threads, {threads_before} before",
        thread_count()
    );
}

fn set_receive_buffer(stream: &TcpStream, bytes: libc::c_int) {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid socket descriptor and a c_int option value.
    let result = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&bytes as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(result, 0);
}

#[test]
fn beyond_loopback_the_flag_and_then_the_token_are_required() {
    let _one = one_at_a_time();
    let feed = ViewFeed::new();
    let any: SocketAddr = "0.0.0.0:0".parse().unwrap();
    let refused = Viewer::start(
        &ViewerOptions {
            addr: Some(any),
            public: false,
        },
        Arc::clone(&feed),
        None,
    );
    match refused {
        Err(e @ UiError::NotLoopback(_)) => assert!(e.to_string().contains("--ui-public")),
        other => panic!("{other:?}"),
    }
    let viewer = Viewer::start(
        &ViewerOptions {
            addr: Some(any),
            public: true,
        },
        feed,
        None,
    )
    .unwrap();
    let token = viewer
        .url()
        .split_once("?token=")
        .expect("a token")
        .1
        .to_string();
    assert_eq!(token.len(), 32);
    let local: SocketAddr = format!("127.0.0.1:{}", viewer.addr().port())
        .parse()
        .unwrap();
    assert_eq!(get(local, "/api/state").0, 401);
    assert_eq!(get(local, "/api/state?token=wrong").0, 401);
    assert_eq!(get(local, &format!("/api/state?token={token}")).0, 200);
    let denied = tungstenite::connect(format!("ws://{local}/ws"));
    assert!(
        matches!(&denied, Err(tungstenite::Error::Http(r)) if r.status() == 401),
        "{denied:?}"
    );
    assert!(tungstenite::connect(format!("ws://{local}/ws?token={token}")).is_ok());
}
