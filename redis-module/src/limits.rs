//! What one `SLUICEGATE.DECIDE` call may carry, checked before the module allocates anything
//! for it, so that no call can make Redis allocate more than a few MiB (a 30 MB argument of
//! empty groups once made it allocate 42 times its size). Each cap is far above what the
//! client sends: a batch holds at most 64 calls and about 32 KiB of keys and arguments, and
//! the client sends a call beyond these caps (a composite of more than [`MAX_MEMBERS`]
//! limits) to the scripts instead (`src/redis/group.rs`).
//!
//! With the caps, a call's memory is at most about 9 times [`MAX_ARGUMENT_BYTES`] (each
//! member's 51 bytes become its 48 packed numbers, in the group's element and again in the
//! packed reply, and its decision's 100 bytes or so), plus about 100 bytes per key: 2.5 MiB.

use crate::entry::MALFORMED;
use std::borrow::Cow;

/// Bytes of the packed calls (the last argument) at most.
pub const MAX_ARGUMENT_BYTES: usize = 256 * 1024;
/// Keys of one call at most.
pub const MAX_KEYS: usize = 4096;
/// Groups (calls of the client, batched) in one call at most.
pub const MAX_GROUPS: usize = 1024;
/// Members (limits decided together) of one group at most.
pub const MAX_MEMBERS: usize = 1024;

/// Bytes of a group's header (`>BH`) and of a member (`>HBdddddd`).
const GROUP: usize = 3;
const MEMBER: usize = 51;

/// Checks `keys` keys and the packed calls `blob` against the caps and the form the client
/// packs (every group whole, every key index in range), without allocating. `Err` is the
/// error reply, naming the cap a call passed.
pub fn check(keys: usize, blob: &[u8]) -> Result<(), Cow<'static, str>> {
    if keys > MAX_KEYS {
        return Err(over("keys", MAX_KEYS, &keys.to_string()));
    }
    if blob.len() > MAX_ARGUMENT_BYTES {
        return Err(Cow::Owned(format!(
            "ERR sluicegate: a call's packed argument is at most {MAX_ARGUMENT_BYTES} bytes \
             (SLUICEGATE.DECIDE's cap); this one has {}",
            blob.len()
        )));
    }
    let mut rest = blob;
    let mut groups = 0;
    while let Some((header, tail)) = rest.split_first_chunk::<GROUP>() {
        groups += 1;
        if groups > MAX_GROUPS {
            return Err(over("groups", MAX_GROUPS, "more"));
        }
        let members = usize::from(u16::from_be_bytes([header[1], header[2]]));
        if members > MAX_MEMBERS {
            return Err(Cow::Owned(format!(
                "ERR sluicegate: a group has at most {MAX_MEMBERS} members \
                 (SLUICEGATE.DECIDE's cap); group {groups} has {members}"
            )));
        }
        let Some((body, tail)) = tail.split_at_checked(members * MEMBER) else {
            return Err(Cow::Borrowed(MALFORMED));
        };
        let in_range = body.chunks_exact(MEMBER).all(|member| {
            let key = usize::from(u16::from_be_bytes([member[0], member[1]]));
            (1..=keys).contains(&key)
        });
        if !in_range {
            return Err(Cow::Borrowed(MALFORMED));
        }
        rest = tail;
    }
    if !rest.is_empty() {
        return Err(Cow::Borrowed(MALFORMED));
    }
    Ok(())
}

/// The error for a call carrying `count` of `what`, beyond `cap`.
fn over(what: &str, cap: usize, count: &str) -> Cow<'static, str> {
    Cow::Owned(format!(
        "ERR sluicegate: a call carries at most {cap} {what} (SLUICEGATE.DECIDE's cap); \
         this one has {count}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(op: u8, members: u16, key: u16) -> Vec<u8> {
        let mut out = vec![op];
        out.extend_from_slice(&members.to_be_bytes());
        for _ in 0..members {
            out.extend_from_slice(&key.to_be_bytes());
            out.extend_from_slice(&[b'f'; MEMBER - 2]);
        }
        out
    }

    #[test]
    fn a_call_within_every_cap_passes() {
        let mut blob = Vec::new();
        for _ in 0..MAX_GROUPS {
            blob.extend(group(b'c', 4, 2));
        }
        assert!(blob.len() <= MAX_ARGUMENT_BYTES);
        assert_eq!(check(2, &blob), Ok(()));
        assert_eq!(check(2, &group(b'h', MAX_MEMBERS as u16, 1)), Ok(()));
        assert_eq!(check(1, &[]), Ok(()));
    }

    #[test]
    fn each_cap_is_named_when_passed() {
        let error = |keys, blob: &[u8]| check(keys, blob).unwrap_err().into_owned();
        assert!(error(MAX_KEYS + 1, &[]).contains("at most 4096 keys"));
        let empty_groups = b"c\0\0".repeat(MAX_GROUPS + 1);
        assert!(error(1, &empty_groups).contains("at most 1024 groups"));
        let wide = group(b'c', MAX_MEMBERS as u16 + 1, 1);
        assert!(error(1, &wide).contains("at most 1024 members"));
        let huge = b"c\0\0".repeat(MAX_ARGUMENT_BYTES / 3 + 1);
        assert!(error(1, &huge).contains("at most 262144 bytes"));
    }

    #[test]
    fn a_blob_the_client_did_not_pack_is_malformed() {
        let good = group(b'c', 2, 1);
        assert_eq!(
            check(0, &good).unwrap_err(),
            MALFORMED,
            "index out of range"
        );
        assert_eq!(
            check(1, &group(b'c', 1, 0)).unwrap_err(),
            MALFORMED,
            "index 0"
        );
        assert_eq!(check(1, &good[..good.len() - 1]).unwrap_err(), MALFORMED);
        let mut trailing = good.clone();
        trailing.push(0);
        assert_eq!(check(1, &trailing).unwrap_err(), MALFORMED);
    }
}
