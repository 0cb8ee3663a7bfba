// SPDX-License-Identifier: MIT OR Apache-2.0
//! Arbitrary bytes as a shared-memory ring, and a peer overwriting words between reads.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| runthrough_fuzz::ring::ring_reader_target(data));
