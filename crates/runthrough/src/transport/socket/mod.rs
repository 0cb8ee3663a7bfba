// SPDX-License-Identifier: MIT OR Apache-2.0
//! Multi-process runs: ranks as processes joined by TCP, or Unix-domain sockets on one host
//! (semantics §4).
//!
//! [`init`] bootstraps a rank from the environment its launcher set (see
//! `runthrough_net::launch`): it registers its listener with the launcher, gets the table of
//! every rank's address, connects to every peer (the lower rank connects, each connection
//! authenticated with the job secret), and returns a [`Universe`] whose world communicator runs
//! every operation of the in-process runtime unchanged over TCP. The sockets, the handshake, the
//! PMI client and the launcher protocol are the `runthrough-net` crate's.

mod init;
mod shm_lane;
mod sockets;
mod spawn;
mod tcp;

pub use init::{init, init_or_singleton, init_singleton, InitError, Universe};
