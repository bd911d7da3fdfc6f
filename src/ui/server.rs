//! The viewer's thread: routes, the pump, and the clients.

use super::model::{self, Model};
use super::stress::StressWorker;
use super::UiError;
use crate::haptics::{Answer, SessionControls, ViewFeed, ViewStats, HAPTIC_RATE_HZ};
use axum::extract::ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::{Json, Router};
use serde_json::{json, Value};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, watch};

/// Where the viewer listens unless told otherwise; when that port is
/// taken, a free one is used.
pub const DEFAULT_UI_ADDR: SocketAddr =
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 7878));

/// Messages a client's queue holds before the client is dropped (about a
/// second of frames).
const CLIENT_QUEUE: usize = 64;

/// How often the pump runs a full round (signals, stress maps, prompts,
/// the frame if the feed's hook has not brought it already).
const PUMP_INTERVAL: Duration = Duration::from_millis(16);

/// Full rounds between two `status` messages.
const STATUS_EVERY: u32 = 30;

/// Where and how the viewer listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewerOptions {
    /// The address; port 0 picks a free one. `None`: [`DEFAULT_UI_ADDR`],
    /// or a free port if it is taken.
    pub addr: Option<SocketAddr>,
    /// Allow a non-loopback address; clients then need the access token.
    pub public: bool,
}

