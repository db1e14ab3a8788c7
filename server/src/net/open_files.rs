//! The open-file limit: raised to its hard limit at start (as Go's runtime and nginx's
//! `worker_rlimit_nofile` do), and the connection cap each listener gets so that both
//! listeners together can never run the process out of file descriptors: a full HTTP
//! listener must not stop the gRPC one from accepting.

/// File descriptors kept for everything but client connections: standard streams, the two
/// listeners, the runtime's epoll and wake-up descriptors, Redis connections, config reads.
const RESERVED: u64 = 64;

/// Raises the soft `RLIMIT_NOFILE` to the hard limit; returns the soft limit in force
/// afterwards (`None` where it cannot be read).
pub fn raise_open_files() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given, which lives for the call.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
            return None;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            // SAFETY: setrlimit reads the struct it is given, which lives for the call.
            if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
                limit.rlim_cur = limit.rlim_max;
            }
        }
        #[allow(clippy::useless_conversion)] // rlim_t is u64 on Linux, not everywhere
        Some(u64::from(limit.rlim_cur))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The connections each of the two listeners may hold: `wanted`, lowered so that both
/// together fit in `open_files` with 64 descriptors to spare (at least 1).
pub fn connection_cap(wanted: usize, open_files: Option<u64>) -> usize {
    let Some(open_files) = open_files else {
        return wanted.max(1);
    };
    let fits = usize::try_from(open_files.saturating_sub(RESERVED) / 2).unwrap_or(usize::MAX);
    wanted.min(fits).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_listeners_fit_in_the_open_file_limit() {
        assert_eq!(connection_cap(10_000, Some(1024)), 480);
        assert_eq!(connection_cap(10_000, Some(1 << 20)), 10_000);
        assert_eq!(connection_cap(10_000, None), 10_000);
        assert_eq!(connection_cap(10_000, Some(10)), 1);
    }

    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one() {
        let soft = raise_open_files();
        #[cfg(unix)]
        assert!(soft.is_some_and(|n| n > 0));
        #[cfg(not(unix))]
        assert!(soft.is_none());
    }
}
