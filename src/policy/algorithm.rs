//! Parsing an [`AlgorithmKind`] from its kebab-case name.

use crate::algorithm::AlgorithmKind;
use std::str::FromStr;

impl FromStr for AlgorithmKind {
    type Err = super::PolicyError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text.trim().to_ascii_lowercase().replace('_', "-");
        AlgorithmKind::ALL
            .into_iter()
            .find(|kind| kind.name() == wanted)
            .ok_or_else(|| super::PolicyError::UnknownAlgorithm(text.trim().to_owned()))
    }
}
