//! [`BuildError`]: the one configuration error of the HTTP front ends: every problem found,
//! each naming its option by path, in the host's spelling.

use std::fmt;

/// Why a front end could not be built from its configuration: a
/// [`FrontEndSpec`](super::spec::FrontEndSpec), a [`RateLimitBuilder`](super::RateLimitBuilder)'s
/// limits, an extractor's setting, a network of trusted proxies. It holds every problem found,
/// not only the first, each naming the option it is about by its path as the user wrote it
/// (`limits[1].quota`, `trusted_proxies[0]`), in snake case unless a front end asks for its
/// host's spelling with [`naming`](Self::naming) (`trustedProxies[0]` for Node).
///
/// ```
/// use sluicegate::http::spec::{FrontEndSpec, LimitSpec};
/// use sluicegate::http::Naming;
///
/// let mut spec = FrontEndSpec::new([LimitSpec::new("ip", "5/fortnight"), LimitSpec::new("", "1/s")]);
/// spec.ipv6_prefix = Some(300);
/// let error = spec.build().unwrap_err().naming(Naming::Camel);
/// assert_eq!(error.problems().len(), 3);
/// assert_eq!(error.problems()[2].path(), "ipv6Prefix");
/// assert!(error.to_string().starts_with("limits[0].quota: invalid quota \"5/fortnight\""));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError {
    problems: Vec<Problem>,
    naming: Naming,
}

/// One problem of a [`BuildError`]: the option's path and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    path: OptionPath,
    reason: String,
    naming: Naming,
}

/// How a [`BuildError`] spells option names: as the library, Python and YAML do
/// (`trusted_proxies`, the default), or as JavaScript does (`trustedProxies`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Naming {
    /// `snake_case`.
    #[default]
    Snake,
    /// `camelCase`.
    Camel,
}

/// Where an option sits: fields (by their snake-case names), list indices and map keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct OptionPath(Vec<Step>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Field(&'static str),
    Index(usize),
    Key(String),
}

impl OptionPath {
    /// The top-level option `field`.
    pub(crate) fn field(field: &'static str) -> Self {
        OptionPath(vec![Step::Field(field)])
    }

    /// This path, then `field`.
    pub(crate) fn then(&self, field: &'static str) -> Self {
        let mut steps = self.0.clone();
        steps.push(Step::Field(field));
        OptionPath(steps)
    }

    /// This path, then item `index` of a list.
    pub(crate) fn at(&self, index: usize) -> Self {
        let mut steps = self.0.clone();
        steps.push(Step::Index(index));
        OptionPath(steps)
    }

    /// This path, then entry `key` of a map.
    pub(crate) fn key(&self, key: &str) -> Self {
        let mut steps = self.0.clone();
        steps.push(Step::Key(key.to_owned()));
        OptionPath(steps)
    }

    fn write(&self, naming: Naming, out: &mut String) {
        for step in &self.0 {
            match step {
                Step::Field(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    push_name(name, naming, out);
                }
                Step::Index(i) => out.push_str(&format!("[{i}]")),
                Step::Key(key) => {
                    let plain = !key.is_empty()
                        && key
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                    if plain {
                        out.push('.');
                        out.push_str(key);
                    } else {
                        out.push_str(&format!("[{key:?}]"));
                    }
                }
            }
        }
    }
}

/// `name` (snake case) in `naming`.
fn push_name(name: &str, naming: Naming, out: &mut String) {
    match naming {
        Naming::Snake => out.push_str(name),
        Naming::Camel => {
            let mut upper = false;
            for c in name.chars() {
                if c == '_' {
                    upper = true;
                } else if upper {
                    out.push(c.to_ascii_uppercase());
                    upper = false;
                } else {
                    out.push(c);
                }
            }
        }
    }
}

impl Problem {
    /// The option's path, in the error's [`Naming`] (`limits[1].quota`); empty for a problem
    /// with the configuration as a whole.
    pub fn path(&self) -> String {
        let mut out = String::new();
        self.path.write(self.naming, &mut out);
        out
    }

    /// What is wrong, as a sentence without the option's path.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path();
        if !path.is_empty() {
            write!(f, "{path}: ")?;
        }
        f.write_str(&self.reason)
    }
}

impl BuildError {
    /// An error about the configuration as a whole (no option path).
    pub(crate) fn new(message: impl Into<String>) -> Self {
        BuildError::at(OptionPath::default(), message)
    }

    /// An error about the option at `path`.
    pub(crate) fn at(path: OptionPath, message: impl Into<String>) -> Self {
        BuildError {
            problems: vec![Problem {
                path,
                reason: message.into(),
                naming: Naming::Snake,
            }],
            naming: Naming::Snake,
        }
    }

    /// Every problem, in the order of the options.
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// The same error, naming options as `naming` spells them.
    pub fn naming(mut self, naming: Naming) -> Self {
        self.naming = naming;
        for problem in &mut self.problems {
            problem.naming = naming;
        }
        self
    }
}

/// Collects the problems of a configuration, to report them all at once.
#[derive(Debug, Default)]
pub(crate) struct Problems(Vec<Problem>);

impl Problems {
    /// Records a problem with the option at `path`.
    pub(crate) fn add(&mut self, path: OptionPath, reason: impl Into<String>) {
        self.0.push(Problem {
            path,
            reason: reason.into(),
            naming: Naming::Snake,
        });
    }

    /// The value of `result`, or `None` with its problem recorded at `path`.
    pub(crate) fn ok<T, E: fmt::Display>(
        &mut self,
        path: OptionPath,
        result: Result<T, E>,
    ) -> Option<T> {
        result.map_err(|e| self.add(path, e.to_string())).ok()
    }

    /// How many problems so far.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// `value` when nothing was found wrong, else every problem.
    pub(crate) fn done<T>(self, value: impl FnOnce() -> T) -> Result<T, BuildError> {
        if self.0.is_empty() {
            Ok(value())
        } else {
            Err(BuildError {
                problems: self.0,
                naming: Naming::Snake,
            })
        }
    }
}

impl fmt::Display for BuildError {
    /// Every problem, `path: reason`, separated by `; `.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            problem.fmt(f)?;
        }
        Ok(())
    }
}

impl std::error::Error for BuildError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_spelt_in_the_hosts_naming() {
        let path = OptionPath::field("limits")
            .at(2)
            .then("tiers")
            .then("quotas")
            .key("pro");
        let error = BuildError::at(path, "bad").naming(Naming::Camel);
        assert_eq!(error.to_string(), "limits[2].tiers.quotas.pro: bad");
        let error = BuildError::at(OptionPath::field("trusted_proxies").at(0), "no");
        assert_eq!(error.to_string(), "trusted_proxies[0]: no");
        assert_eq!(
            error.clone().naming(Naming::Camel).to_string(),
            "trustedProxies[0]: no"
        );
        let odd = BuildError::at(OptionPath::field("x").key("a b"), "no");
        assert_eq!(odd.to_string(), "x[\"a b\"]: no");
        assert_eq!(BuildError::new("whole").to_string(), "whole");
    }

    #[test]
    fn every_problem_is_kept() {
        let mut problems = Problems::default();
        problems.add(OptionPath::field("max_keys"), "must be at least 1");
        problems.add(OptionPath::field("ipv6_prefix"), "is 0 to 128");
        let error = problems.done(|| ()).unwrap_err();
        assert_eq!(error.problems().len(), 2);
        assert_eq!(
            error.naming(Naming::Camel).to_string(),
            "maxKeys: must be at least 1; ipv6Prefix: is 0 to 128"
        );
    }
}
