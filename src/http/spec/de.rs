//! Reading a [`FrontEndSpec`](super::FrontEndSpec) with serde: the forms a field may take
//! (one string or a list, a boolean for the headers, a URL or a map for Redis, a map or a
//! list of tiers). Values are read as text here and checked when the spec is built, so that
//! every problem is reported at once.

use super::{RedisSpec, TierSpec};
use serde::de::{Deserialize, Deserializer};

/// One string or a list of strings.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl From<OneOrMany> for Vec<String> {
    fn from(value: OneOrMany) -> Self {
        match value {
            OneOrMany::One(text) => vec![text],
            OneOrMany::Many(texts) => texts,
        }
    }
}

/// A string, a list of strings, or nothing (`null`).
pub(super) fn texts<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    Ok(Option::<OneOrMany>::deserialize(deserializer)?.map_or_else(Vec::new, Vec::from))
}

/// The headers' forms: a boolean (`true` standard, `false` none), a string or a list.
pub(super) fn forms<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Forms {
        Flag(bool),
        Texts(OneOrMany),
    }
    Ok(match Option::<Forms>::deserialize(deserializer)? {
        None => Vec::new(),
        Some(Forms::Flag(true)) => vec!["standard".to_owned()],
        Some(Forms::Flag(false)) => vec!["none".to_owned()],
        Some(Forms::Texts(texts)) => texts.into(),
    })
}

/// Tiers: a map of labels to quotas (a string or a list), or a list of quota strings, each
/// its own label. A map's order is kept where the format has one.
pub(super) fn tiers<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<TierSpec>, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Tiers {
        Listed(Vec<String>),
        Named(Labelled),
    }
    Ok(match Option::<Tiers>::deserialize(deserializer)? {
        None => Vec::new(),
        Some(Tiers::Listed(quotas)) => quotas
            .into_iter()
            .map(|quota| TierSpec {
                label: quota.clone(),
                quota: vec![quota],
            })
            .collect(),
        Some(Tiers::Named(Labelled(tiers))) => tiers,
    })
}

/// A map of labels to quotas, in the order given.
struct Labelled(Vec<TierSpec>);

impl<'de> Deserialize<'de> for Labelled {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Labelled;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of tier labels to quotas, or a list of quota strings")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Labelled, A::Error> {
                let mut tiers = Vec::new();
                while let Some((label, quota)) = map.next_entry::<String, OneOrMany>()? {
                    tiers.push(TierSpec {
                        label,
                        quota: quota.into(),
                    });
                }
                Ok(Labelled(tiers))
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// The default cost.
pub(super) fn one() -> u32 {
    1
}

/// Redis as a URL, or a map of its fields.
#[derive(serde::Deserialize)]
#[serde(untagged)]
pub(super) enum RedisForm {
    Url(String),
    Fields(RedisFields),
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RedisFields {
    url: String,
    #[serde(default)]
    cluster: bool,
    #[serde(default)]
    module: bool,
    #[serde(default)]
    connect: Option<String>,
    #[serde(default, alias = "caCert")]
    ca_cert: Option<String>,
    #[serde(default, alias = "clientCert")]
    client_cert: Option<String>,
    #[serde(default, alias = "clientKey")]
    client_key: Option<String>,
    #[serde(default, alias = "sentinelUsername")]
    sentinel_username: Option<String>,
    #[serde(default, alias = "sentinelPassword")]
    sentinel_password: Option<String>,
}

impl From<RedisForm> for RedisSpec {
    fn from(form: RedisForm) -> Self {
        match form {
            RedisForm::Url(url) => RedisSpec::new(url),
            RedisForm::Fields(fields) => RedisSpec {
                url: fields.url,
                cluster: fields.cluster,
                module: fields.module,
                connect: fields.connect,
                ca_cert: fields.ca_cert,
                client_cert: fields.client_cert,
                client_key: fields.client_key,
                sentinel_username: fields.sentinel_username,
                sentinel_password: fields.sentinel_password,
            },
        }
    }
}