/// A running viewer; dropping it stops the server and closes every client.
#[derive(Debug)]
pub struct Viewer {
    url: String,
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// A connected client: where its messages go.
#[derive(Debug)]
struct Client {
    id: u64,
    /// Messages, with the hand-over time of a frame's data.
    queue: mpsc::Sender<(Utf8Bytes, Option<Instant>)>,
}

/// Latency samples kept for [`Viewer::stats`].
const MAX_LATENCY_SAMPLES: usize = 100_000;

/// What the routes, the pump and the clients share.
#[derive(Debug)]
struct Shared {
    feed: Arc<ViewFeed>,
    /// Where pause, steps, pace, seeks, restarts and answers go.
    controls: Option<Arc<SessionControls>>,
    token: Option<String>,
    /// The scene model and the clients, under one lock so that a client
    /// registers between two frames: its `scene` message and the frames
    /// after it are consistent.
    state: Mutex<(Model, Vec<Client>)>,
    next_client: AtomicU64,
    dropped_clients: AtomicU64,
    frames_sent: AtomicU64,
    /// Hand-over to end of send of frames (µs), up to
    /// [`MAX_LATENCY_SAMPLES`].
    latencies_us: Mutex<Vec<f64>>,
    /// Closes every client when the viewer stops.
    closing: watch::Receiver<bool>,
    /// The prompt the pump last broadcast, and its version; a client gets
    /// it on connecting (both under the `state` lock, so a client sees
    /// each prompt once).
    prompt_sent: Mutex<(u64, String)>,
}

impl Viewer {
    /// Binds the address and starts the viewer's thread, showing `feed`;
    /// clients' controls and answers go to `controls` (none: refused).
    pub fn start(
        options: &ViewerOptions,
        feed: Arc<ViewFeed>,
        controls: Option<Arc<SessionControls>>,
    ) -> Result<Self, UiError> {
        let wanted = options.addr.unwrap_or(DEFAULT_UI_ADDR);
        if !wanted.ip().is_loopback() && !options.public {
            return Err(UiError::NotLoopback(wanted));
        }
        let listener = match std::net::TcpListener::bind(wanted) {
            Err(e) if options.addr.is_none() && e.kind() == std::io::ErrorKind::AddrInUse => {
                std::net::TcpListener::bind(SocketAddr::new(wanted.ip(), 0))
            }
            other => other,
        }
        .map_err(|source| UiError::Bind {
            addr: wanted,
            source,
        })?;
        let addr = listener.local_addr().map_err(UiError::Start)?;
        listener.set_nonblocking(true).map_err(UiError::Start)?;
        let token = options.public.then(access_token);
        let (close, closing) = watch::channel(false);
        let shared = Arc::new(Shared {
            feed,
            controls,
            token: token.clone(),
            state: Mutex::default(),
            next_client: AtomicU64::new(0),
            dropped_clients: AtomicU64::new(0),
            frames_sent: AtomicU64::new(0),
            latencies_us: Mutex::default(),
            closing,
            prompt_sent: Mutex::default(),
        });
        let (shutdown, stopped) = oneshot::channel::<()>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(UiError::Start)?;
        // The feed wakes the pump as it hands a frame over (at most 60 a
        // second, the publisher's rate), so frames wait for no round.
        let (wake, woken) = mpsc::channel::<()>(1);
        let waking = shared.feed.on_hand_over(Box::new(move || {
            let _ = wake.try_send(());
        }));
        let woken = waking.then_some(woken);
        let routes_state = Arc::clone(&shared);
        // Started here, so that the viewer's threads all exist once it
        // has started.
        let worker = match StressWorker::spawn(model::MAX_STRESS_JOBS) {
            Ok(worker) => Some(worker),
            Err(e) => {
                tracing::warn!("the viewer shows no stress maps: their thread did not start: {e}");
                None
            }
        };
        let thread = std::thread::Builder::new()
            .name("tessera-ui".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                        return;
                    };
                    let listener = listener.tap_io(bound_send_buffer);
                    let pump = tokio::spawn(pump(Arc::clone(&routes_state), worker, woken));
                    let app = router(routes_state);
                    let _ = axum::serve(listener, app)
                        .with_graceful_shutdown(async move {
                            let _ = stopped.await;
                            let _ = close.send(true);
                        })
                        .await;
                    pump.abort();
                });
                runtime.shutdown_timeout(Duration::from_secs(1));
            })
            .map_err(UiError::Start)?;
        let host = if addr.ip().is_unspecified() {
            "localhost".to_string()
        } else {
            addr.ip().to_string()
        };
        let mut url = format!("http://{host}:{}/", addr.port());
        if let Some(token) = &token {
            url.push_str(&format!("?token={token}"));
        }
        Ok(Self {
            url,
            addr,
            shared,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    /// The page's URL (with the access token when one is required).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The address bound.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Clients connected now.
    pub fn clients(&self) -> usize {
        self.shared.state.lock().map_or(0, |s| s.1.len())
    }

    /// Clients dropped because they did not keep up.
    pub fn dropped_clients(&self) -> u64 {
        self.shared.dropped_clients.load(Ordering::Relaxed)
    }

    /// What the viewer did so far.
    pub fn stats(&self) -> ViewStats {
        let mut latencies = self
            .shared
            .latencies_us
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default();
        latencies.sort_by(f64::total_cmp);
        let quantile = |q: f64| {
            latencies
                .get(((latencies.len() as f64 - 1.0) * q).round() as usize)
                .copied()
                .unwrap_or(0.0)
        };
        ViewStats {
            clients: self.shared.next_client.load(Ordering::Relaxed),
            dropped_clients: self.dropped_clients(),
            frames_sent: self.shared.frames_sent.load(Ordering::Relaxed),
            frame_latency_us_p50: quantile(0.5),
            frame_latency_us_p99: quantile(0.99),
        }
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Bytes the kernel may hold for one client's connection.
const CLIENT_SEND_BUFFER: libc::c_int = 256 * 1024;

/// Bounds the kernel's send buffer of a client's connection: with the
/// client's queue, what a client that does not read can hold up.
fn bound_send_buffer(tcp: &mut tokio::net::TcpStream) {
    use std::os::fd::AsRawFd;
    // SAFETY: a valid socket descriptor and a c_int option value.
    let result = unsafe {
        libc::setsockopt(
            tcp.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            (&CLIENT_SEND_BUFFER as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if result != 0 {
        tracing::debug!(
            "viewer: SO_SNDBUF not set: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// 128 random bits, hex.
fn access_token() -> String {
    let bits: u128 = rand::random();
    format!("{bits:032x}")
}

fn router(shared: Arc<Shared>) -> Router {
    page_routes(Router::new())
        .route("/api/state", get(api_state))
        .route("/ws", get(websocket))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&shared),
            authorise,
        ))
        .with_state(shared)
}

/// With a token: 401 for a request that does not carry it (`?token=` or
/// `Authorization: Bearer`).
async fn authorise(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let Some(token) = &shared.token else {
        return next.run(request).await;
    };
    let in_query = request.uri().query().is_some_and(|q| {
        q.split('&')
            .any(|pair| pair.strip_prefix("token=") == Some(token.as_str()))
    });
    let in_header = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        == Some(token.as_str());
    if in_query || in_header {
        next.run(request).await
    } else {
        (StatusCode::UNAUTHORIZED, "an access token is required\n").into_response()
    }
}

/// The viewer page, built from `web/` by build.rs (feature `page`).
#[cfg(feature = "page")]
mod page {
    pub(super) const INDEX_HTML: &str =
        include_str!(concat!(env!("TESSERA_PAGE_DIR"), "/index.html"));
    pub(super) const APP_JS: &str = include_str!(concat!(env!("TESSERA_PAGE_DIR"), "/app.js"));
    pub(super) const APP_CSS: &str = include_str!(concat!(env!("TESSERA_PAGE_DIR"), "/app.css"));
}

#[cfg(feature = "page")]
fn page_routes(router: Router<Arc<Shared>>) -> Router<Arc<Shared>> {
    fn file(content_type: &'static str, body: &'static str) -> Response {
        ([(header::CONTENT_TYPE, content_type)], body).into_response()
    }
    router
        .route(
            "/",
            get(|| async { file("text/html; charset=utf-8", page::INDEX_HTML) }),
        )
        .route(
            "/app.js",
            get(|| async { file("text/javascript; charset=utf-8", page::APP_JS) }),
        )
        .route(
            "/app.css",
            get(|| async { file("text/css; charset=utf-8", page::APP_CSS) }),
        )
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
}

#[cfg(not(feature = "page"))]
fn page_routes(router: Router<Arc<Shared>>) -> Router<Arc<Shared>> {
    router.route(
        "/",
        get(|| async {
            (
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                "tessera was built without the viewer page (cargo feature `page`); \
                 the protocol is served at /ws and /api/state (docs/viewer.md)\n",
            )
        }),
    )
}

fn status_of(shared: &Shared, clients: usize) -> Value {
    status_with(shared, clients, shared.feed.finished())
}

fn status_with(shared: &Shared, clients: usize, finished: bool) -> Value {
    let mut status = model::status(&shared.feed, shared.controls.as_deref(), finished, clients);
    status["type"] = json!("status");
    status
}

async fn api_state(State(shared): State<Arc<Shared>>) -> Response {
    let Ok(state) = shared.state.lock() else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let status = status_of(&shared, state.1.len());
    Json(state.0.state(&status)).into_response()
}

async fn websocket(State(shared): State<Arc<Shared>>, upgrade: WebSocketUpgrade) -> Response {
    upgrade.on_upgrade(move |socket| client(socket, shared))
}

/// Broadcasts what changed: each frame as soon as the feed hands it over
/// (`woken`, if the feed's hook is the viewer's), and everything else at
/// full rounds, 60 a second.
async fn pump(
    shared: Arc<Shared>,
    mut worker: Option<StressWorker>,
    mut woken: Option<mpsc::Receiver<()>>,
) {
    let mut interval = tokio::time::interval(PUMP_INTERVAL);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut records = Vec::new();
    let mut round = 0u32;
    loop {
        let full = tokio::select! {
            _ = interval.tick() => true,
            Some(()) = async { woken.as_mut()?.recv().await } => false,
        };
        if full {
            round = round.wrapping_add(1);
        }
        // Read before the frame: once the session has finished, its last
        // frame is in this round's, so `finished` never precedes it.
        let session_finished = shared.feed.finished();
        let frame = shared.feed.take_frame();
        records.clear();
        if full {
            shared.feed.take_signals(&mut records);
        }
        let Ok(mut state) = shared.state.lock() else {
            return;
        };
        let (model, clients) = &mut *state;
        let mut messages = Vec::new();
        if let Some(frame) = frame {
            let handed_over_at = frame.handed_over_at;
            match model.apply(frame) {
                Some(message) => messages.push((message, handed_over_at)),
                // A restarted run: every client starts over from its scene
                // (which holds the stresses).
                None => {
                    let status = status_with(&shared, clients.len(), session_finished);
                    messages.push((model.scene(&status), handed_over_at));
                }
            }
        }
        if !full {
            broadcast(&shared, clients, messages);
            continue;
        }
        if worker.as_ref().is_some_and(StressWorker::ended) {
            tracing::warn!("the viewer's stress maps stopped: their thread ended");
            worker = None;
            model.stress_jobs_lost();
        }
        if let Some(worker) = &worker {
            while let Some(map) = worker.take() {
                messages.extend(model.stress_done(map).into_iter().map(|s| (s, None)));
            }
            for job in model.stress_jobs(Instant::now()) {
                worker.submit(job);
            }
        }
        // Nor does it precede the maps of the session's impacts.
        let finished = session_finished && !model.evaluating();
        if !records.is_empty() {
            model.keep_signals(&records);
            messages.push((model::signals(records.iter()), None));
        }
        if let (Some(controls), Ok(mut sent)) = (&shared.controls, shared.prompt_sent.lock()) {
            let newest = controls.prompt();
            if newest.0 != sent.0 {
                messages.push((json!({ "type": "prompt", "text": newest.1 }), None));
                *sent = newest;
            }
        }
        if round % STATUS_EVERY == 0 {
            messages.push((status_with(&shared, clients.len(), finished), None));
        }
        broadcast(&shared, clients, messages);
    }
}

/// Queues each message, with when its frame was handed over, to every
/// client; a client whose queue is full is dropped.
fn broadcast(shared: &Shared, clients: &mut Vec<Client>, messages: Vec<(Value, Option<Instant>)>) {
    for (message, handed_over_at) in messages {
        let text = Utf8Bytes::from(message.to_string());
        clients.retain(|c| match c.queue.try_send((text.clone(), handed_over_at)) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                shared.dropped_clients.fetch_add(1, Ordering::Relaxed);
                tracing::info!(client = c.id, "viewer client dropped: it did not keep up");
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        });
    }
}

/// One client: the `scene` message, then the broadcasts; its own messages
/// are answered on the same socket.
async fn client(mut socket: WebSocket, shared: Arc<Shared>) {
    let (queue, mut messages) = mpsc::channel(CLIENT_QUEUE);
    let id = shared.next_client.fetch_add(1, Ordering::Relaxed);
    let scene = {
        let Ok(mut state) = shared.state.lock() else {
            return;
        };
        let status = status_of(&shared, state.1.len() + 1);
        let scene = state.0.scene(&status).to_string();
        // The plots' recent past, for a client that joins late.
        let history = (state.0.signal_history().next().is_some())
            .then(|| model::signals(state.0.signal_history()).to_string());
        state.1.push(Client { id, queue });
        let prompt = shared
            .prompt_sent
            .lock()
            .ok()
            .filter(|sent| !sent.1.is_empty())
            .map(|sent| json!({ "type": "prompt", "text": sent.1 }).to_string());
        [Some(scene), history, prompt]
    };
    let mut closing = shared.closing.clone();
    for text in scene.into_iter().flatten() {
        if socket.send(Message::Text(text.into())).await.is_err() {
            return;
        }
    }
    loop {
        tokio::select! {
            message = messages.recv() => match message {
                Some((text, handed_over_at)) => {
                    if socket.send(Message::Text(text)).await.is_err() {
                        break;
                    }
                    if let Some(at) = handed_over_at {
                        shared.record_frame(at.elapsed());
                    }
                }
                // Dropped by the pump: the client did not keep up.
                None => break,
            },
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    let answer = answer(&shared, text.as_str());
                    if socket.send(Message::Text(answer.to_string().into())).await.is_err() {
                        break;
                    }
                }
                Some(Ok(Message::Binary(_))) => {
                    let error = error("binary messages are not part of the protocol; send JSON text");
                    if socket.send(Message::Text(error.to_string().into())).await.is_err() {
                        break;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => break,
            },
            _ = closing.changed() => break,
        }
    }
    if let Ok(mut state) = shared.state.lock() {
        state.1.retain(|c| c.id != id);
    }
}

impl Shared {
    fn record_frame(&self, latency: Duration) {
        self.frames_sent.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut latencies) = self.latencies_us.lock() {
            if latencies.len() < MAX_LATENCY_SAMPLES {
                latencies.push(latency.as_secs_f64() * 1e6);
            }
        }
    }
}

fn error(message: &str) -> Value {
    json!({ "type": "error", "message": message })
}

/// Longest client message taken (a control or an answer is ~100 bytes).
const MAX_CLIENT_MESSAGE_BYTES: usize = 4096;

/// The answer to a client's message: a `status` after a control it took,
/// an `answer` echo for a participant's key, `pong`, or an `error` that
/// says why nothing changed. Controls of the session are refused in a
/// real-time session, where the hand is in the loop.
fn answer(shared: &Shared, text: &str) -> Value {
    if text.len() > MAX_CLIENT_MESSAGE_BYTES {
        return error(&format!(
            "message of {} bytes; at most {MAX_CLIENT_MESSAGE_BYTES}",
            text.len()
        ));
    }
    let Ok(message) = serde_json::from_str::<Value>(text) else {
        return error("not JSON: a message is an object with a \"type\"");
    };
    let Some(kind) = message.get("type").and_then(Value::as_str) else {
        return error("a message is an object with a string \"type\"");
    };
    let session = shared.feed.session();
    let controls = shared.controls.as_deref();
    match kind {
        "ping" => json!({ "type": "pong" }),
        "answer" => {
            let Some(controls) = controls else {
                return error("`answer` is not taken: this session has no study runner");
            };
            let Some(key) = message.get("key").and_then(Value::as_str) else {
                return error("`answer` needs a string \"key\"");
            };
            if key.is_empty() || key.len() > Answer::MAX_KEY_BYTES {
                return error(&format!(
                    "`answer` key must be 1..={} bytes",
                    Answer::MAX_KEY_BYTES
                ));
            }
            let time_s = shared.feed.ticks() as f64 / HAPTIC_RATE_HZ;
            let answer = Answer {
                key: key.to_string(),
                time_s,
            };
            match controls.answer(answer) {
                Ok(()) => json!({ "type": "answer", "key": key, "time_s": time_s }),
                Err(e) => error(&e.to_string()),
            }
        }
        "pause" | "resume" | "step" | "speed" | "seek" | "restart" | "reset" => {
            if session.mode == "real-time" {
                return error(&format!(
                    "`{kind}` is refused in a real-time session: the hand is in the loop"
                ));
            }
            let Some(controls) = controls.filter(|_| session.controls) else {
                return error(&format!(
                    "`{kind}` is refused: only a lockstep session with a scripted hand (simulated arm) can be controlled"
                ));
            };
            match control(controls, &session, shared.feed.ticks(), kind, &message) {
                Ok(()) => {
                    let clients = shared.state.lock().map_or(0, |s| s.1.len());
                    let mut status = status_with(shared, clients, shared.feed.finished());
                    // Tells this answer from the periodic statuses.
                    status["request"] = json!(kind);
                    status
                }
                Err(why) => error(&why),
            }
        }
        other => error(&format!(
            "unknown message type `{other}` (known: ping, answer, pause, resume, step, speed, seek, restart, reset)"
        )),
    }
}

/// Applies one control message.
fn control(
    controls: &SessionControls,
    session: &crate::haptics::ViewSession,
    ticks: u64,
    kind: &str,
    message: &Value,
) -> Result<(), String> {
    let field = |name: &str| message.get(name).filter(|v| !v.is_null());
    match kind {
        "pause" => controls.pause(),
        "resume" => controls.resume(),
        "step" => {
            let syncs = match field("syncs") {
                None => 1,
                Some(v) => v
                    .as_u64()
                    .ok_or("`step` \"syncs\" must be a whole number")?,
            };
            controls.step(syncs).map_err(|e| e.to_string())?;
        }
        "speed" => {
            let factor = match message.get("factor") {
                Some(Value::Null) => None,
                Some(v) => Some(
                    v.as_f64()
                        .ok_or("`speed` \"factor\" must be a number or null")?,
                ),
                None => return Err(
                    "`speed` needs \"factor\" (times real time, or null for as fast as possible)"
                        .into(),
                ),
            };
            controls.set_speed(factor).map_err(|e| e.to_string())?;
        }
        "seek" => {
            let time_s = field("time_s")
                .and_then(Value::as_f64)
                .ok_or("`seek` needs a number \"time_s\"")?;
            controls
                .seek(time_s, session.seconds, 1.0 / HAPTIC_RATE_HZ, ticks)
                .map_err(|e| e.to_string())?;
        }
        "restart" => controls.restart(),
        "reset" => controls.reset(),
        other => return Err(format!("unknown control `{other}`")),
    }
    Ok(())
}
