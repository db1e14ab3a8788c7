//! [`quota_name`]: the one rule naming the quotas of a limit that has several.

use std::borrow::Cow;

/// The name of quota `index` (from 0) of a limit called `name` that has `count` quotas
/// (`"5/minute; 100/hour"`): the limit's own name when it has one, else `NAME-1`, `NAME-2`...
/// in the order given.
///
/// A contract: each quota is its own limit in the `RateLimit` headers and under its own
/// Redis prefix ([`redis_prefix`](crate::http::redis_prefix) of this name, with feature
/// `http`), so every front end (the HTTP front-end specification, the Node and Python
/// middlewares, `sluicegate-server`'s headers) names them by this function.
///
/// ```
/// use sluicegate::policy::quota_name;
/// assert_eq!(quota_name("api", 0, 1), "api");
/// assert_eq!(quota_name("api", 0, 2), "api-1");
/// assert_eq!(quota_name("api", 1, 2), "api-2");
/// ```
pub fn quota_name(name: &str, index: usize, count: usize) -> Cow<'_, str> {
    if count <= 1 {
        Cow::Borrowed(name)
    } else {
        Cow::Owned(format!("{name}-{}", index + 1))
    }
}
