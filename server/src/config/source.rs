//! Reading the config from a file or a directory, and a fingerprint of what was read so the
//! watcher can tell when it changed.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

/// The largest config file read (a guard against pointing `--config` at something huge).
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A hash of the config's file names and contents; equal fingerprints mean nothing changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint(u64);

/// The config files under `path`: the file itself, or a directory's `*.yaml`/`*.yml` files
/// (not dot files, not subdirectories) in name order.
fn files(path: &Path) -> Result<Vec<PathBuf>, String> {
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("{}: cannot read the config: {e}", path.display()))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let entries = std::fs::read_dir(path)
        .map_err(|e| format!("{}: cannot list the config directory: {e}", path.display()))?;
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", path.display()))?;
        let file = entry.path();
        let yaml = matches!(
            file.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        );
        // Dot files are editors' and config managers' scratch copies, not config.
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if yaml && !hidden && file.is_file() {
            found.push(file);
        }
    }
    found.sort();
    if found.is_empty() {
        return Err(format!(
            "{}: the config directory has no *.yaml or *.yml file",
            path.display()
        ));
    }
    Ok(found)
}

/// Reads every config file under `path` as `(name, text)`.
pub(super) fn read(path: &Path) -> Result<Vec<(String, String)>, String> {
    let mut read = Vec::new();
    for file in files(path)? {
        let name = file.display().to_string();
        let size = std::fs::metadata(&file)
            .map_err(|e| format!("{name}: {e}"))?
            .len();
        if size > MAX_FILE_BYTES {
            return Err(format!(
                "{name}: the file has {size} bytes, more than the {MAX_FILE_BYTES} a config file may have"
            ));
        }
        let bytes = std::fs::read(&file).map_err(|e| format!("{name}: cannot read it: {e}"))?;
        let text =
            String::from_utf8(bytes).map_err(|_| format!("{name}: the file is not UTF-8 text"))?;
        read.push((name, text));
    }
    Ok(read)
}

/// The fingerprint of what [`load`](super::load) would read now; an unreadable config has a fingerprint
/// too (of its error), so that fixing it counts as a change.
pub fn fingerprint(path: &Path) -> Fingerprint {
    let mut hasher = DefaultHasher::new();
    match read(path) {
        Ok(files) => files.hash(&mut hasher),
        Err(problem) => problem.hash(&mut hasher),
    }
    Fingerprint(hasher.finish())
}
