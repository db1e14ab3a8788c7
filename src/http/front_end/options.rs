//! [`FrontEndOptions`]: the client-address options every front end outside Rust (the Node
//! and Python middlewares) is given as text and numbers, read into the library's values in
//! one place, so that both bindings accept and refuse exactly the same spellings.

use crate::http::error::BuildError;
use crate::http::ip::TrustedProxies;
use crate::http::key::{ClientIp, ForwardedHeaders};
use crate::http::on_backend_error::{BackendErrorMode, OnBackendError};
use std::fmt;

/// The options, as a binding received them. Each binding spells the option names its own
/// way (`trustedProxies`, `trusted_proxies`); a [`FrontEndError`] says which one was wrong
/// by [`FrontEndOption`], for the binding to name.
///
/// ```
/// use sluicegate::http::front_end::{FrontEndOption, FrontEndOptions};
///
/// let proxies = ["10.0.0.0/8".to_owned()];
/// let options = FrontEndOptions { trusted_proxies: &proxies, forwarded_headers: "XFF", ipv6_prefix: 64 };
/// assert!(options.client_ip().is_ok());
///
/// let wrong = FrontEndOptions { ipv6_prefix: 300, ..options };
/// let error = wrong.client_ip().unwrap_err();
/// assert_eq!(error.option, FrontEndOption::Ipv6Prefix);
/// assert_eq!(error.to_string(), "an IPv6 prefix is 0 to 128 bits, not 300");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct FrontEndOptions<'a> {
    /// The trusted proxies' networks (`"10.0.0.0/8"`, `"::1"`), each entry one network or
    /// several separated by commas; `"unix"` trusts a Unix socket's peer
    /// ([`TrustedProxies::push_entry`]).
    pub trusted_proxies: &'a [String],
    /// `x-forwarded-for` (or `xff`), `forwarded` or `both`, in any case.
    pub forwarded_headers: &'a str,
    /// The bits IPv6 clients are grouped by, 0 to 128.
    pub ipv6_prefix: u32,
}

/// Which option a [`FrontEndError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrontEndOption {
    /// [`FrontEndOptions::trusted_proxies`].
    TrustedProxies,
    /// [`FrontEndOptions::forwarded_headers`].
    ForwardedHeaders,
    /// [`FrontEndOptions::ipv6_prefix`].
    Ipv6Prefix,
    /// The text [`parse_on_backend_error`] or [`parse_backend_error_mode`] read.
    OnBackendError,
}

/// An option a front end cannot use: which one, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontEndError {
    /// The option.
    pub option: FrontEndOption,
    /// Why, as a sentence without the option's name.
    pub reason: String,
}

impl fmt::Display for FrontEndError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for FrontEndError {}

impl FrontEndOptions<'_> {
    /// The client-address extractor these options describe.
    pub fn client_ip(&self) -> Result<ClientIp, FrontEndError> {
        let mut trusted = TrustedProxies::none();
        let networks = self.trusted_proxies.iter().flat_map(|text| text.split(','));
        for network in networks.map(str::trim).filter(|n| !n.is_empty()) {
            trusted.push_entry(network).map_err(|e| FrontEndError {
                option: FrontEndOption::TrustedProxies,
                reason: format!("{network:?}: {e}"),
            })?;
        }
        let headers: ForwardedHeaders = self
            .forwarded_headers
            .parse()
            .map_err(|e| error(FrontEndOption::ForwardedHeaders, &e))?;
        let bits = u8::try_from(self.ipv6_prefix)
            .ok()
            .filter(|bits| *bits <= 128)
            .ok_or_else(|| FrontEndError {
                option: FrontEndOption::Ipv6Prefix,
                reason: format!("an IPv6 prefix is 0 to 128 bits, not {}", self.ipv6_prefix),
            })?;
        ClientIp::new()
            .trust(trusted)
            .forwarded_headers(headers)
            .ipv6_prefix(bits)
            .map_err(|e| error(FrontEndOption::Ipv6Prefix, &e))
    }
}

/// `allow` or `deny`, in any case, as every front end spells it.
pub fn parse_on_backend_error(text: &str) -> Result<OnBackendError, FrontEndError> {
    text.parse().map_err(|_| FrontEndError {
        option: FrontEndOption::OnBackendError,
        reason: format!("expected allow or deny, got {text:?}"),
    })
}

