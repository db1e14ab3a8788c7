//! The command line: flags into [`Options`], or a message saying what was wrong.

use sluicegate::http::{ForwardedHeaders, OnBackendError, TrustedProxies};
use sluicegate::policy::Policy;
use std::net::SocketAddr;

pub const USAGE: &str = "\
Usage: http_server [OPTIONS]

A hello-world HTTP server (GET / answers \"ok\") behind sluicegate's rate-limit layer.

Options:
  --listen ADDR              address to listen on [default: 127.0.0.1:8080]; port 0 picks
                             a free one, printed as `listening on http://ADDR`
  --limit SPEC               a limit, repeatable: \"name=NAME; key=KEY; quota=QUOTA;
                             algorithm=ALGORITHM\". KEY is global, peer-ip or header:NAME
                             [default: global]; QUOTA like \"5/second\" or \"100/minute
                             burst 20\"; ALGORITHM is gcra [default], token-bucket,
                             leaky-bucket, fixed-window, sliding-window or sliding-log.
                             Without any --limit the server runs without the layer.
  --trusted-proxy CIDR       a proxy whose X-Forwarded-For/Forwarded is believed for
                             key=peer-ip, repeatable (or comma-separated): 10.0.0.0/8, ::1
  --forwarded-header WHICH   x-forwarded-for, forwarded or both [default: both]: which
                             header the trusted proxies write
  --ipv6-prefix BITS         group IPv6 clients by this prefix, 0 to 128 [default: 64]
  --redis URL                share the limits through Redis (redis://127.0.0.1:6379/)
  --on-backend-error WHAT    allow [default] or deny (503, Retry-After: 1) when the
                             backend cannot answer
  --legacy-headers           also send X-RateLimit-Limit/Remaining/Reset
  --problem-json             answer rejections with RFC 9457 problem+json bodies
  -h, --help                 print this help
";

/// What the command line asked for.
#[derive(Debug)]
pub struct Options {
    pub listen: SocketAddr,
    pub limits: Vec<Policy>,
    pub trusted: TrustedProxies,
    pub forwarded_headers: ForwardedHeaders,
    pub ipv6_prefix: u8,
    pub redis: Option<String>,
    pub on_backend_error: OnBackendError,
    pub legacy_headers: bool,
    pub problem_json: bool,
}

/// What to do: serve, or print the help.
pub enum Command {
    Serve(Options),
    Help,
}

/// Reads the arguments (without the program name). `--flag value` and `--flag=value` both
/// work.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let mut options = Options {
        listen: "127.0.0.1:8080".parse().expect("a valid default"),
        limits: Vec::new(),
        trusted: TrustedProxies::none(),
        forwarded_headers: ForwardedHeaders::Both,
        ipv6_prefix: 64,
        redis: None,
        on_backend_error: OnBackendError::Allow,
        legacy_headers: false,
        problem_json: false,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = |what: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{flag} needs {what}"))
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "--listen" => {
                let text = value("an address like 127.0.0.1:8080")?;
                options.listen = text.parse().map_err(|_| {
                    format!("--listen: {text:?} is not an address like 127.0.0.1:8080")
                })?;
            }
            "--limit" => {
                let text = value("a limit")?;
                let policy: Policy = text.parse().map_err(|e| format!("--limit {text:?}: {e}"))?;
                if options.limits.iter().any(|p| p.name == policy.name) {
                    return Err(format!("--limit: two limits are named {:?}", policy.name));
                }
                options.limits.push(policy);
            }
            "--trusted-proxy" => {
                let text = value("a network like 10.0.0.0/8")?;
                let proxies: TrustedProxies =
                    text.parse().map_err(|e| format!("--trusted-proxy: {e}"))?;
                proxies
                    .networks()
                    .iter()
                    .for_each(|n| options.trusted.push(*n));
            }
            "--forwarded-header" => {
                let text = value("x-forwarded-for, forwarded or both")?;
                options.forwarded_headers = text
                    .parse()
                    .map_err(|e| format!("--forwarded-header: {e}"))?;
            }
            "--ipv6-prefix" => {
                let text = value("a prefix length from 0 to 128")?;
                options.ipv6_prefix = text
                    .parse()
                    .ok()
                    .filter(|bits| *bits <= 128)
                    .ok_or_else(|| format!("--ipv6-prefix is 0 to 128, not {text:?}"))?;
            }
            "--redis" => options.redis = Some(value("a URL like redis://127.0.0.1:6379/")?),
            "--on-backend-error" => {
                let text = value("allow or deny")?;
                options.on_backend_error = text
                    .parse()
                    .map_err(|e| format!("--on-backend-error: {e}"))?;
            }
            "--legacy-headers" | "--problem-json" if inline.is_some() => {
                return Err(format!("{flag} takes no value"))
            }
            "--legacy-headers" => options.legacy_headers = true,
            "--problem-json" => options.problem_json = true,
            other => return Err(format!("unknown argument {other:?} (see --help)")),
        }
    }
    Ok(Command::Serve(options))
}
