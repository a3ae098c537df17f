//! The client's one error type. Each variant is something a caller may act
//! on differently (retry elsewhere, give up, fix the request), so none is
//! flattened into a string.

use std::fmt;
use std::io;

#[derive(Debug)]
pub enum Error {
    /// Connecting failed or the connection broke (refused, reset, closed).
    Connection { server: String, source: io::Error },
    /// No reply within the read timeout, or no connection within the
    /// connect timeout.
    Timeout { server: String },
    /// The server is marked down after a recent failure and is not tried
    /// again until its down time has passed.
    ServerDown { server: String },
    /// Every connection of the server's pool is in use and none came back
    /// within the pool timeout.
    PoolExhausted { server: String },
    /// AUTH / HELLO / SELECT on connect was refused: the server's error line.
    Handshake { server: String, message: Vec<u8> },
    /// Bytes that are not a reply of the protocol spoken.
    Protocol { server: String, detail: String },
    /// The server answered with an error reply (`-ERR …`, `CLIENT_ERROR …`).
    Server(Vec<u8>),
    /// A request the client refuses to send (e.g. a memcached key that is
    /// too long even in base64).
    Invalid(String),
}

impl Error {
    /// True for the failures that mark a server down: it did not answer.
    pub fn is_transport(&self) -> bool {
        matches!(self, Error::Connection { .. } | Error::Timeout { .. } | Error::Protocol { .. })
    }

    pub(crate) fn io(server: &str, e: io::Error) -> Error {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Error::Timeout { server: server.to_string() },
            _ => Error::Connection { server: server.to_string(), source: e },
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Connection { server, source } => write!(f, "connection to {server} failed: {source}"),
            Error::Timeout { server } => write!(f, "timed out talking to {server}"),
            Error::ServerDown { server } => write!(f, "{server} is marked down after a recent failure"),
            Error::PoolExhausted { server } => write!(f, "no free connection to {server} within the pool timeout"),
            Error::Handshake { server, message } => {
                write!(f, "{server} refused the connection set-up: {}", String::from_utf8_lossy(message))
            }
            Error::Protocol { server, detail } => write!(f, "protocol error from {server}: {detail}"),
            Error::Server(m) => f.write_str(&String::from_utf8_lossy(m)),
            Error::Invalid(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Connection { source, .. } => Some(source),
            _ => None,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;
