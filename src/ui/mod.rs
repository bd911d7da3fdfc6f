//! The viewer: an HTTP and WebSocket server on a thread of its own, showing
//! a session's [`ViewFeed`](crate::haptics::ViewFeed) to browsers
//! (`docs/viewer.md` has the protocol).
//!
//! axum on a single-threaded tokio runtime: a well-kept HTTP stack with
//! WebSocket support in one dependency, whose runtime lives on the
//! viewer's thread only. A pump task takes each frame as the feed hands
//! it over (the feed's hook wakes it), applies it to the viewer's model of
//! the scene and broadcasts it; each client has a bounded queue, and a
//! client whose queue is full is dropped, never waited for. Stress maps
//! are evaluated on a thread of their own, so that frames keep their pace
//! while one is made. Nothing here can make a session's threads wait: the
//! feed is read with the hand-over of
//! [`ViewFeed`](crate::haptics::ViewFeed).

mod model;
mod server;
mod stress;

pub use server::{Viewer, ViewerOptions, DEFAULT_UI_ADDR};

/// Why the viewer could not start.
#[derive(Debug, thiserror::Error)]
pub enum UiError {
    /// A non-loopback address without the explicit flag.
    #[error("--ui {0}: serving beyond this machine needs --ui-public (an access token is then required)")]
    NotLoopback(std::net::SocketAddr),
    /// The address cannot be bound.
    #[error("--ui {addr}: {source}")]
    Bind {
        /// The address.
        addr: std::net::SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The viewer's thread or runtime could not be started.
    #[error("could not start the viewer: {0}")]
    Start(#[source] std::io::Error),
}
