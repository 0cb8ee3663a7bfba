// SPDX-License-Identifier: MIT OR Apache-2.0
//! The shared-memory ring's floor between two threads (issue 12 step (b)): one-way 8-byte
//! entries (throughput, and ping-pong latency over two rings) and 1 MiB messages cut into
//! chunks. The ring alone, no transport: what step (c) can at best reach.
//!
//! ```sh
//! cargo run --release -p runthrough-net --example ring_bench            # about 10 s
//! cargo run --release -p runthrough-net --example ring_bench -- --quick  # a smoke run
//! ```
//!
//! It checks what arrives (counts, and the bytes of every message in the 1 MiB rows) and exits
//! non-zero when something is wrong. The load average is printed: on a loaded machine the
//! figures are upper bounds.

use std::sync::Arc;
use std::time::Instant;

use runthrough_net::shm::{self, Consumer, HeapRegion, Producer, Push};

type Ring = (Producer<Arc<HeapRegion>>, Consumer<Arc<HeapRegion>>);

fn ring(capacity: usize) -> Ring {
    let region = Arc::new(HeapRegion::zeroed(shm::region_len(capacity)));
    shm::init(&region).expect("a valid layout");
    (
        Producer::attach(region.clone()).expect("attach"),
        Consumer::attach(region).expect("attach"),
    )
}

fn push(producer: &mut Producer<Arc<HeapRegion>>, tag: u8, bytes: &[u8]) {
    while producer.try_push(tag, bytes).expect("push") == Push::Full {
        std::hint::spin_loop();
    }
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|_| "?".into())
}

/// One-way 8-byte entries, as fast as they go: nanoseconds per entry.
fn small_throughput(count: u64) -> f64 {
    let (mut producer, mut consumer) = ring(1 << 16);
    let writer = std::thread::spawn(move || {
        for seq in 0..count {
            push(&mut producer, 0, &seq.to_le_bytes());
        }
    });
    let start = Instant::now();
    let mut buffer = [0u8; 8];
    let mut seq = 0;
    while seq < count {
        match consumer.try_pop_into(&mut buffer).expect("pop") {
            Some((_, 8)) => {
                assert_eq!(u64::from_le_bytes(buffer), seq, "entry out of order");
                seq += 1;
            }
            Some((_, len)) => panic!("an entry of {len} bytes"),
            None => std::hint::spin_loop(),
        }
    }
    let elapsed = start.elapsed();
    writer.join().expect("writer");
    elapsed.as_nanos() as f64 / count as f64
}

/// 8-byte ping-pong over two rings: half the round trip.
fn small_latency(rounds: u32) -> f64 {
    let (mut to_peer, mut from_me) = ring(1 << 12);
    let (mut to_me, mut from_peer) = ring(1 << 12);
    let echo = std::thread::spawn(move || {
        let mut buffer = [0u8; 8];
        for _ in 0..rounds {
            while from_me.try_pop_into(&mut buffer).expect("pop").is_none() {
                std::hint::spin_loop();
            }
            push(&mut to_me, 0, &buffer);
        }
    });
    let mut buffer = [0u8; 8];
    let start = Instant::now();
    for round in 0..rounds {
        push(&mut to_peer, 0, &u64::from(round).to_le_bytes());
        while from_peer.try_pop_into(&mut buffer).expect("pop").is_none() {
            std::hint::spin_loop();
        }
        assert_eq!(u64::from_le_bytes(buffer), u64::from(round));
    }
    let elapsed = start.elapsed();
    echo.join().expect("echo");
    elapsed.as_nanos() as f64 / f64::from(rounds) / 2.0
}

/// 1 MiB messages in chunks of `chunk` bytes through a ring of `capacity`: GB/s (10^9 B/s).
fn large_bandwidth(messages: u32, chunk: usize, capacity: usize) -> f64 {
    const MESSAGE: usize = 1 << 20;
    let (mut producer, mut consumer) = ring(capacity);
    let source: Vec<u8> = (0..MESSAGE).map(|i| (i * 7 % 251) as u8).collect();
    let expected = source.clone();
    let writer = std::thread::spawn(move || {
        for _ in 0..messages {
            for piece in source.chunks(chunk) {
                push(&mut producer, 1, piece);
            }
        }
    });
    let mut dest = vec![0u8; MESSAGE];
    let start = Instant::now();
    for message in 0..messages {
        dest.fill(0);
        let mut at = 0;
        while at < MESSAGE {
            match consumer.try_pop_into(&mut dest[at..]).expect("pop") {
                Some((_, len)) => at += len,
                None => std::hint::spin_loop(),
            }
        }
        // Every byte of the first message; afterwards one byte in 4 KiB (a full comparison
        // would cost as much as the copy being measured).
        let step = if message == 0 { 1 } else { 4096 };
        assert!(
            (0..MESSAGE).step_by(step).all(|i| dest[i] == expected[i]),
            "a message arrived damaged"
        );
    }
    let elapsed = start.elapsed();
    writer.join().expect("writer");
    (messages as f64 * MESSAGE as f64) / elapsed.as_secs_f64() / 1e9
}

fn main() {
    let quick = std::env::args().any(|arg| arg == "--quick");
    let scale = if quick { 20 } else { 1 };
    println!(
        "ring floor between two threads ({} cores, load average {} at start)",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load()
    );
    let per_entry = small_throughput(5_000_000 / scale);
    println!(
        "8 B one-way throughput: {:.1} ns per entry ({:.1} M entries/s)",
        per_entry,
        1e3 / per_entry
    );
    let latency = small_latency(200_000 / scale as u32);
    println!(
        "8 B ping-pong: {:.0} ns one way (half the round trip)",
        latency
    );
    // The reader zeroes its destination before each message (so a lost chunk shows): the rows
    // include that memset.
    for (chunk, capacity) in [
        (4 << 10, 1 << 16),
        (16 << 10, 1 << 17),
        (16 << 10, 1 << 18),
        (64 << 10, 1 << 20),
        (256 << 10, 1 << 20),
    ] {
        let gbps = large_bandwidth(1000 / scale as u32, chunk, capacity);
        println!(
            "1 MiB messages, {} KiB chunks, {} KiB ring: {gbps:.2} GB/s",
            chunk >> 10,
            capacity >> 10
        );
    }
    println!("load average {} at the end", load());
}
