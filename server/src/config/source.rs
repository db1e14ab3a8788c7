//! Reading the config from a file or a directory, and a fingerprint of what was read so the
//! watcher can tell when it changed.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

/// The largest config file read (a guard against pointing `--config` at something huge).
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// What the config's files are now: each file's name, identity (inode) and a hash of its
/// contents; equal fingerprints mean nothing changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    files: Vec<Mark>,
    /// A hash of why the config cannot be read, when it cannot.
    problem: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Mark {
    name: String,
    inode: u64,
    contents: u64,
}

impl Fingerprint {
    /// True when the change from `before` is only files replaced whole: the same names, and
    /// each file whose contents changed is a new file (inode) at its name. That is what a
    /// rename over the old file (`mv`, a config manager's write-then-rename, Kubernetes'
    /// symlink swap) makes, and such a file is complete when it appears; a file rewritten in
    /// place (or a file added or removed) may be half-way through a change.
    pub fn replaced_whole(&self, before: &Fingerprint) -> bool {
        self.problem.is_none()
            && before.problem.is_none()
            && self.files.len() == before.files.len()
            && self.files.iter().zip(&before.files).all(|(now, was)| {
                now.name == was.name && (now.contents == was.contents || now.inode != was.inode)
            })
    }
}

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
    files(path)?.iter().map(|file| read_one(file)).collect()
}

/// Reads one config file as `(name, text)`.
fn read_one(file: &Path) -> Result<(String, String), String> {
    let name = file.display().to_string();
    let size = std::fs::metadata(file)
        .map_err(|e| format!("{name}: {e}"))?
        .len();
    if size > MAX_FILE_BYTES {
        return Err(format!(
            "{name}: the file has {size} bytes, more than the {MAX_FILE_BYTES} a config file may have"
        ));
    }
    let bytes = std::fs::read(file).map_err(|e| format!("{name}: cannot read it: {e}"))?;
    let text =
        String::from_utf8(bytes).map_err(|_| format!("{name}: the file is not UTF-8 text"))?;
    Ok((name, text))
}

/// The fingerprint of what [`load`](super::load) would read now; an unreadable config has a
/// fingerprint too (of its error), so that fixing it counts as a change.
pub fn fingerprint(path: &Path) -> Fingerprint {
    let hash = |value: &dyn Fn(&mut DefaultHasher)| {
        let mut hasher = DefaultHasher::new();
        value(&mut hasher);
        hasher.finish()
    };
    let marks = files(path).and_then(|files| {
        files
            .iter()
            .map(|file| {
                let name = file.display().to_string();
                let inode = inode(file).map_err(|e| format!("{name}: {e}"))?;
                let (_, text) = read_one(file)?;
                Ok(Mark {
                    contents: hash(&|h| text.hash(h)),
                    name,
                    inode,
                })
            })
            .collect::<Result<Vec<_>, String>>()
    });
    match marks {
        Ok(files) => Fingerprint {
            files,
            problem: None,
        },
        Err(problem) => Fingerprint {
            files: Vec::new(),
            problem: Some(hash(&|h| problem.hash(h))),
        },
    }
}

/// The file's inode (of the file a symlink points to); 0 where there are none.
fn inode(file: &Path) -> std::io::Result<u64> {
    let meta = std::fs::metadata(file)?;
    #[cfg(unix)]
    {
        Ok(std::os::unix::fs::MetadataExt::ino(&meta))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rename_is_a_whole_replacement_and_an_in_place_write_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.yaml");
        std::fs::write(&file, "a").unwrap();
        let first = fingerprint(&file);
        std::fs::write(&file, "b").unwrap();
        let in_place = fingerprint(&file);
        assert_ne!(in_place, first);
        assert!(!in_place.replaced_whole(&first));
        let temporary = dir.path().join(".c.yaml.tmp");
        std::fs::write(&temporary, "c").unwrap();
        std::fs::rename(&temporary, &file).unwrap();
        let renamed = fingerprint(&file);
        assert!(renamed.replaced_whole(&in_place));
    }
}
