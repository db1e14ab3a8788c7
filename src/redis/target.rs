//! Where a limiter's Redis is and how to reach it, read once from its URL and its TLS files:
//! one node (`redis://`, `rediss://`, `unix://`), a cluster's seed nodes, or the master a
//! set of Sentinels names (`redis-sentinel://`, `rediss-sentinel://`, Lettuce's form:
//! `redis-sentinel://[user:password@]host1:26379,host2:26379[/db]#master`).
//!
//! `rediss` verifies the server's certificate against the system's roots, or against
//! [`Tls::ca_cert`] when given; [`Tls::client_cert`] and [`Tls::client_key`] answer a server
//! that asks for a client certificate (mutual TLS). TLS needs the `redis-tls` feature (rustls
//! with the *ring* provider: nothing to link, no OpenSSL).

use super::error::RedisError;
use redis::{ConnectionAddr, IntoConnectionInfo};

/// The default Sentinel port.
const SENTINEL_PORT: u16 = 26379;

/// TLS files (PEM), as given to the builder.
#[derive(Clone, Default)]
pub(crate) struct Tls {
    /// The certificates a server's certificate must chain to, instead of the system's roots.
    pub(crate) ca_cert: Option<Vec<u8>>,
    /// The certificate (chain) shown to a server that asks for one.
    pub(crate) client_cert: Option<Vec<u8>>,
    /// Its private key.
    pub(crate) client_key: Option<Vec<u8>>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the files' contents: a key is a secret.
        f.debug_struct("Tls")
            .field("ca_cert", &self.ca_cert.is_some())
            .field("client_cert", &self.client_cert.is_some())
            .field("client_key", &self.client_key.is_some())
            .finish()
    }
}

impl Tls {
    /// True when any file is given.
    fn is_set(&self) -> bool {
        self.ca_cert.is_some() || self.client_cert.is_some() || self.client_key.is_some()
    }

    /// Checks the files against the scheme of `url` (they need a TLS URL, and a client
    /// certificate goes with its key), then their contents.
    pub(crate) fn check(&self, url: &str) -> Result<(), RedisError> {
        self.check_url(url)?;
        #[cfg(feature = "redis-tls")]
        self.check_pem()?;
        Ok(())
    }

    /// The files fit the URL, and a client certificate comes with its key.
    fn check_url(&self, url: &str) -> Result<(), RedisError> {
        if self.client_cert.is_some() != self.client_key.is_some() {
            return Err(RedisError::config(
                "a client certificate and its key go together: give both client_cert and \
                 client_key, or neither",
            ));
        }
        let tls_url = if is_sentinel(url) {
            scheme(url) == Some("rediss-sentinel")
        } else {
            // One node, or a cluster's seeds.
            url.split(',')
                .filter(|node| !node.trim().is_empty())
                .all(|node| scheme(node) == Some("rediss"))
        };
        if self.is_set() && !tls_url {
            return Err(RedisError::config(format!(
                "TLS files (ca_cert, client_cert, client_key) need a TLS URL \
                 (rediss:// or rediss-sentinel://), not {}",
                redact(url)
            )));
        }
        Ok(())
    }

    /// Each file holds what it should, in PEM: certificates, or one private key.
    #[cfg(feature = "redis-tls")]
    fn check_pem(&self) -> Result<(), RedisError> {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let certificates = |what: &str, pem: &Option<Vec<u8>>| -> Result<(), RedisError> {
            let Some(pem) = pem else { return Ok(()) };
            let found = CertificateDer::pem_slice_iter(pem)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| RedisError::config(format!("the TLS file {what}: {e}")))?;
            if found.is_empty() {
                return Err(RedisError::config(format!(
                    "the TLS file {what} holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
                )));
            }
            Ok(())
        };
        certificates("ca_cert", &self.ca_cert)?;
        certificates("client_cert", &self.client_cert)?;
        if let Some(pem) = &self.client_key {
            PrivateKeyDer::from_pem_slice(pem).map_err(|e| {
                RedisError::config(format!("the TLS file client_key holds no private key: {e}"))
            })?;
        }
        Ok(())
    }

    /// The certificates as the client takes them.
    #[cfg(feature = "redis-tls")]
    fn certificates(&self) -> redis::TlsCertificates {
        redis::TlsCertificates {
            client_tls: match (&self.client_cert, &self.client_key) {
                (Some(cert), Some(key)) => Some(redis::ClientTlsConfig {
                    client_cert: cert.clone(),
                    client_key: key.clone(),
                }),
                _ => None,
            },
            root_cert: self.ca_cert.clone(),
        }
    }
}