/// `allow`, `deny` or `local`, in any case: a front end's whole `on_backend_error` option,
/// `local` included (limits on Redis decide in process while it cannot). Build the limiter
/// with [`BackendErrorMode::answer`] and each Redis backend with
/// [`redis_backend`](super::redis_backend), which applies [`BackendErrorMode::fallback`].
///
/// ```
/// use sluicegate::http::front_end::parse_backend_error_mode;
/// use sluicegate::http::BackendErrorMode;
///
/// assert_eq!(parse_backend_error_mode("LOCAL")?, BackendErrorMode::Local);
/// let error = parse_backend_error_mode("retry").unwrap_err();
/// assert_eq!(error.to_string(), "expected allow, deny or local, got \"retry\"");
/// # Ok::<(), sluicegate::http::front_end::FrontEndError>(())
/// ```
pub fn parse_backend_error_mode(text: &str) -> Result<BackendErrorMode, FrontEndError> {
    text.parse().map_err(|_| FrontEndError {
        option: FrontEndOption::OnBackendError,
        reason: format!("expected allow, deny or local, got {text:?}"),
    })
}

fn error(option: FrontEndOption, e: &BuildError) -> FrontEndError {
    FrontEndError {
        option,
        reason: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options<'a>(proxies: &'a [String], headers: &'a str, bits: u32) -> FrontEndOptions<'a> {
        FrontEndOptions {
            trusted_proxies: proxies,
            forwarded_headers: headers,
            ipv6_prefix: bits,
        }
    }

    #[test]
    fn every_spelling_the_bindings_share_is_read_here() {
        let none: [String; 0] = [];
        for headers in ["x-forwarded-for", "XFF", "Forwarded", "BOTH", " both "] {
            assert!(options(&none, headers, 64).client_ip().is_ok(), "{headers}");
        }
        let listed = ["10.0.0.0/8, fd00::/8".to_owned(), "::1".to_owned()];
        assert!(options(&listed, "xff", 64).client_ip().is_ok());
        let unix = ["unix".to_owned(), "127.0.0.1, UNIX".to_owned()];
        let client_ip = options(&unix, "xff", 64).client_ip().unwrap();
        assert!(client_ip.trusted().trusts_unix_socket());
        for text in ["allow", "Deny", " local "] {
            assert!(parse_backend_error_mode(text).is_ok(), "{text}");
        }
        for bits in [0, 64, 128] {
            assert!(options(&none, "xff", bits).client_ip().is_ok(), "{bits}");
        }
        for text in ["allow", "Allow", "DENY"] {
            assert!(parse_on_backend_error(text).is_ok(), "{text}");
        }
    }

    #[test]
    fn an_error_says_which_option_and_why() {
        let none: [String; 0] = [];
        let bad = ["10.0.0.0/8, ::1".to_owned(), " 10.0.0.0/33".to_owned()];
        let socket = ["unix:/run/app.sock".to_owned()];
        let cases = [
            (
                options(&bad, "xff", 64),
                FrontEndOption::TrustedProxies,
                "\"10.0.0.0/33\": ",
            ),
            (
                options(&socket, "xff", 64),
                FrontEndOption::TrustedProxies,
                "\"unix:/run/app.sock\": invalid network",
            ),
            (
                options(&none, "x-real-ip", 64),
                FrontEndOption::ForwardedHeaders,
                "forwarded headers are",
            ),
            (
                options(&none, "xff", 129),
                FrontEndOption::Ipv6Prefix,
                "0 to 128 bits, not 129",
            ),
            (
                options(&none, "xff", 1 << 20),
                FrontEndOption::Ipv6Prefix,
                "not 1048576",
            ),
        ];
        for (options, option, says) in cases {
            let error = options.client_ip().unwrap_err();
            assert_eq!(error.option, option);
            assert!(error.reason.contains(says), "{error}");
        }
        let error = parse_on_backend_error("retry").unwrap_err();
        assert_eq!(error.option, FrontEndOption::OnBackendError);
        assert_eq!(error.to_string(), "expected allow or deny, got \"retry\"");
    }
}
