// SPDX-License-Identifier: MIT OR Apache-2.0
//! Writes the seed corpus of the fuzz targets (fuzz/corpus/<target>/), then runs every seed
//! through its target's checks once, without the fuzzer:
//!
//! ```text
//! cd fuzz && cargo run --bin gen_corpus [-- --show]
//! ```
//!
//! `--show` prints what the decoder makes of each `frame_decoder` seed.
//!
//! Seeds are rewritten in place (deterministic); other files in the corpus folders, such as
//! the `regress-*` inputs of fixed bugs, are left alone and checked too.

use std::fs;
use std::path::{Path, PathBuf};

use runthrough_core::agreement::{Ballot, Contribution, Decision, Message, Summary};
use runthrough_core::packet::{Lane, Packet};
use runthrough_core::wire::{encode, Frame, TOKEN};
use runthrough_core::RankSet;
use runthrough_fuzz::{decoder_target, describe_decoder_input, roundtrip_target, Rng};

/// Control byte 0 of a `frame_decoder` input (see `decoder_target`).
fn limits(first: usize, switch_after: u8, then: usize) -> u8 {
    first as u8 | (switch_after << 3) | ((then as u8) << 5)
}
/// Indexes into `LIMITS`.
const L256: usize = 0;
const L1M: usize = 5;
const LDEFAULT: usize = 7;
/// Control byte 1: every read as large as it can be.
const WHOLE: u8 = 0x0f;
/// Control byte 1: reads of one byte, some of them timing out first.
const BYTES_STALLING: u8 = 0x08;
/// Control byte 1: reads of up to 7 bytes.
const SMALL_READS: u8 = 0x03;
/// Control byte 1: reads of up to 4096 bytes, some timing out.
const PAGE_READS_STALLING: u8 = 0x0d;

fn set(ranks: &[u32]) -> RankSet {
    ranks.iter().copied().collect()
}

fn decision() -> Decision {
    Decision {
        failed: set(&[3, 7, 1000]),
        non_contributors: set(&[7]),
        flag: 0xffff_fff0,
        unacknowledged_failure: true,
    }
}

fn messages() -> Vec<(&'static str, Message)> {
    vec![
        ("prepare", Message::Prepare { ballot: 300 }),
        (
            "promise",
            Message::Promise {
                ballot: 2,
                summary: Summary {
                    known_failed: set(&[1, 2, 40_000]),
                    non_contributors: set(&[2]),
                    acknowledged: set(&[1]),
                    flag: 1,
                    accepted: Some((Ballot::Led(1), decision())),
                },
            },
        ),
        (
            "accept",
            Message::Accept {
                ballot: 5,
                value: decision(),
            },
        ),
        ("accepted", Message::Accepted { ballot: u32::MAX }),
        ("commit", Message::Commit { value: decision() }),
        (
            "promise-fast",
            Message::Promise {
                ballot: 0,
                summary: Summary {
                    accepted: Some((Ballot::Fast, decision())),
                    ..Summary::default()
                },
            },
        ),
        (
            "gather",
            Message::Gather {
                round: 2,
                aggregate: Contribution {
                    known_failed: set(&[3]),
                    acknowledged: set(&[3]),
                    flag: 7,
                },
            },
        ),
        ("hold", Message::Hold { round: 4 }),
    ]
}

