// SPDX-License-Identifier: MIT OR Apache-2.0
//! Frames built from the input: encode, decode, truncate, stream.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| runthrough_fuzz::roundtrip_target(data));
