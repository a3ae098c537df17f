//! Fitting `maxclients` to the process's open-file limit, as Redis's
//! `adjustOpenFilesLimit` does: raise `RLIMIT_NOFILE` to `maxclients` plus
//! [`RESERVED_FDS`], and where the system refuses, serve fewer clients
//! rather than fail at `accept` with EMFILE once the limit is reached (a
//! client past it would then get no reply at all instead of
//! `-ERR max number of clients reached`).

use rlimit::Resource;

/// Descriptors kept for listeners, the poller, logs and the like.
pub const RESERVED_FDS: u64 = 32;
/// How far each failed attempt to raise the limit steps down.
const STEP: u64 = 16;

/// What [`fit`] did.
#[derive(Debug)]
pub struct Fit {
    /// The `maxclients` the open-file limit allows (at most the request).
    pub maxclients: usize,
    /// The soft limit before, when it was raised.
    pub raised_from: Option<u64>,
    /// Why the limit could not go as high as wanted.
    pub error: Option<std::io::Error>,
    /// The soft limit now.
    pub limit: u64,
}

/// Raises the open-file limit so that `maxclients` clients fit, as far as
/// the system allows, and returns how many fit.
pub fn fit(maxclients: usize) -> Fit {
    let want = maxclients as u64 + RESERVED_FDS;
    let Ok((soft, hard)) = rlimit::getrlimit(Resource::NOFILE) else {
        // Redis assumes 1024 when it cannot tell.
        let n = (1024 - RESERVED_FDS) as usize;
        return Fit { maxclients: maxclients.min(n), raised_from: None, error: None, limit: 1024 };
    };
    if soft >= want {
        return Fit { maxclients, raised_from: None, error: None, limit: soft };
    }
    let mut best = want;
    let mut error = None;
    while best > soft {
        match rlimit::setrlimit(Resource::NOFILE, best, hard.max(best)) {
            Ok(()) => break,
            Err(e) => error = Some(e),
        }
        best = if best < STEP { soft } else { best - STEP };
    }
    let best = best.max(soft);
    Fit {
        maxclients: usize::try_from(best.saturating_sub(RESERVED_FDS)).unwrap_or(usize::MAX).min(maxclients),
        raised_from: (best > soft).then_some(soft),
        error: if best < want { error } else { None },
        limit: best,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_what_the_limit_allows() {
        let (soft, hard) = rlimit::getrlimit(Resource::NOFILE).unwrap();
        // Within the current limit nothing changes.
        let f = fit(10);
        assert_eq!(f.maxclients, 10);
        // Beyond the hard limit (unless privileged), fewer clients fit, but
        // never fewer than the limit already allowed.
        let f = fit(usize::try_from(hard).unwrap_or(usize::MAX / 2) + 1000);
        assert!(f.maxclients as u64 + RESERVED_FDS >= soft.min(f.limit));
        assert!(f.limit >= soft);
    }
}