fn kinds() -> Vec<(String, Frame)> {
    let mut frames = vec![
        (
            "data".to_string(),
            Frame::Packet(Packet::Data {
                context: 0,
                source: 1,
                tag: -7,
                payload: b"hello, rank 0".to_vec(),
            }),
        ),
        (
            "data-empty".to_string(),
            Frame::Packet(Packet::Data {
                context: u64::MAX,
                source: u32::MAX,
                tag: i32::MAX,
                payload: vec![],
            }),
        ),
        (
            "collective".to_string(),
            Frame::Packet(Packet::Collective {
                context: 5,
                source: 2,
                epoch: 1,
                sequence: 9,
                payload: vec![0xab; 40],
            }),
        ),
    ];
    for (name, message) in messages() {
        frames.push((
            format!("agreement-{name}"),
            Frame::Packet(Packet::Agreement {
                context: 3,
                source: 4,
                seq: 1 << 63 | 2,
                message,
            }),
        ));
    }
    frames.extend([
        (
            "revoke".to_string(),
            Frame::Packet(Packet::Revoke { context: 12 }),
        ),
        (
            "credit".to_string(),
            Frame::Packet(Packet::Credit {
                lane: Lane::Collective,
                bytes: 1 << 22,
            }),
        ),
        (
            "credit-wanted".to_string(),
            Frame::Packet(Packet::CreditWanted { lane: Lane::Point }),
        ),
        (
            "hello".to_string(),
            Frame::Hello {
                rank: 1,
                nonce: [0x11; TOKEN],
            },
        ),
        (
            "challenge".to_string(),
            Frame::Challenge {
                rank: 0,
                nonce: [0x22; TOKEN],
                mac: [0x33; TOKEN],
            },
        ),
        ("proof".to_string(), Frame::Proof { mac: [0x44; TOKEN] }),
        ("heartbeat".to_string(), Frame::Heartbeat),
        (
            "failure-notice".to_string(),
            Frame::FailureNotice { rank: 3 },
        ),
        ("suspect".to_string(), Frame::Suspect { rank: 2 }),
        ("goodbye".to_string(), Frame::Goodbye),
    ]);
    frames
}

fn bytes_of(frames: &[&Frame]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in frames {
        encode(f, &mut out);
    }
    out
}

fn with_control(c0: u8, c1: u8, stream: &[u8]) -> Vec<u8> {
    let mut out = vec![c0, c1];
    out.extend_from_slice(stream);
    out
}

/// A frame by hand: length, kind, then `fields`.
fn raw(kind: u8, fields: &[u8]) -> Vec<u8> {
    let mut out = ((fields.len() + 1) as u32).to_le_bytes().to_vec();
    out.push(kind);
    out.extend_from_slice(fields);
    out
}

/// An agreement frame by hand around message bytes.
fn raw_agreement(message: &[u8]) -> Vec<u8> {
    let mut fields = Vec::new();
    fields.extend_from_slice(&7u64.to_le_bytes());
    fields.extend_from_slice(&1u32.to_le_bytes());
    fields.extend_from_slice(&1u64.to_le_bytes());
    fields.extend_from_slice(message);
    raw(3, &fields)
}

