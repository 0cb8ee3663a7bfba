// SPDX-License-Identifier: MIT OR Apache-2.0
//! Two processes really sharing a ring (issue 12): the test binary runs itself again as the
//! writer; the reader makes the memfd, lays out the ring and passes the descriptor over a Unix
//! socket (SCM_RIGHTS); the writer maps it and sends many entries of varied sizes, ringing the
//! doorbell (a futex across the two processes) when the reader sleeps.

use std::io::{Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use runthrough_net::shm::{self, Consumer, Producer, Push, SharedMapping};

/// Set in the child: the socket path where the reader waits.
const CHILD: &str = "RT_RING_TEST_WRITER_SOCKET";
const COUNT: u64 = 100_000;
const CAPACITY: usize = 1 << 14;

fn length(seq: u64) -> usize {
    (seq * 37 % 700) as usize
}

fn payload(seq: u64) -> Vec<u8> {
    let mut bytes = seq.to_le_bytes().to_vec();
    bytes.extend((0..length(seq)).map(|i| (seq as usize * 7 + i) as u8));
    bytes
}

/// The writer's half: does nothing unless run as the child of `two_processes_share_a_ring`.
#[test]
fn ring_child_writer() {
    let Ok(path) = std::env::var(CHILD) else {
        return;
    };
    let mut socket = UnixStream::connect(path).unwrap();
    let fd = shm::recv_fd(&socket).unwrap();
    let mapping = SharedMapping::map(fd, shm::region_len(CAPACITY)).unwrap();
    let mut producer = Producer::attach(mapping).unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    for seq in 0..COUNT {
        let bytes = payload(seq);
        while producer.try_push(seq as u8, &bytes).unwrap() == Push::Full {
            assert!(Instant::now() < deadline, "the reader stopped reading");
            producer.wake_consumer();
            std::thread::yield_now();
        }
        if seq % 64 == 0 {
            producer.wake_consumer();
        }
    }
    producer.wake_consumer();
    socket.write_all(b"done").unwrap();
}

/// Issue 12 / SPEC §4: a ring in a memfd mapped by two processes carries every entry intact
/// and in order, the descriptor passed over a socket; the reader sleeps on the doorbell when the
/// ring is empty and is woken by the other process.
#[test]
fn two_processes_share_a_ring() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let path = std::env::temp_dir().join(format!("rt-ring-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "ring_child_writer",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, &path)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    listener.set_nonblocking(true).unwrap();
    let mut socket = loop {
        match listener.accept() {
            Ok((socket, _)) => break socket,
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(Instant::now() < deadline, "the writer never connected");
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(error) => panic!("accept: {error}"),
        }
    };
    let _ = std::fs::remove_file(&path);
    socket.set_nonblocking(false).unwrap();

    let mapping = SharedMapping::create("rt-ring-test", shm::region_len(CAPACITY)).unwrap();
    shm::init(&mapping).unwrap();
    shm::send_fd(&socket, mapping.fd()).unwrap();
    let mut consumer = Consumer::attach(mapping).unwrap();
    let mut out = Vec::new();
    let mut sleeps = 0u64;
    for seq in 0..COUNT {
        let mut idle = 0u32;
        let tag = loop {
            if let Some(tag) = consumer.try_pop(&mut out).unwrap() {
                break tag;
            }
            assert!(Instant::now() < deadline, "stuck at entry {seq}");
            idle += 1;
            if idle > 100 {
                consumer.wait(Duration::from_millis(50)).unwrap();
                sleeps += 1;
            } else {
                std::hint::spin_loop();
            }
        };
        assert_eq!(tag, seq as u8);
        assert_eq!(out, payload(seq), "entry {seq}");
    }
    let mut done = [0u8; 4];
    socket.read_exact(&mut done).unwrap();
    assert_eq!(&done, b"done");
    assert!(child.wait().unwrap().success());
    assert_eq!(consumer.try_pop(&mut out).unwrap(), None);
    eprintln!("{COUNT} entries between two processes; the reader slept {sleeps} times");
}
