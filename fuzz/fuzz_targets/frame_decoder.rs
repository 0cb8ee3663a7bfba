// SPDX-License-Identifier: MIT OR Apache-2.0
//! Arbitrary bytes, in arbitrary reads, into the transport's frame decoder.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| runthrough_fuzz::decoder_target(data));
