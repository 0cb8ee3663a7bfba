// SPDX-License-Identifier: MIT OR Apache-2.0
//! Received payloads handed over whole (issue 12, item 3: no second copy where the API allows
//! it): `recv_vec` of an alignment-1 type takes the sender's buffer itself, and every other
//! element type still gets an aligned copy with the same contents (SPEC §3.1).

mod support;

use runthrough::{Result, Source, Tag};
use support::{bounded, outcomes};

/// Bytes, 3-byte arrays (a whole number of them, and with a trailing partial element that the
/// count leaves out) and u64s arrive intact through `recv_vec`.
#[test]
fn recv_vec_delivers_every_element_type_intact() {
    bounded(|| {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
        let results = runthrough::local(2).run(|world| -> Result<()> {
            if world.rank() == 0 {
                world.send(&bytes, 1, 0)?;
                world.send(&bytes[..9], 1, 1)?;
                world.send(&bytes[..7], 1, 2)?;
                world.send(&[7u64, 8, 9], 1, 3)?;
                return Ok(());
            }
            let (got, status) = world.recv_vec::<u8>(0u32, 0)?;
            assert_eq!(
                (got.as_slice(), status.count),
                (bytes.as_slice(), bytes.len())
            );
            let (triples, status) = world.recv_vec::<[u8; 3]>(0u32, 1)?;
            assert_eq!(
                (triples, status.count),
                (vec![[0, 1, 2], [3, 4, 5], [6, 7, 8]], 3)
            );
            let (triples, status) = world.recv_vec::<[u8; 3]>(Source::Any, 2)?;
            assert_eq!((triples, status.count), (vec![[0, 1, 2], [3, 4, 5]], 2));
            let (words, _) = world.recv_vec::<u64>(0u32, Tag::Any)?;
            assert_eq!(words, [7, 8, 9]);
            Ok(())
        });
        outcomes(results, &[]);
    });
}