/// The scheme of `url` (before `://`), if it has one.
fn scheme(url: &str) -> Option<&str> {
    url.trim().split_once("://").map(|(scheme, _)| scheme)
}

/// True for a Sentinel URL.
pub(crate) fn is_sentinel(url: &str) -> bool {
    matches!(scheme(url), Some("redis-sentinel" | "rediss-sentinel"))
}

/// Fails unless this build can speak TLS when `url` asks for it.
fn tls_available(url: &str) -> Result<(), RedisError> {
    let wants_tls = scheme(url).is_some_and(|s| s == "rediss" || s == "rediss-sentinel");
    if wants_tls && !cfg!(feature = "redis-tls") {
        return Err(RedisError::config(format!(
            "{} is a TLS URL, and this build of sluicegate has no TLS: enable its `redis-tls` \
             feature",
            redact(url)
        )));
    }
    #[cfg(feature = "redis-tls")]
    if wants_tls {
        // The process's rustls provider: ring, unless the program chose one already.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    Ok(())
}

/// Checks `url` as a limiter would read it (a node's, or a Sentinel URL), without
/// connecting: for a front end's configuration check.
pub(crate) fn check_url(url: &str) -> Result<(), RedisError> {
    if is_sentinel(url) {
        return SentinelUrl::parse(url).map(|_| ());
    }
    tls_available(url)?;
    url.trim()
        .into_connection_info()
        .map(|_| ())
        .map_err(|e| RedisError::config(format!("bad Redis URL {}: {e}", redact(url))))
}

/// A client for the one node at `url`, with `tls`'s files when it is a TLS URL.
pub(crate) fn node_client(url: &str, tls: &Tls) -> Result<redis::Client, RedisError> {
    tls_available(url)?;
    let bad =
        |e: redis::RedisError| RedisError::config(format!("bad Redis URL {}: {e}", redact(url)));
    let info = url.trim().into_connection_info().map_err(bad)?;
    #[cfg(feature = "redis-tls")]
    if matches!(info.addr(), ConnectionAddr::TcpTls { .. }) && tls.is_set() {
        return redis::Client::build_with_tls(info, tls.certificates()).map_err(|e| {
            RedisError::config(format!("cannot use the TLS files for {}: {e}", redact(url)))
        });
    }
    let _ = tls;
    redis::Client::open(info).map_err(bad)
}

/// The TLS files for a cluster's connections, when its seeds are TLS URLs.
#[cfg(feature = "redis-tls")]
pub(crate) fn cluster_certificates(
    url: &str,
    tls: &Tls,
) -> Result<Option<redis::TlsCertificates>, RedisError> {
    for node in url.split(',').filter(|node| !node.trim().is_empty()) {
        tls_available(node)?;
    }
    Ok(tls.is_set().then(|| tls.certificates()))
}

/// A cluster's seed URLs, checked for what this build can speak.
#[cfg(not(feature = "redis-tls"))]
pub(crate) fn cluster_certificates(url: &str, _tls: &Tls) -> Result<Option<()>, RedisError> {
    for node in url.split(',').filter(|node| !node.trim().is_empty()) {
        tls_available(node)?;
    }
    Ok(None)
}

/// Credentials for the Sentinels themselves (the URL's are the data nodes').
#[derive(Clone, Default)]
pub(crate) struct SentinelAuth {
    pub(crate) username: Option<String>,
    pub(crate) password: Option<String>,
}

impl std::fmt::Debug for SentinelAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SentinelAuth")
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .finish()
    }
}

/// A Sentinel URL, read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SentinelUrl {
    /// The Sentinels' addresses.
    pub(crate) sentinels: Vec<(String, u16)>,
    /// The master's name, as Sentinel's `monitor` line names it.
    pub(crate) master: String,
    pub(crate) tls: bool,
    /// The data nodes' database, user and password.
    pub(crate) db: i64,
    pub(crate) username: Option<String>,
    pub(crate) password: Option<String>,
}