fn decoder_seeds() -> Vec<(String, Vec<u8>)> {
    let mut seeds = Vec::new();
    let big = limits(L1M, 0, L1M);
    let kinds = kinds();
    let chunkings = [WHOLE, SMALL_READS, BYTES_STALLING];
    for (i, (name, frame)) in kinds.iter().enumerate() {
        let stream = bytes_of(&[frame]);
        seeds.push((name.clone(), with_control(big, chunkings[i % 3], &stream)));
    }
    let find = |name: &str| &kinds.iter().find(|(n, _)| n == name).expect("a kind").1;
    let traffic = [
        find("data"),
        find("heartbeat"),
        find("agreement-promise"),
        find("collective"),
        find("failure-notice"),
        find("suspect"),
        find("revoke"),
        find("credit"),
        find("credit-wanted"),
    ];
    // A connection as the connecting rank sees it: the challenge under the handshake limit,
    // then traffic; and as the accepting rank sees it: hello, proof, traffic.
    let mut connect = vec![find("challenge")];
    connect.extend(traffic);
    seeds.push((
        "handshake-connect".into(),
        with_control(limits(L256, 1, L1M), SMALL_READS, &bytes_of(&connect)),
    ));
    let mut accept = vec![find("hello"), find("proof")];
    accept.extend(traffic);
    seeds.push((
        "handshake-accept".into(),
        with_control(
            limits(L256, 2, LDEFAULT),
            BYTES_STALLING,
            &bytes_of(&accept),
        ),
    ));
    let all: Vec<&Frame> = kinds.iter().map(|(_, f)| f).collect();
    seeds.push((
        "all-kinds".into(),
        with_control(big, PAGE_READS_STALLING, &bytes_of(&all)),
    ));

    // Large frames and long streams: a payload read straight into its vector; small frames,
    // then an agreement frame longer than the decoder's buffer (a rank set of 66,000 ranks, one
    // byte each: the buffer is compacted, then grows); 70 KB of small frames (the buffer is
    // compacted when a frame reaches past its end). Both in reads as large as can be: smaller
    // reads often end on a frame boundary, which empties the buffer.
    let mut rng = Rng::new(1);
    let direct = Frame::Packet(Packet::Data {
        context: 1,
        source: 0,
        tag: 0,
        payload: (0..17_000).map(|_| rng.next_u64() as u8).collect(),
    });
    seeds.push((
        "data-direct-17k".into(),
        with_control(
            limits(LDEFAULT, 0, LDEFAULT),
            PAGE_READS_STALLING,
            &bytes_of(&[&direct, &Frame::Heartbeat]),
        ),
    ));
    let long = Frame::Packet(Packet::Agreement {
        context: 0,
        source: 0,
        seq: 0,
        message: Message::Commit {
            value: Decision {
                failed: (0..66_000).collect(),
                ..Decision::default()
            },
        },
    });
    let small = |i: usize| {
        Frame::Packet(Packet::Data {
            context: 0,
            source: i as u32,
            tag: 0,
            payload: vec![i as u8; i % 23],
        })
    };
    let smalls: Vec<Frame> = (0..200).map(small).collect();
    let mut stream: Vec<&Frame> = smalls.iter().collect();
    stream.extend([&long, &Frame::Heartbeat]);
    seeds.push((
        "frames-then-agreement-66k".into(),
        with_control(big, WHOLE, &bytes_of(&stream)),
    ));
    let smalls: Vec<Frame> = (0..2400).map(small).collect();
    let stream: Vec<&Frame> = smalls.iter().collect();
    seeds.push((
        "small-frames-70k".into(),
        with_control(big, WHOLE, &bytes_of(&stream)),
    ));

    // Malformed input.
    let heartbeat = bytes_of(&[&Frame::Heartbeat]);
    let mut malformed: Vec<(&str, u8, Vec<u8>)> = vec![
        ("bad-length-zero", big, vec![0, 0, 0, 0, 19]),
        ("bad-length-max", big, vec![0xff, 0xff, 0xff, 0xff, 1]),
        // 1 GiB declared, the head of a data frame, then nothing.
        ("bad-declared-1gib", limits(LDEFAULT, 0, LDEFAULT), {
            let mut v = vec![0xff, 0xff, 0xff, 0x3f];
            v.extend_from_slice(&raw(1, &[0; 16])[4..]);
            v.extend_from_slice(&[0; 4]);
            v
        }),
        ("bad-kind-0", big, raw(0, &[1, 2, 3])),
        ("bad-kind-99", big, raw(99, &[])),
        ("bad-hello-short", big, raw(16, &[1, 0, 0, 0, 9, 9])),
        ("bad-proof-long", big, raw(18, &[0; TOKEN + 1])),
        ("bad-heartbeat-long", big, raw(19, &[0])),
        ("bad-goodbye-long", big, raw(22, &[0])),
        ("bad-data-short", big, raw(1, &[0; 10])),
        ("bad-revoke-short", big, raw(4, &[1, 2])),
        ("bad-credit-lane", big, raw(5, &[2, 0, 0, 1, 0, 0, 0, 0, 0])),
        ("bad-credit-short", big, raw(5, &[0, 1, 2, 3])),
        ("bad-credit-wanted-long", big, raw(6, &[1, 0])),
        ("bad-agreement-trailing", big, raw_agreement(&[1, 5, 0])),
        ("bad-agreement-tag", big, raw_agreement(&[9])),
        ("bad-agreement-empty", big, raw_agreement(&[])),
        // A commit whose failed set repeats rank 3.
        (
            "bad-agreement-set-order",
            big,
            raw_agreement(&[5, 2, 3, 0, 0, 0, 0, 0, 0, 0]),
        ),
        (
            "bad-agreement-varint",
            big,
            raw_agreement(&[1, 0xff, 0xff, 0xff, 0xff, 0x7f]),
        ),
        // A set longer than the bytes left.
        (
            "bad-agreement-set-len",
            big,
            raw_agreement(&[5, 0xff, 0xff, 0x03, 1]),
        ),
        // Valid although longer than needed: ballot 0 as a two-byte varint.
        (
            "agreement-long-varint",
            big,
            raw_agreement(&[1, 0x80, 0x00]),
        ),
        ("bad-handshake-oversized", limits(L256, 1, L1M), {
            bytes_of(&[&Frame::Packet(Packet::Data {
                context: 0,
                source: 0,
                tag: 0,
                payload: vec![7; 300],
            })])
        }),
    ];
    let mut truncated = bytes_of(&[find("challenge")]);
    truncated.truncate(truncated.len() - 5);
    malformed.push(("bad-truncated", big, truncated));
    let mut garbage = heartbeat.clone();
    garbage.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef, 0x01, 0x02]);
    malformed.push(("bad-garbage-after-frame", big, garbage));
    for (name, c0, stream) in malformed {
        seeds.push((name.to_string(), with_control(c0, SMALL_READS, &stream)));
    }
    seeds
}

