//! TLS files for tests, made by the `openssl` command line in a temporary directory: a CA, a
//! server certificate for 127.0.0.1 and localhost signed by it, one for another host name
//! (`stranger`), a client certificate signed by it, and a second CA that signed nothing of
//! these. Removed when dropped.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The files, in one directory.
#[derive(Debug)]
pub struct TlsFiles {
    dir: PathBuf,
}

impl TlsFiles {
    /// Makes every file (RSA 2048, valid for a day).
    pub fn make(tag: &str) -> TlsFiles {
        let dir = std::env::temp_dir().join(format!("sluicegate-tls-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a directory for the TLS files");
        let files = TlsFiles { dir };
        for ca in ["ca", "other-ca"] {
            files.openssl(&[
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-subj",
                &format!("/CN=sluicegate test {ca}"),
                "-keyout",
                &format!("{ca}.key"),
                "-out",
                &format!("{ca}.crt"),
            ]);
        }
        files.signed(
            "server",
            "127.0.0.1",
            "subjectAltName=IP:127.0.0.1,DNS:localhost",
        );
        files.signed(
            "stranger",
            "redis.example",
            "subjectAltName=DNS:redis.example",
        );
        files.signed("client", "sluicegate client", "extendedKeyUsage=clientAuth");
        files
    }

    /// A key and a certificate named `name`, signed by the CA.
    fn signed(&self, name: &str, common: &str, extension: &str) {
        let ext = format!("{name}.ext");
        std::fs::write(self.dir.join(&ext), format!("{extension}\n")).unwrap();
        self.openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            &format!("/CN={common}"),
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.csr"),
        ]);
        self.openssl(&[
            "x509",
            "-req",
            "-in",
            &format!("{name}.csr"),
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            &ext,
            "-out",
            &format!("{name}.crt"),
        ]);
    }

    fn openssl(&self, args: &[&str]) {
        let output = match Command::new("openssl")
            .args(args)
            .current_dir(&self.dir)
            .output()
        {
            Ok(output) => output,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                panic!(
                    "openssl is needed to make this test's certificates: apt-get install openssl"
                )
            }
            Err(e) => panic!("cannot run openssl: {e}"),
        };
        assert!(output.status.success(), "openssl {args:?}: {output:?}");
    }

    /// The path of `name` (`ca.crt`, `server.key`, `client.crt`, ...).
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The contents of `name`.
    pub fn read(&self, name: &str) -> Vec<u8> {
        std::fs::read(self.path(name)).expect("a TLS file")
    }

    /// `redis-server` arguments serving TLS on `port` with the server certificate; with
    /// `mutual`, refusing clients without a certificate signed by the CA.
    pub fn server_args(&self, port: u16, mutual: bool) -> Vec<String> {
        self.server_args_as("server", port, mutual)
    }

    /// The same with the certificate `name` (`stranger`: one for another host name).
    pub fn server_args_as(&self, name: &str, port: u16, mutual: bool) -> Vec<String> {
        let path = |name: &str| self.path(name).display().to_string();
        vec![
            "--tls-port".into(),
            port.to_string(),
            "--tls-cert-file".into(),
            path(&format!("{name}.crt")),
            "--tls-key-file".into(),
            path(&format!("{name}.key")),
            "--tls-ca-cert-file".into(),
            path("ca.crt"),
            "--tls-auth-clients".into(),
            if mutual { "yes" } else { "no" }.into(),
        ]
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for TlsFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