impl SentinelUrl {
    /// Reads `redis-sentinel://[user:password@]host[:port][,host[:port]]...[/db]#master`
    /// (`rediss-sentinel://` for TLS to the Sentinels and to the data nodes).
    pub(crate) fn parse(url: &str) -> Result<SentinelUrl, RedisError> {
        let bad = |why: &str| {
            RedisError::config(format!(
                "bad Sentinel URL {}: {why} (the form is redis-sentinel://[user:password@]\
                 host1:26379,host2:26379[/db]#master)",
                redact(url)
            ))
        };
        let url = url.trim();
        let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("no scheme"))?;
        let tls = match scheme {
            "redis-sentinel" => false,
            "rediss-sentinel" => true,
            _ => return Err(bad("the scheme is not redis-sentinel or rediss-sentinel")),
        };
        let (rest, master) = rest
            .split_once('#')
            .ok_or_else(|| bad("no master name after #"))?;
        let master = master.trim();
        if master.is_empty() {
            return Err(bad("an empty master name"));
        }
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (userinfo, hosts) = match authority.rsplit_once('@') {
            Some((userinfo, hosts)) => (Some(userinfo), hosts),
            None => (None, authority),
        };
        let mut sentinels = Vec::new();
        for host in hosts.split(',').map(str::trim).filter(|h| !h.is_empty()) {
            sentinels.push(host_port(host).ok_or_else(|| bad(&format!("a bad address {host:?}")))?);
        }
        if sentinels.is_empty() {
            return Err(bad("no Sentinel address"));
        }
        // The credentials and database, read as redis-rs reads them in a plain URL
        // (percent-decoded).
        let (first, port) = &sentinels[0];
        let host = if first.contains(':') {
            format!("[{first}]")
        } else {
            first.clone()
        };
        let at = userinfo.map(|u| format!("{u}@")).unwrap_or_default();
        let plain = format!("redis://{at}{host}:{port}/{path}");
        let info = plain
            .as_str()
            .into_connection_info()
            .map_err(|e| bad(&e.to_string()))?;
        let settings = info.redis_settings();
        Ok(SentinelUrl {
            sentinels,
            master: master.to_owned(),
            tls,
            db: settings.db(),
            username: settings.username().map(str::to_owned),
            password: settings.password().map(str::to_owned),
        })
    }

    /// The client that asks the Sentinels for the master and connects to it.
    pub(crate) fn client(
        &self,
        tls: &Tls,
        auth: &SentinelAuth,
    ) -> Result<redis::sentinel::SentinelClient, RedisError> {
        use redis::sentinel::{SentinelClientBuilder, SentinelServerType};
        if self.tls {
            tls_available("rediss-sentinel://")?;
        }
        let addresses = self.sentinels.iter().map(|(host, port)| {
            if self.tls {
                ConnectionAddr::TcpTls {
                    host: host.clone(),
                    port: *port,
                    insecure: false,
                    tls_params: None,
                }
            } else {
                ConnectionAddr::Tcp(host.clone(), *port)
            }
        });
        let config = |e: redis::RedisError| RedisError::config(format!("Sentinel: {e}"));
        let mut builder =
            SentinelClientBuilder::new(addresses, &self.master, SentinelServerType::Master)
                .map_err(config)?
                .set_client_to_redis_db(self.db);
        if let Some(username) = &self.username {
            builder = builder.set_client_to_redis_username(username);
        }
        if let Some(password) = &self.password {
            builder = builder.set_client_to_redis_password(password);
        }
        if let Some(username) = &auth.username {
            builder = builder.set_client_to_sentinel_username(username);
        }
        if let Some(password) = &auth.password {
            builder = builder.set_client_to_sentinel_password(password);
        }
        if self.tls {
            builder = builder
                .set_client_to_redis_tls_mode(redis::TlsMode::Secure)
                .set_client_to_sentinel_tls_mode(redis::TlsMode::Secure);
            #[cfg(feature = "redis-tls")]
            if tls.is_set() {
                builder = builder
                    .set_client_to_redis_certificates(tls.certificates())
                    .set_client_to_sentinel_certificates(tls.certificates());
            }
        }
        let _ = tls;
        builder.build().map_err(config)
    }
}