fn roundtrip_seeds() -> Vec<(String, Vec<u8>)> {
    // The input is read by arbitrary::Unstructured: byte 0 picks how many frames (1 + b % 4),
    // the next one each frame's kind (b % 12, in the order of `runthrough_fuzz::frame`); the
    // rest fills the fields.
    let mut seeds = Vec::new();
    let mut rng = Rng::new(7);
    for kind in 0..12u8 {
        for (variant, len) in [("short", 48), ("long", 400)] {
            let mut bytes = vec![0, kind];
            bytes.extend((0..len).map(|_| rng.next_u64() as u8));
            seeds.push((format!("kind{kind}-{variant}"), bytes));
        }
    }
    // Four frames; a data frame whose payload takes the 16-70 KB branch (ratio byte 0).
    let mut four = vec![3, 0];
    four.extend((0..600).map(|_| rng.next_u64() as u8));
    seeds.push(("four-frames".into(), four));
    let mut big = vec![0, 0];
    big.extend_from_slice(&[1; 16]);
    big.push(0);
    big.extend((0..64).map(|_| rng.next_u64() as u8));
    seeds.push(("data-big-payload".into(), big));
    seeds
}

fn write(dir: &Path, seeds: &[(String, Vec<u8>)]) -> std::io::Result<()> {
    fs::create_dir_all(dir)?;
    for (name, bytes) in seeds {
        fs::write(dir.join(name), bytes)?;
    }
    Ok(())
}

fn check(dir: &Path, target: fn(&[u8])) -> std::io::Result<usize> {
    let mut n = 0;
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    paths.sort();
    for path in paths {
        target(&fs::read(&path)?);
        n += 1;
    }
    Ok(n)
}

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let decoder = root.join("frame_decoder");
    let roundtrip = root.join("frame_roundtrip");
    write(&decoder, &decoder_seeds())?;
    write(&roundtrip, &roundtrip_seeds())?;
    let a = check(&decoder, decoder_target)?;
    let b = check(&roundtrip, roundtrip_target)?;
    if std::env::args().any(|a| a == "--show") {
        for (name, bytes) in decoder_seeds() {
            println!("{name}: {}", describe_decoder_input(&bytes));
        }
    }
    println!(
        "wrote and checked {a} inputs in {} and {b} in {}",
        decoder.display(),
        roundtrip.display()
    );
    Ok(())
}
