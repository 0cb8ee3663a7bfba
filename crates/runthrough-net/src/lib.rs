// SPDX-License-Identifier: MIT OR Apache-2.0
//! The operating-system plumbing of runthrough's multi-process runs: how ranks and their
//! launcher find, reach and authenticate each other (semantics §4).
//!
//! This crate knows nothing of runthrough's protocols (packets, matching, agreements): it moves
//! bytes between processes and names them. The `runthrough` crate's socket transport and its
//! `init` build on it, and so does the launcher, `rtrun`; it depends on neither.
//!
//! What is here:
//! - [`stream`]: the two kinds of connection between ranks, TCP and Unix-domain sockets on one
//!   host, behind one type, with the addresses ranks publish and the private socket directory.
//! - [`auth`]: the HMAC-SHA256 challenge-response over the job secret that every connection
//!   (and every registration with the launcher) runs before anything else.
//! - [`bind_address`]: where a rank's listener binds (an address, a route, an interface).
//! - [`local`]: a rank's host and process identity, and confirming a same-host peer's death
//!   through a pidfd.
//! - [`pmi`]: a PMI-1 / PMI-2 client, for ranks started by Hydra's `mpiexec` or Slurm's `srun`.
//! - [`launch`]: the launcher protocol: the environment a launcher hands each rank, the
//!   registration and address table on the control connection, failure and suspicion notices,
//!   and the exit statuses.
//! - [`timeline`]: the events a rank reports for its launcher's job timeline.
//! - [`shm`]: shared memory between the ranks of one host: the SPSC ring of entries, its memfd
//!   mapping and passing the descriptor over a Unix socket.
//!
//! The contract: what peers, launchers and the environment send is untrusted, and malformed
//! lines, replies and values come back as errors or `None`, not panics; a connection between
//! ranks carries traffic only once [`auth`]'s handshake has proved the job secret on it (the
//! transport runs it). One `unsafe` block takes ownership of the PMI socket the launcher
//! handed down (`PMI_FD`), with its safety argument and its test; the others are in [`shm`]
//! (raw shared memory).
//!
//! ```
//! use runthrough_net::launch::{self, JobSecret, RankMessage};
//! // A launcher's secret travels to its ranks as hex in the environment.
//! let secret = JobSecret::random();
//! assert_eq!(JobSecret::from_hex(&secret.to_hex()), Some(secret));
//! // The address table it sends every rank once all have registered (rank 1 died first).
//! let line = launch::table_line(&[Some("127.0.0.1:4000".into()), None]);
//! assert_eq!(line, "table 127.0.0.1:4000 -\n");
//! assert_eq!(launch::parse_report("suspect 1\n"), Some(RankMessage::Suspect(1)));
//! // Where a listener binds: an address names itself.
//! assert_eq!(runthrough_net::bind_address("127.0.0.1").unwrap().to_string(), "127.0.0.1");
//! ```
//!
//! Section numbers such as *semantics §2.1* in these docs are those of the guide's semantics
//! chapter, `docs/src/semantics.md` in the repository (the guide, `docs/`, is built with
//! `mdbook build docs`; the repository's `README.md` is the short tour).
#![deny(missing_docs)]
// Denied, not forbidden: the one exception is taking the launcher's inherited PMI socket
// (`pmi`), with its `// SAFETY:` argument and a test, and raw shared memory in `shm` (the
// ring's word accesses and copies, the mapping's mmap and munmap), each block allowed where it
// stands, with its `// SAFETY:` argument, and exercised by the ring's tests.
#![deny(unsafe_code)]

pub mod auth;
mod bind;
pub mod launch;
pub mod local;
pub mod pmi;
pub mod shm;
pub mod stream;
pub mod timeline;

pub use bind::bind_address;