/// `host`, `host:port`, `[v6]` or `[v6]:port` (port default 26379).
fn host_port(text: &str) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        match after.strip_prefix(':') {
            Some(port) => (host, Some(port)),
            None if after.is_empty() => (host, None),
            None => return None,
        }
    } else {
        match text.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    if host.is_empty() {
        return None;
    }
    let port = match port {
        Some(port) => port.parse().ok().filter(|&p| p > 0)?,
        None => SENTINEL_PORT,
    };
    Some((host.to_owned(), port))
}

/// `urls` with any credentials (`user:password@`) replaced by `***@`, for messages.
pub(crate) fn redact(urls: &str) -> String {
    urls.split(',')
        .map(|url| match (url.find("://"), url.rfind('@')) {
            (Some(scheme), Some(at)) if at > scheme => {
                format!("{}***{}", &url[..scheme + 3], &url[at..])
            }
            _ => url.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_reach_messages() {
        assert_eq!(
            redact("redis://:secret@10.0.0.1:6379/0"),
            "redis://***@10.0.0.1:6379/0"
        );
        assert_eq!(
            redact("redis://u:p@a:1,redis://b:2"),
            "redis://***@a:1,redis://b:2"
        );
        assert_eq!(redact("redis://127.0.0.1/"), "redis://127.0.0.1/");
    }

    #[test]
    fn sentinel_urls_read_as_lettuce_writes_them() {
        let url = SentinelUrl::parse(
            "redis-sentinel://app:p%40ss@10.0.0.1:26380,10.0.0.2,[::1]:5000/3#mymaster",
        )
        .unwrap();
        assert_eq!(
            url,
            SentinelUrl {
                sentinels: vec![
                    ("10.0.0.1".into(), 26380),
                    ("10.0.0.2".into(), 26379),
                    ("::1".into(), 5000)
                ],
                master: "mymaster".into(),
                tls: false,
                db: 3,
                username: Some("app".into()),
                password: Some("p@ss".into()),
            }
        );
        let tls = SentinelUrl::parse("rediss-sentinel://:secret@s1#cache").unwrap();
        assert!(tls.tls);
        assert_eq!(tls.password.as_deref(), Some("secret"));
        assert_eq!(tls.username, None);
        assert_eq!(tls.db, 0);
    }

    #[test]
    fn a_bad_sentinel_url_says_what_is_wrong_without_its_password() {
        for (url, why) in [
            ("redis-sentinel://u:hunter2@s1:26379", "no master name"),
            (
                "redis-sentinel://u:hunter2@s1:26379#",
                "an empty master name",
            ),
            ("redis-sentinel://u:hunter2@#m", "no Sentinel address"),
            ("redis-sentinel://u:hunter2@s1:port#m", "a bad address"),
            ("redis-sentinel://u:hunter2@s1:0#m", "a bad address"),
            ("redis-sentinel://u:hunter2@[::1#m", "a bad address"),
        ] {
            let error = SentinelUrl::parse(url).unwrap_err().to_string();
            assert!(error.contains(why), "{url}: {error}");
            assert!(!error.contains("hunter2"), "{error}");
        }
    }

    #[test]
    fn tls_files_need_a_tls_url_and_go_in_pairs() {
        let ca = Tls {
            ca_cert: Some(b"pem".to_vec()),
            ..Tls::default()
        };
        assert!(ca.check_url("rediss://h:6380/").is_ok());
        assert!(ca.check_url("rediss-sentinel://h1,h2#m").is_ok());
        assert!(ca.check_url("redis-sentinel://h1,h2#m").is_err());
        assert!(ca.check_url("rediss://a:1,rediss://b:2").is_ok());
        let error = ca.check_url("redis://:pw@h:6379/").unwrap_err().to_string();
        assert!(
            error.contains("need a TLS URL") && !error.contains("pw"),
            "{error}"
        );
        let half = Tls {
            client_cert: Some(b"pem".to_vec()),
            ..Tls::default()
        };
        assert!(half
            .check_url("rediss://h/")
            .unwrap_err()
            .to_string()
            .contains("go together"));
        assert!(Tls::default().check_url("redis://h/").is_ok());
    }
}
