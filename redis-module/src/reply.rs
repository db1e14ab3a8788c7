//! The reply to a call none of whose groups failed: every element packed in one string,
//! which a client reads as one bulk string instead of parsing an array of them (the parse
//! was a tenth of the client's CPU a batched decision: BENCHMARKS.md, "K-batching").
//!
//! ```text
//! reply   := element*
//! element := 'n' len:u32 bytes             (a group's numbers)
//!          | 'u' (len:u32 bytes){3}        (a reservation that wrote: numbers, before, written)
//! ```
//!
//! Lengths are big-endian. A call with a failed group gets the array `entry.lua` replies,
//! its errors as elements.

use crate::entry::Element;

/// The tag of a group's numbers.
pub const NUMBERS: u8 = b'n';
/// The tag of a reservation that wrote.
pub const UNDO: u8 = b'u';

/// The packed reply, or `None` when an element is an error (then the array is sent).
pub fn pack(elements: &[Element]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(elements.len() * 53);
    for element in elements {
        match element {
            Element::Numbers(numbers) => {
                out.push(NUMBERS);
                field(&mut out, numbers);
            }
            Element::Undo(numbers, before, written) => {
                out.push(UNDO);
                for part in [&numbers[..], &before[..], &written[..]] {
                    field(&mut out, part);
                }
            }
            Element::Error(_) => return None,
        }
    }
    Some(out)
}

fn field(out: &mut Vec<u8>, bytes: &[u8]) {
    let len = u32::try_from(bytes.len()).expect("a field far under 4 GiB");
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(bytes);
}

/// The elements of a packed reply, each as its parts (one for numbers, three for a
/// reservation); `None` if the bytes are not one. For tests and tools: the client reads
/// the form itself.
pub fn unpack(mut bytes: &[u8]) -> Option<Vec<Vec<Vec<u8>>>> {
    let mut elements = Vec::new();
    while let Some((&tag, rest)) = bytes.split_first() {
        let parts = match tag {
            NUMBERS => 1,
            UNDO => 3,
            _ => return None,
        };
        bytes = rest;
        let mut element = Vec::with_capacity(parts);
        for _ in 0..parts {
            let (len, rest) = bytes.split_first_chunk::<4>()?;
            let len = u32::from_be_bytes(*len) as usize;
            if rest.len() < len {
                return None;
            }
            element.push(rest[..len].to_vec());
            bytes = &rest[len..];
        }
        elements.push(element);
    }
    Some(elements)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpack_reads_what_pack_wrote() {
        let elements = [
            Element::Numbers(vec![1; 48]),
            Element::Undo(vec![2; 48], vec![], vec![3; crate::rules::STATE]),
            Element::Numbers(vec![4; 96]),
        ];
        let packed = pack(&elements).unwrap();
        let undo = 1 + 3 * 4 + 48 + crate::rules::STATE;
        assert_eq!(packed.len(), (1 + 4 + 48) + undo + (1 + 4 + 96));
        let parts = unpack(&packed).unwrap();
        assert_eq!(parts[0], vec![vec![1; 48]]);
        assert_eq!(
            parts[1],
            vec![vec![2; 48], vec![], vec![3; crate::rules::STATE]]
        );
        assert_eq!(parts[2], vec![vec![4; 96]]);
        assert_eq!(unpack(&packed[..packed.len() - 1]), None);
        assert_eq!(unpack(b"x"), None);
    }

    #[test]
    fn a_failed_group_keeps_the_array() {
        let elements = [
            Element::Numbers(vec![1; 48]),
            Element::Error("ERR x".into()),
        ];
        assert_eq!(pack(&elements), None);
    }
}
