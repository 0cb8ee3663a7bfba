// SPDX-License-Identifier: MIT OR Apache-2.0
//! The TCP transport: one process per rank, one authenticated connection per pair of ranks.
//!
//! # Connections
//! A connection is a [`Stream`]: TCP, or a Unix-domain stream socket when both ranks run on one
//! host in the same network and mount namespaces and neither has Unix sockets off
//! ([`runthrough_net::stream`] says how a rank publishes its socket and how a peer decides; TCP when the
//! Unix connect fails; [`launch::ENV_TRANSPORT`]` = tcp` for TCP everywhere). Nothing below
//! depends on the kind: the same handshake authenticates a Unix connection (a socket in a
//! private directory is not trusted by itself), the same heartbeats run over it, and its end of
//! file or reset is the same suspicion as TCP's.
//!
//! # Connections on first use
//! Peers reached through a Unix socket whose death this rank learns without a connection
//! (rtrun's notices; else a pidfd on the peer's process, [`Tcp::watch_processes`]) are
//! *on-demand* ([`Tcp::set_addresses`]; `init`'s plan keeps a sparse overlay of them connected
//! at start for the heartbeats). The first frame for one waits in its backlog and starts the
//! connection ([`Tcp::want_connection`]): the lower rank of the pair connects, the higher one
//! asks it to with a bare `Hello` ([`Tcp::ask_to_connect`]), so two ranks never make two
//! connections. Until the connection is installed *and routed* every frame for the peer waits
//! in the backlog, even if its lane or writer exists already; [`Tcp::open_route`] moves the
//! backlog into the ring (or writes it) under the backlog's lock and only then lets frames go
//! straight through, so one thread's frames keep their order whichever way each went. An
//! application thread's blocking send whose frame waited returns only once the connection is
//! routed ([`Tcp::wait_routed`]): a send that returned has its bytes outside the process, as
//! with a connection made at start. This rank's votes against a suspect go to
//! unconnected peers a heartbeat period late, and only if the suspect is still not known dead
//! ([`Tcp::vote_later`]): a killed rank is confirmed everywhere within that period, so only a
//! live suspect makes ranks connect for its majority. In finalize, an on-demand peer that
//! cannot be reached has left ([`Tcp::unreachable`]).
//!
//! # Progress
//! One progress thread per rank reads every connection (`super::sockets`): it decodes frames,
//! delivers packets to this rank's [`Endpoint`] and sends what the delivery causes, so
//! messages move and agreements advance whether or not the application calls in. It also
//! sends this side's heartbeats and tells the failure detector when each peer was last heard.
//! Idle, it sleeps in `epoll` (woken at least four times per period), never spins.
//! A thread waiting in the library reads the connections that carry data itself (polling
//! progress: no hand-off per message), and the progress thread stays out of its way until it
//! sleeps or stops waiting. If the progress thread cannot start, each connection gets a reader
//! thread of its own ([`Tcp::read_loop`]).
//!
//! # Writes
//! A connection's writes happen under its writer lock. Application threads block on it; reader
//! threads never do: they append their frames to the connection's backlog and write it only if
//! the lock is free, and whoever holds the lock writes the backlog before and after its own
//! frame. So a reader is never stuck behind a large application write, and frames keep their
//! order per thread. Small frames are encoded into a reused buffer (no allocation per message);
//! a large payload is written straight from the packet.
//!
//! # Failures (semantics §1, §4)
//! What a failure means is decided by the failure detector in core
//! ([`runthrough_core::detector`], over [`runthrough_core::fence`]'s rule), with time an
//! argument: this transport feeds it what it sees (a peer heard from, a connection lost, a
//! vote, a notice, a goodbye) and carries out its actions ([`Tcp::act`]); a timer thread
//! (`rt-detector`) calls it when its next deadline comes. The simulator
//! (`runthrough-sim detector`) runs the same detector under virtual time. Suspicion and
//! failure are apart:
//! - **Suspected**: a connection that ends, fails, times out (no heartbeat for the timeout, or a
//!   write stuck that long) or carries a malformed frame, and a peer that does not connect in
//!   time. This rank *fences* the peer at once: it drops the connection and ignores the peer
//!   from then on, and sends every other peer its vote (`Suspect`); a peer that receives the
//!   vote fences the suspect too and votes in turn. A suspicion of a live process (silence, a
//!   stuck write, bad input, no connection) is also reported to the launcher, which kills the
//!   suspect where it can (rtrun does; that kill is then a confirmation). A lost connection is
//!   not reported: the launcher sees the exit itself when the process died.
//! - **Failed** (the detector output, `Endpoint::peer_failed`): the failure is *confirmed* (a
//!   launcher's `failed` line: it saw the process end or killed it), or the peer is fenced by a
//!   majority of the ranks this rank believes alive (counted as [`runthrough_core::fence`] says), or a
//!   peer says it has the rank in its output (`FailureNotice`, sent by a rank that decided by
//!   majority). A closed connection alone is not a confirmation, even on one host: a peer that
//!   fenced this rank closes its connection too, and this rank must not take that for a death
//!   and go on alone. But when the peer runs on this host (PID known from the PMI bootstrap),
//!   its process seen to end after its connection ended is a confirmation ([`runthrough_net::local`]).
//!   So under launchers without a control channel (Hydra, srun) a job on one host survives all
//!   but one rank; across hosts only the majority rule puts ranks in the output there: a job of
//!   2 cannot survive the death of one rank, nor one of 2k ranks the loss of k at once.
//! - **Draining**: when a peer is fenced from another thread (a vote, a launcher notice), its
//!   reader first delivers what had already arrived on the connection (the kernel's buffer,
//!   up to a heartbeat period), and the engine hears of the failure only after that: complete
//!   messages a rank sent before it died stay receivable whoever learned of the death first.
//! - **Halting**: a vote or a notice naming this rank means it was fenced: it halts
//!   ([`launch::EXIT_FENCED`]). A rank that has not reached a majority of the ranks it
//!   believes alive (itself and the ones it has not fenced) for longer than the heartbeat
//!   timeout halts ([`launch::EXIT_NO_MAJORITY`]); since silent peers are fenced after the
//!   timeout, a rank cut off from the majority halts within about twice the heartbeat timeout
//!   (plus a period) of the cut, or three times when it had no connection to some of the
//!   majority (it connects to them to send its late votes, and fences them after a timeout of
//!   silence on those connections: `runthrough-sim detector` checks both bounds). Confirmed failures leave the ranks believed alive, so a rank
//!   whose peers all died for certain keeps going, alone if need be. After
//!   [`Tcp::finish`] (the rank finalized) nothing halts it any more.
//! - **Departing**: a rank that finalized is no failed rank (docs/src/semantics.md §3.4). Once the
//!   progress threads have sent what its last events caused (the `Commit`s it owes its tree
//!   neighbours), it writes `Goodbye` as the last frame of every connection and closes it
//!   ([`Tcp::finish`]). A peer that reads the goodbye neither suspects nor fails it: the rank
//!   leaves the ranks believed alive (so the last ranks of a job keep their majority when the
//!   others leave first, where no launcher confirms exits), and the agreements route around it.
//!   The goodbye comes on the authenticated connection like every other frame; a connection
//!   that ends without one is still a suspicion.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, TryLockError};
use std::time::{Duration, Instant};

use crate::endpoint::Endpoint;
use crate::transport::Transport;
use runthrough_core::detector::{Action, Detector, Time};
use runthrough_core::packet::{ContextId, Outgoing, Packet};
use runthrough_core::wire::{self, Decoder, Frame, WireError, TOKEN};
use runthrough_core::Rank;
use runthrough_core::WorldRank;

use runthrough_net::auth::{self, Role, Secret};
use runthrough_net::launch;
use runthrough_net::shm::{self, Inbox};
use runthrough_net::stream::{Address, Listener, Stream, UnixSocket};

use super::shm_lane::{FrameRef, Lane, Sent};

// The handshake frames carry the nonces and MACs of runthrough_net::auth.
const _: () = assert!(TOKEN == auth::TOKEN);

/// Frames up to this size are handed to the kernel from the writer's buffer; a larger payload is
/// written from the packet itself.
const COPY_LIMIT: usize = 16 << 10;
/// Application messages of at least this many bytes to a peer whose data goes over the socket
/// are written straight from the user's buffer (`Transport::send_data`); smaller ones are
/// copied into a packet, which costs less than a second write.
const BORROW_FROM: usize = runthrough_core::buffers::MIN_LEN;
/// A writer's buffer larger than this after a write is given back.
const KEEP_BUFFER: usize = 1 << 20;
/// The longest frame a peer may send during the handshake.
const HANDSHAKE_MAX_FRAME: usize = 256;

/// Tunables of the transport.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    /// How often each side of a connection sends a heartbeat.
    pub(crate) heartbeat_period: Duration,
    /// A peer silent for this long is fenced. Also the write time-out.
    pub(crate) heartbeat_timeout: Duration,
    /// The longest frame accepted from a peer.
    pub(crate) max_frame: usize,
    /// How long a handshake may take.
    pub(crate) handshake_timeout: Duration,
    /// Diagnostics on standard error.
    pub(crate) verbose: bool,
    /// Halting ends the process (tests turn it off and look at [`Tcp::halted`]).
    pub(crate) exit_on_halt: bool,
    /// Where this rank runs ([`runthrough_net::stream::local_identity`]): peers that publish a Unix
    /// socket with the same identity are reached through it. `None`: TCP only.
    pub(crate) local_identity: Option<String>,
    /// Shared memory with the peers reached over Unix sockets (`super::shm_lane`).
    pub(crate) shm: bool,
    /// Every pair connects at start (`RT_CONNECT=all`), not on first use.
    pub(crate) connect_all: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            heartbeat_period: Duration::from_millis(500),
            heartbeat_timeout: Duration::from_secs(5),
            max_frame: wire::DEFAULT_MAX_FRAME,
            handshake_timeout: Duration::from_secs(5),
            verbose: false,
            exit_on_halt: true,
            local_identity: None,
            shm: false,
            connect_all: false,
        }
    }
}

/// Heartbeat ticks a period: the poller's (and a reader thread's) ticks send the heartbeats
/// that are due and report what was heard to the detector.
pub(super) const TICKS_PER_PERIOD: u32 = 4;

/// Why a peer was declared failed.
#[derive(Debug)]
pub(crate) enum Cause {
    /// The connection ended.
    Closed,
    /// Reading or writing failed.
    Io(io::Error),
    /// The peer sent something that is not a valid frame at this point.
    BadInput(String),
    /// Nothing arrived for the heartbeat timeout.
    Silent,
    /// The peer could not be reached, or did not connect in time.
    Unreachable(String),
    /// Rank `by` suspects it (this rank learned of the suspicion).
    Suspected { by: u32 },
    /// A confirmed failure: the launcher said so (or it was dead before the table).
    Notice,
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cause::Closed => write!(f, "its connection closed"),
            Cause::Io(e) => write!(f, "its connection failed: {e}"),
            Cause::BadInput(why) => write!(f, "it sent bad input: {why}"),
            Cause::Silent => write!(f, "no heartbeat for the timeout"),
            Cause::Unreachable(why) => write!(f, "unreachable: {why}"),
            Cause::Suspected { by } => write!(f, "rank {by} suspects it"),
            Cause::Notice => write!(f, "the launcher said so"),
        }
    }
}

impl Cause {
    /// Whether a process that may still live is suspected for it: logged even when not
    /// verbose, and reported to the launcher, which kills the suspect. A lost connection is not
    /// (when the process died, the launcher sees its exit; when the peer fenced this rank, it
    /// reported this rank itself), nor a suspicion heard from a peer (the peer reported it).
    fn is_suspicion(&self) -> bool {
        match self {
            Cause::BadInput(_) | Cause::Silent | Cause::Unreachable(_) => true,
            Cause::Io(e) => !matches!(
                e.kind(),
                io::ErrorKind::ConnectionReset
                    | io::ErrorKind::ConnectionAborted
                    | io::ErrorKind::BrokenPipe
                    | io::ErrorKind::UnexpectedEof
            ),
            Cause::Closed | Cause::Suspected { .. } | Cause::Notice => false,
        }
    }
}

/// Runs `work` on a thread of its own named `name`, or, when no thread can be had (a crowded
/// host), on this one: a connection or handshake is slower then, but this rank's lack of
/// resources never makes it suspect a live peer.
fn spawn_or_run(name: &str, work: impl FnOnce() + Send + 'static) {
    let work = Arc::new(Mutex::new(Some(work)));
    let in_thread = Arc::clone(&work);
    let spawned = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            if let Some(work) = lock(&in_thread).take() {
                work();
            }
        });
    if spawned.is_err() {
        if let Some(work) = lock(&work).take() {
            work();
        }
    }
}

/// Raises this process's soft limit on open files to `needed`, within the hard limit.
fn raise_open_files(needed: u64) {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current.is_some_and(|current| current < needed) {
        limit.current = Some(limit.maximum.map_or(needed, |hard| hard.min(needed)));
        let _ = setrlimit(Resource::Nofile, limit);
    }
}

/// Writes a line to standard error; a closed standard error (a launcher that went away) is no
/// reason to panic a progress thread. One write per line: a launcher that labels lines
/// (Hydra's `-prepend-rank`) would cut a line written in pieces, and other ranks' lines would
/// come between them.
pub(crate) fn stderr_line(message: std::fmt::Arguments<'_>) {
    let line = format!("{message}\n");
    let _ = io::stderr().lock().write_all(line.as_bytes());
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

pub(super) fn try_lock<T>(mutex: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match mutex.try_lock() {
        Ok(guard) => Some(guard),
        Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// The writing side of a connection.
#[derive(Debug)]
pub(super) struct Writer {
    pub(super) stream: Stream,
    /// Bytes to write, in order: what a write that found no room left ([`Writer::write_some`]),
    /// then frames taken from the backlog.
    buffer: Vec<u8>,
    /// Since when bytes have waited in `buffer` for room without any being taken (a
    /// connection that takes nothing for the heartbeat timeout is suspected, as a blocking
    /// write stuck that long is).
    pub(super) stuck_since: Option<Instant>,
}

impl Writer {
    /// Appends the backlog's frames to the bytes to write.
    fn take_backlog(&mut self, backlog: &Mutex<Vec<u8>>) {
        let mut backlog = lock(backlog);
        if self.buffer.is_empty() {
            std::mem::swap(&mut self.buffer, &mut *backlog);
        } else {
            self.buffer.append(&mut backlog);
        }
    }

    /// Writes `self.buffer`, then `tail`, waiting for room as long as the write time-out allows
    /// (reading this rank's sockets meanwhile: [`Tcp::write_polling`]). For application
    /// threads, whose send returns once its bytes are out.
    fn write_out(&mut self, tcp: &Tcp, tail: &[u8]) -> io::Result<()> {
        tcp.write_polling(&self.stream, &self.buffer)?;
        if !tail.is_empty() {
            tcp.write_polling(&self.stream, tail)?;
        }
        self.buffer.clear();
        self.stuck_since = None;
        if self.buffer.capacity() > KEEP_BUFFER {
            self.buffer = Vec::with_capacity(COPY_LIMIT * 4);
        }
        Ok(())
    }

    /// Writes as much of `self.buffer` as the connection takes now, never waiting; returns
    /// whether all of it went. For progress threads and deliveries, which must not wait on
    /// one peer while the others need them: what is left goes when the connection has room
    /// ([`Tcp::want_room`]).
    pub(super) fn write_some(&mut self) -> io::Result<bool> {
        use rustix::net::SendFlags;
        let mut at = 0;
        while at < self.buffer.len() {
            match rustix::net::send(
                &self.stream,
                &self.buffer[at..],
                SendFlags::DONTWAIT | SendFlags::NOSIGNAL,
            ) {
                Ok(n) => at += n,
                Err(rustix::io::Errno::INTR) => {}
                Err(rustix::io::Errno::AGAIN) => break,
                Err(e) => return Err(e.into()),
            }
        }
        self.buffer.drain(..at);
        if self.buffer.is_empty() {
            self.stuck_since = None;
            if self.buffer.capacity() > KEEP_BUFFER {
                self.buffer = Vec::with_capacity(COPY_LIMIT * 4);
            }
            return Ok(true);
        }
        if at > 0 || self.stuck_since.is_none() {
            self.stuck_since = Some(Instant::now());
        }
        Ok(false)
    }
}

/// This rank's view of one peer.
#[derive(Debug, Default)]
pub(super) struct Peer {
    /// Fenced (or failed): never un-set; nothing more is sent to the peer, and what it sends
    /// is ignored once its reader has drained what had arrived.
    pub(super) failed: AtomicBool,
    /// The connection is being read (by the socket poller, or a reader thread of its own): the
    /// engine hears of a failure once that reading ends.
    pub(super) reading: AtomicBool,
    /// In the detector output; the engine is told once no reader runs.
    out_pending: AtomicBool,
    /// The engine was told (`Endpoint::peer_failed`).
    in_engine: AtomicBool,
    /// Connected or failed (counted once in `settled`).
    settled: AtomicBool,
    /// `None` until connected, and after failing.
    pub(super) writer: Mutex<Option<Writer>>,
    /// Encoded frames waiting for the writer lock (or for the connection).
    pub(super) backlog: Mutex<Vec<u8>>,
    /// The connection is installed and its backlog moved to the ring or the socket: frames go
    /// straight there. Until then every frame waits in the backlog (also when the lane or the
    /// writer exists already, mid-install), so one thread's frames keep their order whichever
    /// way each of them went ([`Tcp::open_route`]).
    pub(super) routed: AtomicBool,
    /// The connection, kept to shut it down.
    stream: Mutex<Option<Stream>>,
    /// Shared memory with the peer, when both run on this host (`super::shm_lane`): set
    /// once, at connection.
    pub(super) shm: OnceLock<Lane>,
    /// Bytes for the peer wait for room in its ring (counted once in `Tcp::shm_pending`).
    pub(super) shm_blocked: AtomicBool,
    /// Connected on first use ([`Tcp::set_addresses`]): not at start, and its process's end
    /// confirms its failure without a connection (the launcher's notice, or a pidfd).
    on_demand: AtomicBool,
    /// A connection exists or is being made (set once).
    connecting: AtomicBool,
    /// Room for a rank that a spawn may start, not started (or not known here) yet: nothing
    /// is sent to it, and it counts toward no majority, until it joins ([`Tcp::join_peer`]).
    pub(super) absent: AtomicBool,
    /// The connection had room while another thread held the writer (`Tcp::room` could not
    /// write): the holder writes what waits once it lets go ([`Peer::flush`]).
    pub(super) room_missed: AtomicBool,
}

impl Peer {
    /// Writes `packet` and the backlog, blocking for the writer lock; or, while the connection
    /// is not installed, queues it in the backlog (then returns true).
    fn send_blocking(&self, tcp: &Tcp, to: u32, packet: &Packet) -> io::Result<bool> {
        {
            let mut guard = lock(&self.writer);
            let Some(writer) = guard
                .as_mut()
                .filter(|_| self.routed.load(Ordering::Acquire))
            else {
                drop(guard);
                let mut backlog = lock(&self.backlog);
                wire::encode_packet(packet, &mut backlog);
                // Not routed yet, or installed meanwhile (`Tcp::open_route` holds the backlog's
                // lock while it routes): either way the caller waits until the connection is
                // routed and its bytes are out (`Tcp::wait_routed`).
                drop(backlog);
                return Ok(true);
            };
            writer.take_backlog(&self.backlog);
            let tail = wire::encode_packet_split(packet, &mut writer.buffer, COPY_LIMIT);
            writer.write_out(tcp, tail)?;
        }
        self.flush(tcp, to).map(|()| false)
    }

    /// Queues an encoded frame and writes the backlog if nobody else is writing.
    fn send_queued(&self, tcp: &Tcp, to: u32, encode: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
        encode(&mut lock(&self.backlog));
        self.flush(tcp, to)
    }

    /// Writes the backlog, as much as the connection takes without waiting (the rest when it
    /// has room, [`Tcp::want_room`]), unless another thread holds the writer lock (that thread
    /// writes it after its own frame) or the connection is not installed yet (`routed`).
    pub(super) fn flush(&self, tcp: &Tcp, to: u32) -> io::Result<()> {
        if !self.routed.load(Ordering::Acquire) {
            return Ok(());
        }
        loop {
            let missed = self.room_missed.swap(false, Ordering::SeqCst);
            if !missed && lock(&self.backlog).is_empty() {
                return Ok(());
            }
            let Some(mut guard) = try_lock(&self.writer) else {
                if missed {
                    // The holder looks at it once it lets go.
                    self.room_missed.store(true, Ordering::SeqCst);
                }
                return Ok(());
            };
            let Some(writer) = guard.as_mut() else {
                return Ok(());
            };
            writer.take_backlog(&self.backlog);
            if !writer.write_some()? {
                tcp.want_room(to, &writer.stream);
                drop(guard);
                if self.room_missed.load(Ordering::SeqCst) {
                    continue; // the connection had room while this thread held the writer
                }
                return Ok(());
            }
        }
    }

    fn shutdown(&self, how: Shutdown) {
        if let Some(stream) = lock(&self.stream).as_ref() {
            let _ = stream.shutdown(how);
        }
    }
}

/// What an accepted connection turned out to be.
enum Accepted {
    /// An authenticated connection from a lower rank.
    Connection(u32, Decoder, Mapped),
    /// A higher rank connected on first use asks this one to connect to it.
    CallBack(u32),
}

/// What the shared-memory part of a handshake gave.
#[derive(Debug, Default)]
pub(super) struct Mapped {
    /// The peer's inbox, mapped here (frames to the peer go through it).
    theirs: Option<Inbox>,
    /// The peer mapped this rank's inbox (frames from it come through it).
    mine_mapped: bool,
}

/// The TCP transport of one rank.
#[derive(Debug)]
pub(crate) struct Tcp {
    me: u32,
    endpoint: Arc<Endpoint>,
    secret: Secret,
    config: Config,
    peers: Vec<Peer>,
    /// Peers connected or failed, for `wait_settled`.
    settled: Mutex<u32>,
    settled_changed: Condvar,
    /// The launcher's control connection (for `suspect` reports).
    pub(super) control: Mutex<Option<TcpStream>>,
    /// The failure detector: who is fenced and who failed (semantics §1's rule), silence,
    /// late votes and the majority watch, decided in core; this transport feeds it and
    /// carries out its actions ([`Tcp::detect`]).
    pub(super) detector: Mutex<Detector>,
    /// The detector's time 0.
    epoch: Instant,
    /// Signalled when the detector's state changes (for the detector's timer thread).
    detector_changed: Condvar,
    /// The rank finalized: nothing halts it any more.
    finished: AtomicBool,
    /// This rank halts (`Tcp::halt`): it suspects, votes and confirms nothing any more (its
    /// own closing connections must not read as its peers' failures).
    halting: AtomicBool,
    /// The rank is in finalize's agreement ([`Tcp::begin_finalize`]).
    finalizing: AtomicBool,
    /// Finalize's agreement lost its majority for a heartbeat timeout: the rank leaves without
    /// it ([`Tcp::finalize_abandoned`]) instead of halting.
    abandoned: AtomicBool,
    /// Progress threads between handing the engine an event and sending what it caused (a
    /// decision wakes the application before its `Commit`s down the tree are sent): finalize
    /// waits for them before saying goodbye.
    in_progress: AtomicUsize,
    /// Why this rank halted, when halting does not exit (tests).
    halted: Mutex<Option<i32>>,
    /// This rank's Unix socket, removed when it finishes or halts.
    socket: Mutex<Option<UnixSocket>>,
    /// The PIDs of the peers on this host and in this PID namespace (from the PMI bootstrap):
    /// their process ending confirms their failure (`runthrough_net::local`).
    local_pids: Mutex<Vec<Option<u32>>>,
    /// This rank's inbox, when it talks to peers on its host through shared memory
    /// (`super::shm_lane`).
    inbox: OnceLock<Inbox>,
    /// Peers whose lanes hold bytes waiting for room in their ring.
    pub(super) shm_pending: AtomicUsize,
    /// Lanes with a progress-thread wake-up put off (`Tcp::defer_ring`).
    pub(super) deferred_rings: AtomicUsize,
    /// This rank and the peers it shares memory with: ranks of this host, for the wait
    /// policy's oversubscription rule ([`crate::wait`]).
    local_ranks: AtomicUsize,
    /// Peers this rank shares memory with.
    lanes: AtomicUsize,
    /// `local_ranks` outnumber this host's cores: waiters yield at once instead of spinning.
    oversubscribed: AtomicBool,
    /// The thread that reads every connection of this rank, and the data set that waiting
    /// threads poll (`super::sockets`), once started (`None`: it could not start).
    pub(super) poller: OnceLock<Option<Arc<super::sockets::Poller>>>,
    /// The peers' published addresses, for connecting on first use (a spawned rank's is added
    /// when it joins).
    pub(super) addresses: Mutex<Vec<Option<String>>>,
    /// Signalled when an address is added.
    pub(super) address_added: Condvar,
    /// The launcher's answers to this rank's spawn requests, by spawn key (`super::spawn`).
    pub(super) spawn_replies: Mutex<std::collections::BTreeMap<(u64, u32), launch::SpawnOutcome>>,
    /// Signalled when a spawn answer arrives (or the control connection ends).
    pub(super) spawn_replied: Condvar,
    /// The launcher's control connection ended.
    pub(super) control_lost: AtomicBool,
    /// This transport itself, for the threads that connect on first use.
    this: std::sync::Weak<Tcp>,
}

impl Tcp {
    #[cfg(test)]
    pub(crate) fn new(
        me: u32,
        size: u32,
        endpoint: Arc<Endpoint>,
        secret: Secret,
        config: Config,
    ) -> Arc<Self> {
        Self::with_universe(me, size, size, endpoint, secret, config)
    }

    /// Rank `me` of a job of `size` ranks that spawns may grow to `universe` world ranks:
    /// world ranks `size..universe` are absent until they join ([`Tcp::join_peer`]).
    pub(crate) fn with_universe(
        me: u32,
        size: u32,
        universe: u32,
        endpoint: Arc<Endpoint>,
        secret: Secret,
        config: Config,
    ) -> Arc<Self> {
        Arc::new_cyclic(|this| {
            Self::with_weak(me, size, universe, endpoint, secret, config, this.clone())
        })
    }

    fn with_weak(
        me: u32,
        size: u32,
        universe: u32,
        endpoint: Arc<Endpoint>,
        secret: Secret,
        config: Config,
        this: std::sync::Weak<Tcp>,
    ) -> Self {
        let universe = universe.max(size).max(me + 1);
        let peers = (0..universe)
            .map(|r| Peer {
                absent: AtomicBool::new(r >= size && r != me),
                ..Peer::default()
            })
            .collect();
        let detector = Detector::new(
            WorldRank(me),
            size,
            universe,
            config.heartbeat_period,
            config.heartbeat_timeout,
            // The poller and the reader threads report what they heard at every tick.
            config.heartbeat_period / TICKS_PER_PERIOD,
        );
        let tcp = Tcp {
            me,
            endpoint,
            secret,
            config,
            peers,
            settled: Mutex::new(0),
            settled_changed: Condvar::new(),
            control: Mutex::new(None),
            detector: Mutex::new(detector),
            epoch: Instant::now(),
            detector_changed: Condvar::new(),
            finished: AtomicBool::new(false),
            halting: AtomicBool::new(false),
            finalizing: AtomicBool::new(false),
            abandoned: AtomicBool::new(false),
            in_progress: AtomicUsize::new(0),
            halted: Mutex::new(None),
            socket: Mutex::new(None),
            local_pids: Mutex::new(Vec::new()),
            inbox: OnceLock::new(),
            shm_pending: AtomicUsize::new(0),
            deferred_rings: AtomicUsize::new(0),
            local_ranks: AtomicUsize::new(1),
            lanes: AtomicUsize::new(0),
            oversubscribed: AtomicBool::new(false),
            poller: OnceLock::new(),
            addresses: Mutex::new(Vec::new()),
            address_added: Condvar::new(),
            spawn_replies: Mutex::default(),
            spawn_replied: Condvar::new(),
            control_lost: AtomicBool::new(false),
            this,
        };
        tcp.settle(me);
        tcp
    }

    pub(super) fn config(&self) -> &Config {
        &self.config
    }

    pub(super) fn size(&self) -> u32 {
        self.peers.len() as u32
    }

    pub(super) fn me(&self) -> u32 {
        self.me
    }

    pub(super) fn peer(&self, peer: u32) -> &Peer {
        &self.peers[peer as usize]
    }

    pub(super) fn peers_get(&self, peer: u32) -> Option<&Peer> {
        self.peers.get(peer as usize)
    }

    pub(super) fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    pub(super) fn inbox(&self) -> Option<&Inbox> {
        self.inbox.get()
    }

    pub(super) fn heartbeat_period(&self) -> Duration {
        self.config.heartbeat_period
    }

    /// Whether this rank halted (in tests, where halting does not exit) or was killed.
    pub(super) fn is_done(&self) -> bool {
        self.endpoint.is_killed() || lock(&self.halted).is_some()
    }

    /// This transport, shared (for a thread of its own); `None` while it is being dropped.
    pub(super) fn this(&self) -> Option<Arc<Tcp>> {
        self.this.upgrade()
    }

    /// Gives this rank its inbox (before any connection) and starts its progress thread
    /// (`super::shm_lane`): from then on peers on this host that map it send through it.
    pub(crate) fn set_inbox(self: &Arc<Self>, inbox: Inbox) -> io::Result<()> {
        if self.inbox.set(inbox.clone()).is_err() {
            return Ok(());
        }
        let tcp = Arc::clone(self);
        std::thread::Builder::new()
            .name("rt-progress".into())
            .spawn(move || tcp.shm_progress_loop(inbox))
            .map(drop)
    }

    /// At least `ranks` ranks share this host's memory (this one included): the bootstrap's
    /// count, before any lane exists (lanes are made on first use), or the lanes made so far.
    pub(crate) fn set_local_ranks(&self, ranks: usize) {
        let local = self
            .local_ranks
            .fetch_max(ranks, Ordering::Relaxed)
            .max(ranks);
        self.oversubscribed
            .store(local > crate::wait::host_cores(), Ordering::Relaxed);
    }

    /// Records the PIDs of the peers that run on this host (`None` for the others).
    pub(crate) fn set_local_pids(&self, pids: Vec<Option<u32>>) {
        *lock(&self.local_pids) = pids;
    }

    /// After `peer`'s connection ended: if it runs on this host, waits (up to a heartbeat
    /// period) for its process to end, and confirms its failure when it has (semantics §1).
    pub(super) fn confirm_if_ended(&self, peer: u32) {
        // A rank that finalized suspects and fails nobody (a peer that read its goodbye
        // closes without one of its own): see `declare_failed`.
        if self.finished.load(Ordering::SeqCst) {
            return;
        }
        let pid = lock(&self.local_pids).get(peer as usize).copied().flatten();
        let Some(pid) = pid else {
            return;
        };
        if runthrough_net::local::has_ended(pid, self.config.heartbeat_period) {
            self.log(format_args!(
                "rank {peer}'s process {pid} ended (same host): confirmed"
            ));
            self.detect(&Cause::Notice, |d, now| d.confirm(WorldRank(peer), now));
        }
    }

    fn log(&self, message: std::fmt::Arguments<'_>) {
        if self.config.verbose {
            stderr_line(format_args!("runthrough rank {}: {message}", self.me));
        }
    }

    /// `peer` is connected or failed (or needs no connection before its first use); wakes
    /// whoever waits for a connection in every case.
    fn settle(&self, peer: u32) {
        let mut settled = lock(&self.settled);
        if !self.peers[peer as usize]
            .settled
            .swap(true, Ordering::SeqCst)
        {
            *settled += 1;
        }
        drop(settled);
        self.settled_changed.notify_all();
    }

    /// Waits until every peer is connected or failed; after `deadline`, fences the rest.
    pub(crate) fn wait_settled(&self, deadline: Duration) {
        let until = Instant::now() + deadline;
        let mut settled = lock(&self.settled);
        while *settled < self.size() {
            let now = Instant::now();
            if now >= until {
                drop(settled);
                for peer in 0..self.size() {
                    if !self.peers[peer as usize].settled.load(Ordering::SeqCst) {
                        self.declare_failed(
                            peer,
                            Cause::Unreachable("did not connect in time".into()),
                        );
                    }
                }
                return;
            }
            settled = self
                .settled_changed
                .wait_timeout(settled, until - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Keeps the launcher's control connection for reports.
    pub(crate) fn set_control(&self, stream: TcpStream) {
        *lock(&self.control) = Some(stream);
    }

    fn tell_launcher(&self, line: &str) {
        if let Some(stream) = lock(&self.control).as_mut() {
            let _ = stream.write_all(line.as_bytes());
        }
    }

    /// Writes `line` to the launcher, flushed; whether there is a launcher that took it.
    pub(super) fn tell_launcher_now(&self, line: &str) -> bool {
        match lock(&self.control).as_mut() {
            Some(stream) => stream
                .write_all(line.as_bytes())
                .and_then(|()| stream.flush())
                .is_ok(),
            None => false,
        }
    }

    /// Asks the launcher to end the job with `code` (`MPI_Abort`); whether there is a launcher
    /// that heard it. The line is written on the calling thread, blocking.
    pub(crate) fn tell_launcher_abort(&self, code: i32) -> bool {
        self.tell_launcher_now(&launch::abort_line(code))
    }

    /// This rank dies now (fault injection): it tells the launcher which planned fault fired
    /// ([`launch::fired_line`], for the end-of-job report), then sends SIGKILL to its own
    /// process. The line is written on the calling thread, blocking, to a connection without
    /// Nagle's delay: once `write` returns it is in the kernel, which delivers it ahead of
    /// the connection's end when the process dies.
    fn die(&self) -> ! {
        self.log(format_args!("killing itself (fault injection)"));
        if let Some((trigger, call)) = self.endpoint.fired_fault() {
            if let Some(stream) = lock(&self.control).as_mut() {
                let line = launch::fired_line(&trigger.to_string(), call);
                let _ = stream
                    .write_all(line.as_bytes())
                    .and_then(|()| stream.flush());
            }
        }
        let _ =
            rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
        std::process::abort()
    }

    /// Halts this rank with `code` (semantics §1), unless it finalized already.
    fn halt(&self, code: i32, why: std::fmt::Arguments<'_>) {
        if self.finished.load(Ordering::SeqCst) {
            self.log(format_args!("after finalize, not halting: {why}"));
            return;
        }
        self.halting.store(true, Ordering::SeqCst);
        lock(&self.detector).stand_aside();
        stderr_line(format_args!(
            "runthrough rank {}: {why}; halting (exit {code})",
            self.me
        ));
        self.remove_socket();
        if self.config.exit_on_halt {
            std::process::exit(code);
        }
        // As if the process ended: no more engine, every connection closed.
        lock(&self.halted).get_or_insert(code);
        self.endpoint.mark_killed();
        for p in &self.peers {
            p.failed.store(true, Ordering::SeqCst);
            p.shutdown(Shutdown::Both);
        }
    }

    /// This rank learned it was fenced (`by`: the rank that said so; `None`: the launcher).
    fn halt_fenced(&self, by: Option<u32>) {
        let by = by.map_or("the launcher".to_string(), |r| format!("rank {r}"));
        self.halt(launch::EXIT_FENCED, format_args!("fenced by {by}"));
    }

    /// The exit status this rank halted with, when halting does not exit the process.
    #[cfg(test)]
    pub(crate) fn halted(&self) -> Option<i32> {
        *lock(&self.halted)
    }

    /// The launcher's control connection closed: the job is over.
    pub(crate) fn halt_launcher_lost(&self) -> ! {
        stderr_line(format_args!(
            "runthrough rank {}: lost the launcher's control connection; halting",
            self.me
        ));
        self.remove_socket();
        std::process::exit(launch::EXIT_LAUNCHER_LOST)
    }

    /// Keeps this rank's Unix socket, to remove it when the rank finishes or halts.
    pub(crate) fn set_socket(&self, socket: Option<UnixSocket>) {
        *lock(&self.socket) = socket;
    }

    /// Removes this rank's Unix socket file (every live peer is connected or failed by now).
    fn remove_socket(&self) {
        drop(lock(&self.socket).take());
    }

    /// This rank enters finalize's agreement. From here on a lost majority does not halt it:
    /// the program has nothing left to decide, and the peers that decided the agreement leave
    /// (saying goodbye), which shrinks the set this rank needs a majority of. A rank whose
    /// parent in the agreement died, unconfirmed, after the rest of its subtree decided and left
    /// would otherwise halt (exit 88) in finalize, and the code after finalize would never run.
    /// Instead, after a heartbeat timeout without a majority, finalize returns without the
    /// agreement ([`Tcp::finalize_abandoned`]); it never decides alone.
    pub(crate) fn begin_finalize(&self) {
        self.finalizing.store(true, Ordering::SeqCst);
        lock(&self.detector).set_finalizing();
    }

    /// Whether finalize's agreement was given up ([`Tcp::begin_finalize`]).
    pub(crate) fn finalize_abandoned(&self) -> bool {
        self.abandoned.load(Ordering::SeqCst)
    }

    /// This rank finalized: from now on neither a fence nor a lost majority halts it (its
    /// peers exiting is no failure). When it `decided` the finalize agreement it leaves the
    /// job ([`Tcp::say_goodbye`]); a peer routes its agreements around a rank that said
    /// goodbye, which is sound only for a rank that had decided (it contributed, and every
    /// live participant accepted the value). Without a decision (the call failed) it exits
    /// without a goodbye, and its peers suspect it as any rank that ends.
    pub(crate) fn finish(&self, decided: bool) {
        // The detector first: from the flag on, every suspicion finds it finished.
        lock(&self.detector).finish();
        self.finished.store(true, Ordering::SeqCst);
        self.detector_changed.notify_all();
        self.remove_socket();
        if decided {
            self.say_goodbye();
        }
    }

    /// Leaves the job so that no peer takes this rank for a failed one (docs/src/semantics.md
    /// §3.4), within a heartbeat timeout in all:
    /// 1. waits for the progress threads to send what the engine's last events caused (the
    ///    `Commit`s this rank owes its tree neighbours once it decided);
    /// 2. waits for the connections it is making on first use to higher ranks whose backlog
    ///    holds frames, and on every connection writes the backlog, then [`Frame::Goodbye`], then ends its
    ///    writing side: nothing is sent after the goodbye;
    /// 3. waits for every peer to close its side (it does on reading the goodbye), reading
    ///    meanwhile, so that nothing unread is left when the process exits: closing a socket
    ///    with unread bytes resets the connection, which can discard the goodbye at the peer.
    fn say_goodbye(&self) {
        let until = Instant::now() + self.config.heartbeat_timeout;
        while self.in_progress.load(Ordering::SeqCst) > 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
        // Frames waiting for room in a ring go before the goodbye.
        self.flush_all_pending(until);
        // So do frames waiting for a connection this rank is making on first use: it is
        // awaited (a peer that finalized refuses it at once, and has then left). Not one it
        // asked a lower rank to make: that rank may have finished, and does not call back.
        for (peer, p) in self.peers.iter().enumerate() {
            if (peer as u32) > self.me
                && p.connecting.load(Ordering::SeqCst)
                && !lock(&p.backlog).is_empty()
            {
                self.await_route(peer as u32, Some(until));
            }
        }
        for (peer, p) in self.peers.iter().enumerate() {
            if peer as u32 == self.me || p.failed.load(Ordering::SeqCst) {
                continue;
            }
            let mut guard = lock(&p.writer);
            let Some(writer) = guard.as_mut() else {
                continue;
            };
            writer.take_backlog(&p.backlog);
            wire::encode(&Frame::Goodbye, &mut writer.buffer);
            let written = writer.write_out(self, &[]);
            let _ = writer.stream.shutdown(Shutdown::Write);
            *guard = None;
            match written {
                Ok(()) => self.log(format_args!("said goodbye to rank {peer}")),
                Err(e) => self.log(format_args!("could not say goodbye to rank {peer}: {e}")),
            }
        }
        while Instant::now() < until && self.peers.iter().any(|p| p.reading.load(Ordering::SeqCst))
        {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Hands the engine an event from a progress thread (`event` returns what it caused) and
    /// sends the result, counted in `in_progress` throughout.
    pub(super) fn progress(&self, event: impl FnOnce() -> Outgoing) {
        self.in_progress.fetch_add(1, Ordering::SeqCst);
        let out = event();
        self.route(out, false);
        self.in_progress.fetch_sub(1, Ordering::SeqCst);
    }

    /// `peer` said goodbye: it finalized and closes its connection after this frame. Unless
    /// this rank fenced it or has it in its output already, it departs (the detector's
    /// `depart`): no suspicion, no failure in the engine, and the agreements route around it.
    pub(super) fn peer_said_goodbye(&self, peer: u32) {
        let mut departed = false;
        self.detect(&Cause::Notice, |d, now| {
            departed = d.depart(WorldRank(peer), now);
        });
        if !departed {
            return;
        }
        self.log(format_args!("rank {peer} finalized and left"));
        let p = &self.peers[peer as usize];
        p.failed.store(true, Ordering::SeqCst);
        p.shutdown(Shutdown::Both);
        lock(&p.backlog).clear();
        self.settle(peer);
        self.progress(|| self.endpoint.peer_departed(WorldRank(peer)));
        self.detector_changed.notify_all();
    }

    /// The detector's time now.
    fn now(&self) -> Time {
        self.epoch.elapsed()
    }

    /// The detector's time of `instant`.
    pub(super) fn time_of(&self, instant: Instant) -> Time {
        instant.saturating_duration_since(self.epoch)
    }

    /// Feeds the detector an event (`event`, given the detector and the time now) and carries
    /// out what it decided, with no lock held (sending may fence more). `cause` is why a peer
    /// this event fences is suspected.
    pub(super) fn detect(&self, cause: &Cause, event: impl FnOnce(&mut Detector, Time)) {
        let actions = {
            let mut detector = lock(&self.detector);
            event(&mut detector, self.now());
            detector.take_actions()
        };
        self.act(actions, cause);
    }

    /// Starts the detector's timer thread: silence, late votes and the majority rule are
    /// decided when the detector's next deadline comes (semantics §1), or at least once a
    /// heartbeat period.
    pub(crate) fn watch_majority(self: &Arc<Self>) -> io::Result<()> {
        let tcp = Arc::clone(self);
        std::thread::Builder::new()
            .name("rt-detector".into())
            .spawn(move || tcp.detector_loop())
            .map(drop)
    }

    fn detector_loop(&self) {
        let period = self.config.heartbeat_period;
        let mut detector = lock(&self.detector);
        loop {
            if self.finished.load(Ordering::SeqCst) || lock(&self.halted).is_some() {
                return;
            }
            let now = self.now();
            detector.handle_timeout(now);
            let actions = detector.take_actions();
            if !actions.is_empty() {
                drop(detector);
                self.act(actions, &Cause::Silent);
                detector = lock(&self.detector);
                continue;
            }
            let wait = detector
                .poll_timeout()
                .map_or(period, |at| at.saturating_sub(now).min(period))
                .max(Duration::from_millis(1));
            detector = self
                .detector_changed
                .wait_timeout(detector, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Time passed: the detector decides what is due (from a thread that reads connections,
    /// after it reported what it heard).
    pub(super) fn detector_tick(&self) {
        self.detect(&Cause::Silent, |d, now| d.handle_timeout(now));
    }

    /// This rank suspects `peer` (for `cause`), or, for [`Cause::Notice`], knows that it
    /// failed for certain: the detector fences it, votes, and moves whoever that decides into
    /// the output.
    pub(crate) fn declare_failed(&self, peer: u32, cause: Cause) {
        if peer == self.me || peer >= self.size() || self.halting.load(Ordering::SeqCst) {
            return;
        }
        // After finalize the detector only closes the connection (`Detector::finish`): the
        // peers that read this rank's goodbye close theirs, which is no failure.
        let rank = WorldRank(peer);
        match cause {
            Cause::Notice => self.detect(&cause, |d, now| d.confirm(rank, now)),
            _ => self.detect(&cause, |d, now| d.suspect(rank, now)),
        }
    }

    /// The launcher (`from == None`: a confirmed failure) or the peer `from` (a
    /// `FailureNotice`: `rank` is in its output) says `rank` failed.
    pub(crate) fn notice(&self, rank: u32, from: Option<u32>) {
        if self.stands_aside() {
            return;
        }
        let rank = WorldRank(rank);
        self.detect(&Cause::Notice, |d, now| match from {
            None => d.confirm(rank, now),
            Some(by) => d.decided_by_peer(WorldRank(by), rank, now),
        });
    }

    /// The rank finalized or halts: what peers say of failures no longer concerns it.
    fn stands_aside(&self) -> bool {
        self.finished.load(Ordering::SeqCst) || self.halting.load(Ordering::SeqCst)
    }

    /// The peer `voter` says it fenced `rank`.
    fn vote(&self, voter: u32, rank: u32) {
        if self.stands_aside() {
            return;
        }
        self.detect(&Cause::Suspected { by: voter }, |d, now| {
            d.vote(WorldRank(voter), WorldRank(rank), now)
        });
    }

    /// Carries out what the detector decided (with no lock held: sending may fence more).
    /// `cause` is why a peer fenced by these actions is suspected.
    pub(super) fn act(&self, actions: Vec<Action>, cause: &Cause) {
        let mut changed = false;
        for action in actions {
            match action {
                Action::HaltFenced { by } => self.halt_fenced(by.map(|w| w.0)),
                Action::Fence { peer } => {
                    changed = true;
                    self.fence_peer(peer.0, cause);
                }
                Action::LateVote { suspect, to } => {
                    for other in to {
                        self.send_frame(other.0, &Frame::Suspect { rank: suspect.0 });
                    }
                }
                Action::Failed {
                    rank,
                    reason,
                    announce,
                } => {
                    changed = true;
                    self.log(format_args!("rank {rank} failed: {reason}"));
                    self.drop_peer(rank.0);
                    let p = &self.peers[rank.index()];
                    p.out_pending.store(true, Ordering::SeqCst);
                    self.tell_engine(rank.0);
                    if announce {
                        for other in 0..self.size() {
                            if other != rank.0 && other != self.me && !self.is_absent(other) {
                                self.send_frame(other, &Frame::FailureNotice { rank: rank.0 });
                            }
                        }
                    }
                }
                Action::Close { peer } => self.drop_peer(peer.0),
                Action::NoMajority {
                    reached,
                    alive,
                    finalizing,
                } => self.no_majority(reached, alive, finalizing),
            }
        }
        if changed {
            self.detector_changed.notify_all();
        }
    }

    /// This rank fenced `peer` (for `cause`): cuts it off and sends the vote against it.
    fn fence_peer(&self, peer: u32, cause: &Cause) {
        if cause.is_suspicion() {
            stderr_line(format_args!(
                "runthrough rank {}: fencing rank {peer}: {cause}",
                self.me
            ));
            self.tell_launcher(&launch::suspect_line(peer));
        } else {
            self.log(format_args!("fencing rank {peer}: {cause}"));
        }
        // The vote goes out before the suspect sees its connection close (and, if it lives,
        // suspects this rank in turn); the peers without a connection get it a period later,
        // if the detector still needs it then (`Action::LateVote`).
        let mut later = Vec::new();
        for other in 0..self.size() {
            if other != peer && other != self.me && !self.is_absent(other) {
                if self.unconnected(other) {
                    later.push(WorldRank(other));
                } else {
                    self.send_frame(other, &Frame::Suspect { rank: peer });
                }
            }
        }
        if !later.is_empty() {
            self.detect(cause, |d, now| d.defer_vote(WorldRank(peer), later, now));
            self.detector_changed.notify_all();
        }
        self.tell_suspect(peer);
        self.drop_peer(peer);
    }

    /// The detector found no majority for longer than the heartbeat timeout: halts, or, in
    /// finalize, gives up the last agreement.
    fn no_majority(&self, reached: u32, alive: u32, finalizing: bool) {
        if finalizing {
            stderr_line(format_args!(
                "runthrough rank {}: in finalize, reached {reached} of the {alive} ranks it \
                 believes alive for longer than the heartbeat timeout; finalizing without the \
                 last agreement",
                self.me
            ));
            self.abandoned.store(true, Ordering::SeqCst);
            self.endpoint.signal.notify(); // wakes finalize's wait
            return;
        }
        self.halt(
            launch::EXIT_NO_MAJORITY,
            format_args!(
                "reached {reached} of the {alive} ranks it believes alive, no majority, for \
                 longer than the heartbeat timeout"
            ),
        );
    }

    /// Tells `peer` it was fenced (after its backlog), if that cannot block: a suspect may be
    /// hung with a full buffer. Only when no other thread is writing to it, in one send that
    /// does not wait (`MSG_DONTWAIT`; cut short, the connection closes right after anyway) and
    /// raises no SIGPIPE if the suspect is gone (`MSG_NOSIGNAL`: a C program keeps the default
    /// SIGPIPE action, which would kill it);
    /// otherwise the suspect learns from its closed connections and its lost majority.
    fn tell_suspect(&self, peer: u32) {
        let p = &self.peers[peer as usize];
        if p.failed.load(Ordering::SeqCst) {
            return;
        }
        let Some(mut guard) = try_lock(&p.writer) else {
            return;
        };
        if let Some(writer) = guard.as_mut() {
            // After what waits for room and the backlog, as much as the connection takes now.
            writer.take_backlog(&p.backlog);
            wire::encode(&Frame::Suspect { rank: peer }, &mut writer.buffer);
            let _ = writer.write_some();
        }
    }

    /// Fences `peer` here (once): nothing more to or from it; its reader drains and stops.
    fn drop_peer(&self, peer: u32) {
        let p = &self.peers[peer as usize];
        if p.failed.swap(true, Ordering::SeqCst) {
            return;
        }
        p.shutdown(Shutdown::Both);
        lock(&p.backlog).clear();
        self.settle(peer);
    }

    /// Tells the engine that `peer` failed, once it is in the output and no reader runs.
    pub(super) fn tell_engine(&self, peer: u32) {
        let p = &self.peers[peer as usize];
        if p.out_pending.load(Ordering::SeqCst)
            && !p.reading.load(Ordering::SeqCst)
            && !p.in_engine.swap(true, Ordering::SeqCst)
        {
            self.progress(|| self.endpoint.peer_failed(WorldRank(peer)));
        }
    }

    /// Sends a control frame from a progress thread (never blocks for the writer lock).
    pub(super) fn send_frame(&self, to: u32, frame: &Frame) {
        let p = &self.peers[to as usize];
        if p.failed.load(Ordering::SeqCst) {
            return;
        }
        let heartbeat = matches!(frame, Frame::Heartbeat);
        if !heartbeat {
            match self.send_shm(to, FrameRef::Frame(frame), false) {
                Sent::Queued => return,
                Sent::Backlogged => return self.want_connection(to),
                Sent::NoLane => {}
            }
        }
        if let Err(e) = p.send_queued(self, to, |out| wire::encode(frame, out)) {
            self.declare_failed(to, Cause::Io(e));
        }
        if !heartbeat && !p.connecting.load(Ordering::Relaxed) {
            self.want_connection(to);
        }
    }

    /// Ends the installation of `peer`'s connection: under the backlog's lock, moves the frames
    /// queued so far into its ring (when frames to it go through shared memory) and marks it
    /// routed, so that no frame sent meanwhile overtakes them; then writes what is left for the
    /// socket, and wakes the blocking senders waiting for it ([`Tcp::wait_routed`]).
    fn open_route(&self, peer: u32) {
        let p = &self.peers[peer as usize];
        let refused = {
            let mut backlog = lock(&p.backlog);
            let refused = match p.shm.get().is_some_and(Lane::sends) && !backlog.is_empty() {
                true => {
                    let bytes = std::mem::take(&mut *backlog);
                    self.push_shm_bytes(peer, &bytes).err()
                }
                false => None,
            };
            p.routed.store(true, Ordering::Release);
            refused
        };
        if let Some(error) = refused {
            self.lane_broken(peer, error);
        }
        if let Err(e) = p.flush(self, peer) {
            self.declare_failed(peer, Cause::Io(e));
        }
    }

    /// A blocking send whose frame waits in the backlog of a connection being made: returns
    /// once the connection is installed (the frame then in the ring, waiting for room if need
    /// be, or written to the socket) or the peer failed, so that a message is receivable once
    /// its send returned, even if the sender dies right after (docs/src/semantics.md §4).
    fn wait_routed(&self, to: u32) {
        let p = &self.peers[to as usize];
        if !self.await_route(to, None) {
            return; // failed: nothing more goes to it
        }
        if p.shm.get().is_some_and(Lane::sends) {
            if p.shm_blocked.load(Ordering::SeqCst) {
                self.wait_pending(to);
            }
            return;
        }
        // What the installation could not write at once waits in the writer: out now.
        let written = {
            let mut guard = lock(&p.writer);
            match guard.as_mut() {
                Some(writer) => {
                    writer.take_backlog(&p.backlog);
                    writer.write_out(self, &[])
                }
                None => Ok(()),
            }
        };
        // Frames queued while this thread wrote go too.
        if let Err(e) = written.and_then(|()| p.flush(self, to)) {
            self.declare_failed(to, Cause::Io(e));
        }
    }

    /// Waits until `to`'s connection is routed (true), or it failed, this rank was killed or
    /// `until` passed (false). Woken by [`Tcp::settle`], which installs and failures call.
    fn await_route(&self, to: u32, until: Option<Instant>) -> bool {
        let p = &self.peers[to as usize];
        let mut settled = lock(&self.settled);
        loop {
            if p.routed.load(Ordering::Acquire) {
                return true;
            }
            let now = Instant::now();
            if p.failed.load(Ordering::SeqCst)
                || self.endpoint.is_killed()
                || until.is_some_and(|until| now >= until)
            {
                return false;
            }
            let wait = until.map_or(self.config.heartbeat_period, |until| until - now);
            settled = self
                .settled_changed
                .wait_timeout(settled, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn send_to_peer(&self, to: u32, packet: &Packet, blocking: bool) {
        let Some(p) = self.peers.get(to as usize) else {
            return;
        };
        if p.failed.load(Ordering::SeqCst) {
            return;
        }
        let backlogged = match self.send_shm(to, FrameRef::Packet(packet), blocking) {
            Sent::Queued => return,
            Sent::Backlogged => true,
            Sent::NoLane => {
                let sent = if blocking {
                    p.send_blocking(self, to, packet)
                } else {
                    p.send_queued(self, to, |out| wire::encode_packet(packet, out))
                        .map(|()| false)
                };
                match sent {
                    Ok(backlogged) => backlogged,
                    Err(e) => return self.declare_failed(to, Cause::Io(e)),
                }
            }
        };
        if !p.connecting.load(Ordering::Relaxed) {
            self.want_connection(to);
        }
        if backlogged && blocking {
            self.wait_routed(to);
        }
    }

    /// Sends `out` (packets from this rank), delivering self-sends here, and whatever they cause.
    fn route(&self, out: Outgoing, blocking: bool) {
        if out.is_empty() {
            return;
        }
        let mut queue: VecDeque<(u32, Packet)> = out.into_iter().map(|(to, p)| (to.0, p)).collect();
        while let Some((to, packet)) = queue.pop_front() {
            self.send_one(to, packet, blocking, &mut queue);
        }
    }

    fn send_one(
        &self,
        to: u32,
        packet: Packet,
        blocking: bool,
        caused: &mut VecDeque<(u32, Packet)>,
    ) {
        if self.endpoint.dies_before_sending(&packet) {
            self.die();
        }
        if to == self.me {
            if !self.endpoint.is_killed() {
                caused.extend(
                    self.endpoint
                        .deliver(WorldRank(self.me), packet)
                        .into_iter()
                        .map(|(to, p)| (to.0, p)),
                );
            }
        } else {
            self.send_to_peer(to, &packet, blocking);
            // Its bytes are in the ring, the socket or the backlog now.
            if let Packet::Data { payload, .. } | Packet::Collective { payload, .. } = packet {
                runthrough_core::buffers::give_back(payload);
            }
        }
    }

    /// Installs an authenticated connection to `peer` and starts its reader; `theirs`: the
    /// peer's inbox, when it gave it (then frames to it go through shared memory).
    fn install(self: &Arc<Self>, peer: u32, stream: Stream, mut decoder: Decoder, mapped: Mapped) {
        let p = &self.peers[peer as usize];
        let Mapped {
            theirs,
            mine_mapped,
        } = mapped;
        let kind = stream.kind();
        let mine = self.inbox().filter(|_| mine_mapped);
        match Lane::new(self.me, peer, mine, theirs, self.config.max_frame) {
            Ok(Some(lane)) => {
                let how = match (lane.sends(), lane.receives()) {
                    (true, true) => "both ways",
                    (true, false) => "to it only",
                    _ => "from it only",
                };
                if p.shm.set(lane).is_ok() {
                    self.log(format_args!("shared memory with rank {peer}: {how}"));
                    let lanes = self.lanes.fetch_add(1, Ordering::Relaxed) + 1;
                    self.set_local_ranks(lanes + 1);
                    // The peer may have written into its ring already, and a poll that took
                    // its active bit before the lane existed here dropped it: mark it again.
                    if let Some(inbox) = mine {
                        inbox.force_active(peer);
                        self.endpoint.signal.notify();
                    }
                }
            }
            Ok(None) => {}
            Err(e) => stderr_line(format_args!(
                "runthrough rank {}: no shared memory with rank {peer} ({e}): its traffic goes \
                 over the socket",
                self.me
            )),
        }
        let setup = (|| -> io::Result<(Stream, Stream)> {
            stream.tune()?;
            stream.set_read_timeout(Some(self.config.heartbeat_period))?;
            stream.set_write_timeout(Some(self.config.heartbeat_timeout))?;
            Ok((stream.try_clone()?, stream.try_clone()?))
        })();
        let (writer_stream, kept) = match setup {
            Ok(streams) => streams,
            Err(e) => return self.declare_failed(peer, Cause::Io(e)),
        };
        *lock(&p.stream) = Some(kept);
        *lock(&p.writer) = Some(Writer {
            stream: writer_stream,
            buffer: Vec::with_capacity(COPY_LIMIT * 4),
            stuck_since: None,
        });
        p.reading.store(true, Ordering::SeqCst);
        if p.failed.load(Ordering::SeqCst) {
            p.shutdown(Shutdown::Both);
            p.reading.store(false, Ordering::SeqCst);
            self.tell_engine(peer);
            return;
        }
        decoder.set_max_frame(self.config.max_frame);
        // The rank's socket poller reads the connection: with pulse heartbeats when frames
        // come through shared memory both ways, else in its data set, which waiting threads
        // poll (`super::sockets`). A reader thread of its own if the poller cannot take it.
        let shared = p
            .shm
            .get()
            .is_some_and(|lane| lane.sends() && lane.receives());
        let spawned =
            self.poll_socket(peer, stream, decoder, !shared)
                .or_else(|(stream, decoder)| {
                    let tcp = Arc::clone(self);
                    std::thread::Builder::new()
                        .name(format!("rt-reader-{peer}"))
                        .spawn(move || tcp.read_loop(peer, stream, decoder))
                        .map(drop)
                });
        if let Err(e) = spawned {
            p.reading.store(false, Ordering::SeqCst);
            return self.declare_failed(peer, Cause::Io(e));
        }
        self.log(format_args!("connected to rank {peer} over {}", kind));
        p.connecting.store(true, Ordering::SeqCst);
        self.open_route(peer);
        self.settle(peer);
    }

    /// A connection's progress loop: frames in, heartbeats out, silence detected. Once the
    /// peer is fenced it drains the connection, and then the engine may hear of the failure.
    fn read_loop(self: Arc<Self>, peer: u32, mut stream: Stream, mut decoder: Decoder) {
        self.read_until_fenced(peer, &mut stream, &mut decoder);
        lock(&self.detector).unwatch(WorldRank(peer));
        // What the peer wrote into shared memory before it was fenced (or left) arrived too.
        self.drain_lane(peer, true);
        self.peers[peer as usize]
            .reading
            .store(false, Ordering::SeqCst);
        self.tell_engine(peer);
    }

    /// Delivers the packets that had arrived from a fenced peer (the kernel's buffer and the
    /// decoder's), for at most a heartbeat period; its control frames are ignored.
    fn drain(&self, peer: u32, stream: &mut Stream, decoder: &mut Decoder) {
        let until = Instant::now() + self.config.heartbeat_period;
        while Instant::now() < until {
            match decoder.next_frame() {
                Ok(Some(Frame::Packet(packet))) => {
                    if !self.endpoint.is_killed() {
                        self.progress(|| self.endpoint.deliver(WorldRank(peer), packet));
                    }
                }
                Ok(Some(_)) => {}
                Ok(None) => match decoder.read_from(stream) {
                    Ok(0) => return,
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return,
                },
                Err(_) => return,
            }
        }
    }

    fn read_until_fenced(&self, peer: u32, stream: &mut Stream, decoder: &mut Decoder) {
        let p = &self.peers[peer as usize];
        let period = self.config.heartbeat_period;
        let tick = period / TICKS_PER_PERIOD;
        let mut last_heard = Instant::now();
        let mut last_beat = Instant::now() - period;
        let mut last_report = last_heard;
        lock(&self.detector).watch(WorldRank(peer), self.time_of(last_heard));
        let cause = loop {
            if p.failed.load(Ordering::SeqCst) {
                return self.drain(peer, stream, decoder);
            }
            match decoder.next_frame() {
                Ok(Some(Frame::Goodbye)) => {
                    // Everything the peer wrote into shared memory came before its goodbye.
                    self.drain_lane(peer, true);
                    return self.peer_said_goodbye(peer);
                }
                Ok(Some(frame)) => {
                    last_heard = Instant::now();
                    if let Err(why) = self.handle(peer, frame) {
                        break Cause::BadInput(why.to_string());
                    }
                }
                Ok(None) => match decoder.read_from(stream) {
                    Ok(0) => break Cause::Closed,
                    Ok(_) => last_heard = Instant::now(),
                    Err(e)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock
                                | io::ErrorKind::TimedOut
                                | io::ErrorKind::Interrupted
                        ) => {}
                    Err(e) => break Cause::Io(e),
                },
                Err(WireError::Closed) => break Cause::Closed,
                Err(WireError::Io(e)) => break Cause::Io(e),
                Err(e) => break Cause::BadInput(e.to_string()),
            }
            let now = Instant::now();
            if now.duration_since(last_beat) >= period {
                last_beat = now;
                self.send_frame(peer, &Frame::Heartbeat);
            }
            if now.duration_since(last_report) >= tick {
                // Silence is the detector's to find (it fences the peer: read above).
                last_report = now;
                lock(&self.detector).heard(WorldRank(peer), self.time_of(last_heard));
                self.detector_tick();
            }
        };
        let ended = matches!(cause, Cause::Closed | Cause::Io(_));
        self.declare_failed(peer, cause);
        if ended {
            self.confirm_if_ended(peer);
        }
    }

    pub(super) fn handle(&self, peer: u32, frame: Frame) -> Result<(), &'static str> {
        match frame {
            Frame::Packet(packet) => {
                // Even if the peer was fenced since this frame was read: it had arrived.
                if !self.endpoint.is_killed() {
                    self.progress(|| self.endpoint.deliver(WorldRank(peer), packet));
                }
                Ok(())
            }
            Frame::Heartbeat => Ok(()),
            Frame::FailureNotice { rank } if rank < self.size() => {
                self.notice(rank, Some(peer));
                Ok(())
            }
            Frame::Suspect { rank } if rank < self.size() => {
                self.vote(peer, rank);
                Ok(())
            }
            Frame::FailureNotice { .. } | Frame::Suspect { .. } => {
                Err("a failure notice or a suspicion of a rank outside the job")
            }
            Frame::Hello { .. } | Frame::Challenge { .. } | Frame::Proof { .. } => {
                Err("a handshake frame on an established connection")
            }
            Frame::Goodbye => Err("a goodbye outside the read loop"),
        }
    }

    /// Accepts connections from lower ranks for the life of the process; anything that cannot
    /// prove it belongs to the job is refused and logged.
    pub(crate) fn accept_loop(self: Arc<Self>, listener: Listener) {
        loop {
            let Ok((stream, from)) = listener.accept() else {
                continue;
            };
            let tcp = Arc::clone(&self);
            let handshake = move || match tcp.handshake_accept(&stream) {
                Ok(Accepted::Connection(peer, decoder, theirs)) => {
                    tcp.install(peer, stream, decoder, theirs)
                }
                Ok(Accepted::CallBack(peer)) => {
                    let _ = stream.shutdown(Shutdown::Both);
                    tcp.want_connection(peer);
                }
                Err(why) => {
                    // In finalize, peers leave mid-handshake (`Tcp::unreachable`): said
                    // only when verbose.
                    if tcp.finalizing.load(Ordering::SeqCst) {
                        tcp.log(format_args!("refused a connection from {from}: {why}"));
                    } else {
                        stderr_line(format_args!(
                            "runthrough rank {}: refused a connection from {from}: {why}",
                            tcp.me,
                        ));
                    }
                    let _ = stream.shutdown(Shutdown::Both);
                }
            };
            spawn_or_run("rt-handshake", handshake);
        }
    }

    fn read_frame(&self, stream: &Stream, decoder: &mut Decoder) -> Result<Frame, String> {
        let mut reader = stream;
        loop {
            if let Some(frame) = decoder.next_frame().map_err(|e| e.to_string())? {
                return Ok(frame);
            }
            match decoder.read_from(&mut reader) {
                Ok(0) => return Err("closed during the handshake".into()),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(format!("handshake: {e}")),
            }
        }
    }

    fn write_frame(stream: &Stream, frame: &Frame) -> Result<(), String> {
        let mut bytes = Vec::new();
        wire::encode(frame, &mut bytes);
        let mut writer = stream;
        writer
            .write_all(&bytes)
            .map_err(|e| format!("handshake: {e}"))
    }

    fn handshake_accept(&self, stream: &Stream) -> Result<Accepted, String> {
        stream
            .set_read_timeout(Some(self.config.handshake_timeout))
            .map_err(|e| e.to_string())?;
        stream
            .set_write_timeout(Some(self.config.handshake_timeout))
            .map_err(|e| e.to_string())?;
        let mut decoder = Decoder::new(HANDSHAKE_MAX_FRAME);
        let Frame::Hello { rank, nonce } = self.read_frame(stream, &mut decoder)? else {
            return Err("expected a hello".into());
        };
        if self.finished.load(Ordering::SeqCst) {
            // It finalized: it leaves, and takes no new connection (`Tcp::unreachable`).
            return Err(format!("rank {} finalized", self.me));
        }
        if rank > self.me
            && self
                .peers
                .get(rank as usize)
                .is_some_and(|p| p.on_demand.load(Ordering::SeqCst))
        {
            // A higher rank asks to be connected to (`Tcp::ask_to_connect`).
            return Ok(Accepted::CallBack(rank));
        }
        if rank >= self.me {
            return Err(format!("rank {rank} may not connect to rank {}", self.me));
        }
        let context = auth::pair(rank, self.me);
        let my_nonce = auth::random_token();
        let mac = auth::prove(&self.secret, Role::Acceptor, &nonce, &context);
        Self::write_frame(
            stream,
            &Frame::Challenge {
                rank: self.me,
                nonce: my_nonce,
                mac,
            },
        )?;
        let Frame::Proof { mac } = self.read_frame(stream, &mut decoder)? else {
            return Err("expected a proof".into());
        };
        if !auth::verify(&self.secret, Role::Connector, &my_nonce, &context, &mac) {
            return Err("wrong proof of the job secret".into());
        }
        let p = &self.peers[rank as usize];
        if p.failed.load(Ordering::SeqCst) || lock(&p.stream).is_some() {
            return Err(format!("rank {rank} is already connected or failed"));
        }
        let theirs = self.exchange_inboxes(stream, rank, true)?;
        Ok(Accepted::Connection(rank, decoder, theirs))
    }

    /// On a Unix connection, after the proofs: the acceptor sends its inbox (or says it has
    /// none), then the connector does; each side maps what it got. Nothing else is on the
    /// stream meanwhile, so the descriptors cannot be read by a plain read. The peer's inbox,
    /// if it gave one that maps; a refused one is said on standard error and the socket is
    /// used for that direction.
    fn exchange_inboxes(
        &self,
        stream: &Stream,
        peer: u32,
        accepting: bool,
    ) -> Result<Mapped, String> {
        let Stream::Unix(socket) = stream else {
            return Ok(Mapped::default());
        };
        let give = || -> io::Result<()> {
            match self.inbox() {
                Some(inbox) => {
                    inbox.init_slot(peer)?;
                    shm::send_fd(socket, inbox.fd())
                }
                None => shm::send_no_fd(socket),
            }
        };
        let take = || -> io::Result<Option<std::os::fd::OwnedFd>> { shm::recv_optional_fd(socket) };
        let fd = if accepting {
            give().map_err(|e| format!("handshake (shared memory): {e}"))?;
            take().map_err(|e| format!("handshake (shared memory): {e}"))?
        } else {
            let fd = take().map_err(|e| format!("handshake (shared memory): {e}"))?;
            give().map_err(|e| format!("handshake (shared memory): {e}"))?;
            fd
        };
        let theirs = fd.and_then(|fd| match Inbox::attach(fd, self.size()) {
            Ok(inbox) => Some(inbox),
            Err(e) => {
                stderr_line(format_args!(
                    "runthrough rank {}: rank {peer}'s shared memory is refused ({e}): \
                     traffic to it goes over the socket",
                    self.me
                ));
                None
            }
        });
        // Each side says whether it mapped the other's inbox: a lane is "both ways" on both
        // sides or on neither, so both agree on who reads the socket and how they hear from
        // each other (`super::sockets`).
        let said = (|| -> io::Result<bool> {
            use std::io::Read;
            (&*socket).write_all(&[u8::from(theirs.is_some())])?;
            let mut answer = [0u8];
            (&*socket).read_exact(&mut answer)?;
            Ok(answer[0] == 1)
        })();
        let mine_mapped = said.map_err(|e| format!("handshake (shared memory): {e}"))?;
        Ok(Mapped {
            theirs,
            mine_mapped,
        })
    }

    /// Records the peers' addresses and which of them are connected on first use
    /// (`on_demand[peer]`): no connection is made to those at start (they count as settled);
    /// the first frame for one starts it ([`Tcp::want_connection`]). The others are connected
    /// at start, as `init` does. Called before any connection.
    pub(crate) fn set_addresses(&self, addresses: Vec<Option<String>>, on_demand: &[bool]) {
        for (peer, p) in self.peers.iter().enumerate() {
            let later = peer >= addresses.len() && peer as u32 != self.me;
            if later || on_demand.get(peer).copied().unwrap_or(false) && peer as u32 != self.me {
                // Beyond the table: room for spawned ranks, connected on first use once they
                // joined.
                p.on_demand.store(true, Ordering::SeqCst);
                self.settle(peer as u32);
            } else {
                p.connecting.store(true, Ordering::SeqCst);
            }
        }
        *lock(&self.addresses) = addresses;
        self.address_added.notify_all();
    }

    /// A frame for `peer` waits in its backlog: when it is an on-demand peer with no
    /// connection yet, starts one on a thread of its own. The lower rank of a pair always makes
    /// the connection (so two ranks never cross); a higher rank asks the lower one to connect
    /// ([`Tcp::ask_to_connect`]). Frames keep waiting in the backlog until the connection is
    /// installed, which sends them first.
    fn want_connection(&self, peer: u32) {
        let Some(p) = self.peers.get(peer as usize) else {
            return;
        };
        if p.connecting.load(Ordering::Relaxed)
            || !p.on_demand.load(Ordering::Relaxed)
            || p.failed.load(Ordering::SeqCst)
            || p.connecting.swap(true, Ordering::SeqCst)
        {
            return;
        }
        let Some(tcp) = self.this.upgrade() else {
            return;
        };
        self.log(format_args!("connecting to rank {peer} on first use"));
        spawn_or_run("rt-connect", move || {
            // A spawned rank's address may still be on its way from the launcher.
            let Some(address) = tcp.address_of(peer, tcp.config.handshake_timeout) else {
                return tcp.declare_failed(peer, Cause::Unreachable("no published address".into()));
            };
            if tcp.me < peer {
                tcp.connect(peer, &address);
            } else {
                tcp.ask_to_connect(peer, &address);
            }
        });
    }

    /// Asks the lower rank `peer` to connect to this one: a `Hello` from a higher rank is that
    /// request (it proves nothing, and gets nothing but a connection the peer authenticates as
    /// usual). Waits for the connection for twice the handshake time-out; a peer that does not
    /// connect back by then is suspected, as one that does not connect at start.
    fn ask_to_connect(&self, peer: u32, address: &str) {
        let asked = self.open(address).and_then(|stream| {
            Self::write_frame(
                &stream,
                &Frame::Hello {
                    rank: self.me,
                    nonce: auth::random_token(),
                },
            )
        });
        if let Err(why) = asked {
            return self.unreachable(peer, why);
        }
        let until = Instant::now() + 2 * self.config.handshake_timeout;
        // Not routed by the deadline (rather than failed, or this rank killed meanwhile).
        if !self.await_route(peer, Some(until)) && Instant::now() >= until {
            self.unreachable(peer, "asked to connect, it did not in time".into());
        }
    }

    /// `peer` is connected on first use and no connection to it exists or is being made: its
    /// suspicion votes can wait (see [`Tcp::act`]).
    fn unconnected(&self, peer: u32) -> bool {
        let p = &self.peers[peer as usize];
        p.on_demand.load(Ordering::SeqCst) && !p.connecting.load(Ordering::SeqCst)
    }

    /// Watches the processes of the peers on this host (`this_host[peer]`, with a known PID)
    /// under PMI launchers, which confirm no failure: one ending is a confirmed failure, as the
    /// launcher's notice would be. Every such peer, connected or not, so that a death is
    /// confirmed at every rank of the host, which [`Tcp::vote_later`] counts on (a rank that
    /// fenced a peer on a vote closed the connection itself, and would not see it end). Peers
    /// elsewhere are confirmed as before, when their connection ends. After this rank finished
    /// it watches no more.
    pub(crate) fn watch_processes(self: &Arc<Self>, this_host: &[bool]) -> io::Result<()> {
        let pids: Vec<(u32, u32)> = lock(&self.local_pids)
            .iter()
            .enumerate()
            .filter(|&(peer, _)| this_host.get(peer).copied().unwrap_or(false))
            .filter_map(|(peer, pid)| pid.map(|pid| (peer as u32, pid)))
            .collect();
        if pids.is_empty() {
            return Ok(());
        }
        // A pidfd each, and up to a connection each: raise the soft limit on descriptors within
        // the hard one when that many would not fit (rtrun does it for its ranks; Hydra and
        // srun leave the shell's, often 1024).
        raise_open_files(2 * pids.len() as u64 + 256);
        let (mut watch, gone) = runthrough_net::local::Watch::new(pids);
        let probed = watch.probed();
        if !probed.is_empty() {
            stderr_line(format_args!(
                "runthrough rank {}: no pidfd for the processes of ranks {probed:?}: their end \
                 is looked for once per heartbeat period",
                self.me
            ));
        }
        for peer in gone {
            self.process_ended(peer);
        }
        let tcp = Arc::clone(self);
        std::thread::Builder::new()
            .name("rt-pidfds".into())
            .spawn(move || {
                while !watch.is_empty() && !tcp.stands_aside() {
                    for peer in watch.wait(tcp.config.heartbeat_period) {
                        tcp.process_ended(peer);
                    }
                }
            })
            .map(drop)
    }

    /// `peer`'s process ended (a pidfd said so): a confirmed failure, unless this rank
    /// finalized (its peers leave then).
    fn process_ended(&self, peer: u32) {
        if self.stands_aside() {
            return;
        }
        self.log(format_args!(
            "rank {peer}'s process ended (watched by a pidfd): confirmed"
        ));
        self.detect(&Cause::Notice, |d, now| d.confirm(WorldRank(peer), now));
    }

    /// Connects to `peer` (a higher rank) at `address` and authenticates; fences it on failure.
    pub(crate) fn connect(self: &Arc<Self>, peer: u32, address: &str) {
        match self.handshake_connect(peer, address) {
            Ok((stream, decoder, theirs)) => self.install(peer, stream, decoder, theirs),
            Err(why) => self.unreachable(peer, why),
        }
    }

    /// A connection to `peer` could not be made. A suspicion, except for an on-demand peer
    /// while this rank is in finalize: every live rank is then in finalize too, and a peer that
    /// cannot be reached has left (it decided finalize's agreement; a finished rank refuses
    /// connections) or died, and either way the agreements route around it: it departs, as
    /// with a goodbye, instead of being reported as a suspect at the end of a clean job.
    fn unreachable(&self, peer: u32, why: String) {
        let on_demand = self.peers[peer as usize].on_demand.load(Ordering::SeqCst);
        if on_demand && self.finalizing.load(Ordering::SeqCst) {
            self.log(format_args!(
                "rank {peer} cannot be reached in finalize ({why}): it left"
            ));
            return self.peer_said_goodbye(peer);
        }
        self.declare_failed(peer, Cause::Unreachable(why))
    }

    /// Opens a connection to `address` (a published word): over its Unix socket when the path
    /// is valid here (same boot, network and mount namespace) and Unix sockets are on, else (or
    /// when that connect fails) over TCP.
    fn open(&self, address: &str) -> Result<Stream, String> {
        let address = Address::parse(address);
        if let Some(path) = address.unix_path_from(self.config.local_identity.as_deref()) {
            match runthrough_net::stream::connect_unix(path) {
                Ok(stream) => return Ok(Stream::Unix(stream)),
                Err(e) => self.log(format_args!(
                    "connecting to {}: {e}; trying {}",
                    path.display(),
                    address.tcp
                )),
            }
        }
        let tcp: SocketAddr = address
            .tcp
            .parse()
            .map_err(|_| format!("bad address {}", address.tcp))?;
        TcpStream::connect_timeout(&tcp, self.config.handshake_timeout)
            .map(Stream::Tcp)
            .map_err(|e| format!("connecting to {tcp}: {e}"))
    }

    fn handshake_connect(
        &self,
        peer: u32,
        address: &str,
    ) -> Result<(Stream, Decoder, Mapped), String> {
        let stream = self.open(address)?;
        stream
            .set_read_timeout(Some(self.config.handshake_timeout))
            .map_err(|e| e.to_string())?;
        stream
            .set_write_timeout(Some(self.config.handshake_timeout))
            .map_err(|e| e.to_string())?;
        let nonce = auth::random_token();
        Self::write_frame(
            &stream,
            &Frame::Hello {
                rank: self.me,
                nonce,
            },
        )?;
        let mut decoder = Decoder::new(HANDSHAKE_MAX_FRAME);
        let Frame::Challenge {
            rank,
            nonce: their_nonce,
            mac,
        } = self.read_frame(&stream, &mut decoder)?
        else {
            return Err("expected a challenge".into());
        };
        let context = auth::pair(self.me, peer);
        if rank != peer || !auth::verify(&self.secret, Role::Acceptor, &nonce, &context, &mac) {
            return Err(format!(
                "{address} ({}) did not prove it is rank {peer} of this job",
                stream.kind()
            ));
        }
        let mac: [u8; TOKEN] = auth::prove(&self.secret, Role::Connector, &their_nonce, &context);
        Self::write_frame(&stream, &Frame::Proof { mac })?;
        let theirs = self.exchange_inboxes(&stream, peer, false)?;
        Ok((stream, decoder, theirs))
    }
}

impl Transport for Tcp {
    fn send(&self, from: WorldRank, to: WorldRank, packet: Packet) {
        let (from, to) = (from.0, to.0);
        debug_assert_eq!(from, self.me);
        // The application's threads come through here: they may block for the writer lock.
        let mut caused = VecDeque::new();
        self.send_one(to, packet, true, &mut caused);
        while let Some((to, packet)) = caused.pop_front() {
            self.send_one(to, packet, true, &mut caused);
        }
    }

    /// A large message to a peer whose data goes over its socket is written straight from
    /// `bytes` after its frame's head (the frame a packet would have), under the writer lock,
    /// once the connection is routed; anything else goes as a packet.
    fn send_data(
        &self,
        from: WorldRank,
        to: WorldRank,
        context: ContextId,
        source: Rank,
        tag: i32,
        bytes: &[u8],
    ) {
        debug_assert_eq!(from.0, self.me);
        let copied = || crate::transport::copied_data(context, source, tag, bytes);
        let Some(p) = self
            .peers
            .get(to.index())
            .filter(|p| bytes.len() >= BORROW_FROM && p.shm.get().is_none_or(|lane| !lane.sends()))
        else {
            return self.send(from, to, copied());
        };
        let head = Packet::Data {
            context,
            source,
            tag,
            payload: Vec::new(),
        };
        if self.endpoint.dies_before_sending(&head) {
            self.die();
        }
        if p.failed.load(Ordering::SeqCst) {
            return;
        }
        let written = {
            let mut guard = lock(&p.writer);
            // Routed, and still no lane that takes frames (one installed since the check
            // above carries every frame to the peer from now on, in order).
            match guard.as_mut().filter(|_| {
                p.routed.load(Ordering::Acquire) && p.shm.get().is_none_or(|lane| !lane.sends())
            }) {
                Some(writer) => {
                    writer.take_backlog(&p.backlog);
                    wire::encode_data_head(context, source, tag, bytes.len(), &mut writer.buffer);
                    Some(writer.write_out(self, bytes))
                }
                None => None,
            }
        };
        match written {
            Some(Ok(())) => {
                if let Err(e) = p.flush(self, to.0) {
                    self.declare_failed(to.0, Cause::Io(e));
                }
            }
            Some(Err(e)) => self.declare_failed(to.0, Cause::Io(e)),
            // Not connected yet: as a packet, through the backlog.
            None => self.send(from, to, copied()),
        }
    }

    fn kill(&self, rank: WorldRank) {
        let rank = rank.0;
        if rank == self.me {
            self.die();
        }
        self.declare_failed(rank, Cause::Notice);
    }

    fn halt_declared_failed(&self, _rank: WorldRank) {
        self.halt(
            launch::EXIT_FENCED,
            format_args!("declared failed by its peers (an agreement's decision)"),
        );
    }

    #[inline]
    fn poll(&self) {
        self.poll_shm();
        self.poll_sockets();
    }

    fn wait_past(&self, signal: &crate::signal::Signal, seen: u32) {
        self.wait_polling(signal, seen);
    }

    fn begin_wait(&self) {
        if let Some(inbox) = self.inbox() {
            inbox.enter_wait();
            Tcp::note_wait_begins();
        }
    }

    fn collectives_running(&self, running: bool) {
        if let Some(inbox) = self.inbox() {
            if inbox.wants_collectives() != running {
                inbox.set_collectives(running);
            }
        }
    }

    /// No longer counted among the pollers, this thread drains what peers left to it while
    /// it was (a peer that wrote after this drain sees no poller and wakes the progress
    /// thread), then does the progress-thread wake-ups it put off (`Tcp::ring_deferred`).
    fn end_wait(&self) {
        if let Some(inbox) = self.inbox() {
            inbox.leave_wait();
            self.poll_shm();
            self.note_wait_ends();
        }
    }

    /// More ranks of this host (this one and those it shares memory with) than cores.
    #[inline]
    fn oversubscribed(&self) -> bool {
        self.oversubscribed.load(Ordering::Relaxed)
    }

    fn spawn(
        &self,
        request: &crate::transport::SpawnRequest,
    ) -> runthrough_core::Result<(WorldRank, u32)> {
        self.request_spawn(request)
    }

    fn spawn_verdict(&self, key: crate::transport::SpawnKey, start: bool) {
        self.send_verdict(key, start);
    }

    fn is_alive(&self, rank: WorldRank) -> bool {
        let rank = rank.0;
        rank == self.me
            || self
                .peers
                .get(rank as usize)
                .is_some_and(|p| !p.failed.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use runthrough_net::stream::{self, UnixSocket};
    use std::net::TcpListener;

    fn config() -> Config {
        Config {
            handshake_timeout: Duration::from_secs(2),
            exit_on_halt: false,
            ..Config::default()
        }
    }

    /// Rank `me` of `size`, accepting on loopback.
    fn rank(me: u32, size: u32, secret: Secret) -> (Arc<Tcp>, String) {
        rank_with(me, size, secret, config())
    }

    fn rank_with(me: u32, size: u32, secret: Secret, config: Config) -> (Arc<Tcp>, String) {
        let endpoint = Arc::new(Endpoint::new(WorldRank(me), size));
        let tcp = Tcp::new(me, size, endpoint, secret, config);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let acceptor = Arc::clone(&tcp);
        std::thread::spawn(move || acceptor.accept_loop(Listener::Tcp(listener)));
        (tcp, address)
    }

    fn eventually(mut done: impl FnMut() -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if done() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    /// Semantics §4: two ranks of one job connect and authenticate each other.
    #[test]
    fn ranks_with_the_secret_connect() {
        let secret = auth::random_token();
        let (one, address) = rank(1, 2, secret);
        let (zero, _) = rank(0, 2, secret);
        zero.connect(1, &address);
        assert!(zero.is_alive(WorldRank(1)));
        assert!(eventually(|| one.peers[0].settled.load(Ordering::SeqCst)));
        assert!(one.is_alive(WorldRank(0)));
    }

    /// Semantics §4: a process without the job secret is refused, and the rank it pretended to be
    /// is not disturbed (neither connected nor failed).
    #[test]
    fn a_connection_without_the_secret_is_refused() {
        let (one, address) = rank(1, 2, auth::random_token());
        let (rogue, _) = rank(0, 2, auth::random_token());
        rogue.connect(1, &address);
        assert!(
            !rogue.is_alive(WorldRank(1)),
            "the rogue could not verify rank 1 either"
        );
        std::thread::sleep(Duration::from_millis(100));
        assert!(!one.peers[0].settled.load(Ordering::SeqCst));
        assert!(one.is_alive(WorldRank(0)));
        // A rogue that does not even speak the protocol.
        let mut raw = TcpStream::connect(&address).unwrap();
        raw.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert!(!one.peers[0].settled.load(Ordering::SeqCst));
        assert!(one.is_alive(WorldRank(0)));
    }

    /// Semantics §4 bad input: a peer that completes the handshake and then sends garbage is
    /// fenced.
    #[test]
    fn garbage_after_the_handshake_fences_the_peer() {
        let secret = auth::random_token();
        let (one, address) = rank(1, 2, secret);
        let (zero, _) = rank(0, 2, secret);
        let (mut stream, _, _) = zero.handshake_connect(1, &address).unwrap();
        assert!(eventually(|| one.peers[0].settled.load(Ordering::SeqCst)));
        stream.write_all(&[0xff; 16]).unwrap();
        assert!(eventually(|| !one.is_alive(WorldRank(0))));
    }

    /// Rank `me` of `size`, accepting on loopback and on an abstract Unix socket (whose
    /// listener, like the TCP one, lives as long as the test process).
    fn rank_unix(me: u32, size: u32, secret: Secret) -> (Arc<Tcp>, String, UnixSocket) {
        rank_unix_with(me, size, secret, config())
    }

    fn rank_unix_with(
        me: u32,
        size: u32,
        secret: Secret,
        config: Config,
    ) -> (Arc<Tcp>, String, UnixSocket) {
        let here = stream::local_identity().expect("/proc is readable here");
        let config = Config {
            local_identity: Some(here.clone()),
            ..config
        };
        let (tcp, tcp_address) = rank_with(me, size, secret, config);
        let (listener, socket) = UnixSocket::bind(None, &me.to_string()).unwrap();
        let address = Address {
            tcp: tcp_address,
            unix: Some((socket.path.clone(), here)),
            host: None,
        };
        let acceptor = Arc::clone(&tcp);
        std::thread::spawn(move || acceptor.accept_loop(Listener::Unix(listener)));
        (tcp, address.word(), socket)
    }

    fn kind_to(tcp: &Tcp, peer: u32) -> Option<&'static str> {
        lock(&tcp.peers[peer as usize].stream)
            .as_ref()
            .map(Stream::kind)
    }

    /// Two ranks of one host and namespaces connect over the Unix socket, authenticated as over
    /// TCP; a closed Unix connection fences like a closed TCP one.
    #[test]
    fn ranks_of_one_host_connect_over_unix_and_a_close_fences() {
        let secret = auth::random_token();
        let (one, address, _socket) = rank_unix(1, 2, secret);
        let (zero, _, _zero_socket) = rank_unix(0, 2, secret);
        zero.connect(1, &address);
        assert!(zero.is_alive(WorldRank(1)));
        assert_eq!(kind_to(&zero, 1), Some("unix"));
        assert!(eventually(|| one.peers[0].settled.load(Ordering::SeqCst)));
        assert_eq!(kind_to(&one, 0), Some("unix"));
        lock(&zero.peers[1].stream)
            .as_ref()
            .unwrap()
            .shutdown(Shutdown::Both)
            .unwrap();
        assert!(eventually(|| !one.is_alive(WorldRank(0))));
        assert!(!knows_failed(&one, 0), "a close is no confirmation");
    }

    /// Waits at `tcp`, polling as the library's waits do, until `done` (at most 5 s).
    fn wait_until(tcp: &Tcp, mut done: impl FnMut() -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            let seen = tcp.endpoint.signal.current();
            if done() {
                return true;
            }
            tcp.wait_polling(&tcp.endpoint.signal, seen);
        }
        false
    }

    fn poller_of(tcp: &Tcp) -> &Arc<super::super::sockets::Poller> {
        tcp.poller.get().and_then(Option::as_ref).expect("a poller")
    }

    /// A configuration whose first heartbeat comes after the test (its bytes would unstick
    /// what a test checks is written or read by itself).
    fn no_heartbeats() -> Config {
        Config {
            heartbeat_period: Duration::from_secs(30),
            heartbeat_timeout: Duration::from_secs(60),
            ..config()
        }
    }

    fn turns(tcp: &Tcp) -> (u64, u64) {
        let poller = poller_of(tcp);
        (
            poller.waiter_turns.load(Ordering::Relaxed),
            poller.progress_turns.load(Ordering::Relaxed),
        )
    }

    /// Polling progress over TCP (`super::sockets`): in a ping-pong, the waiting threads read
    /// their connection themselves; once the waits stop, the progress thread reads it again,
    /// so a message reaches a rank that no longer calls in.
    #[test]
    fn waiting_threads_read_their_sockets_and_the_progress_thread_takes_over_after() {
        let secret = auth::random_token();
        let (one, address) = rank(1, 2, secret);
        let (zero, _) = rank(0, 2, secret);
        zero.connect(1, &address);
        assert!(eventually(|| one.peers[0].settled.load(Ordering::SeqCst)));
        const ROUNDS: i32 = 200;
        let pong = {
            let one = Arc::clone(&one);
            std::thread::spawn(move || {
                for tag in 0..ROUNDS {
                    assert!(wait_until(&one, || holds(&one, 0, tag)), "ping {tag}");
                    one.send(WorldRank(1), WorldRank(0), data(1, tag));
                }
            })
        };
        for tag in 0..ROUNDS {
            zero.send(WorldRank(0), WorldRank(1), data(0, tag));
            assert!(wait_until(&zero, || holds(&zero, 1, tag)), "pong {tag}");
        }
        pong.join().unwrap();
        let (waiters, _) = turns(&zero);
        assert!(
            waiters > 0,
            "rank 0's waiting thread read none of {ROUNDS} pongs"
        );
        assert!(
            turns(&one).0 > 0,
            "rank 1's waiting thread read none of the pings"
        );
        // Nobody waits at rank 0 now: its progress thread reads the next message.
        let before = turns(&zero).1;
        one.send(WorldRank(1), WorldRank(0), data(1, 1000));
        assert!(eventually(|| holds(&zero, 1, 1000)));
        assert!(turns(&zero).1 > before, "read by the progress thread");
        assert!(zero.is_alive(WorldRank(1)) && one.is_alive(WorldRank(0)));
    }

    /// Two ranks that send each other large messages at once over TCP, their progress threads
    /// kept out of the way: a blocking send whose connection has no room reads this rank's own
    /// connections while it waits (`Tcp::write_polling`), so both sends finish and every
    /// message arrives (without that, both would wait for room until the write time-out).
    #[test]
    fn ranks_writing_to_each_other_at_once_read_while_they_wait_for_room() {
        let secret = auth::random_token();
        let (one, address) = rank(1, 2, secret);
        let (zero, _) = rank(0, 2, secret);
        zero.connect(1, &address);
        assert!(eventually(|| one.peers[0].settled.load(Ordering::SeqCst)));
        // A thread of each rank counts as polling until that rank's sends are done: the
        // progress threads stay out of the way, and only the writing threads can read.
        let poller =
            |tcp: &Tcp| -> Arc<super::super::sockets::Poller> { Arc::clone(poller_of(tcp)) };
        for tcp in [&zero, &one] {
            poller(tcp).begin_polling();
        }
        const MESSAGES: i32 = 6;
        let large = |from: u32, tag: i32| Packet::Data {
            context: runthrough_core::packet::WORLD_CONTEXT,
            source: from,
            tag,
            payload: vec![tag as u8; 4 << 20],
        };
        let other = {
            let one = Arc::clone(&one);
            let polling = poller(&one);
            std::thread::spawn(move || {
                for tag in 0..MESSAGES {
                    one.send(WorldRank(1), WorldRank(0), large(1, tag));
                }
                polling.end_polling(false);
            })
        };
        for tag in 0..MESSAGES {
            zero.send(WorldRank(0), WorldRank(1), large(0, tag));
        }
        poller(&zero).end_polling(false);
        other.join().unwrap();
        // At least one writer read while it waited (without that both would have waited for
        // room until the write time-out). Not always both: a writer whose peer's writer reads
        // all it sends may never lack room, and finishes first (seen under a loaded host).
        assert!(
            turns(&zero).0 > 0 || turns(&one).0 > 0,
            "no writer read while it waited for room"
        );
        for tag in 0..MESSAGES {
            assert!(eventually(|| holds(&zero, 1, tag)), "1 -> 0, tag {tag}");
            assert!(eventually(|| holds(&one, 0, tag)), "0 -> 1, tag {tag}");
        }
        assert!(zero.is_alive(WorldRank(1)) && one.is_alive(WorldRank(0)));
    }

    /// The payload of the first message from `from` with `tag` that `tcp` holds (taken).
    fn take(tcp: &Tcp, from: u32, tag: i32) -> Option<Vec<u8>> {
        use runthrough_core::matching::{SourceSelector, TagSelector};
        let received = tcp
            .endpoint
            .lock()
            .take_buffered(
                runthrough_core::packet::WORLD_CONTEXT,
                SourceSelector::Rank(from),
                TagSelector::Value(tag),
            )
            .ok()??;
        Some(received.payload.to_vec())
    }

    /// `Transport::send_data`: a large message written straight from the caller's bytes after
    /// its frame's head arrives whole, as does one sent through the backlog before the
    /// connection exists and a small one (both copied into a packet).
    #[test]
    fn messages_written_from_the_callers_buffer_arrive_whole() {
        let (ranks, _sockets) = on_demand_job(2, config());
        let bytes = |n: usize, salt: usize| -> Vec<u8> {
            (0..n).map(|i| ((i * 7 + salt) % 253) as u8).collect()
        };
        let context = runthrough_core::packet::WORLD_CONTEXT;
        let messages = [
            (0, bytes(3 << 20, 1)), // before the connection: through the backlog
            (1, bytes(100, 2)),
            (2, bytes(BORROW_FROM, 3)),
            (3, bytes((1 << 20) + 5, 4)),
        ];
        for (tag, payload) in &messages {
            Transport::send_data(
                &*ranks[0],
                WorldRank(0),
                WorldRank(1),
                context,
                0,
                *tag,
                payload,
            );
        }
        for (tag, payload) in &messages {
            assert!(eventually(|| holds(&ranks[1], 0, *tag)), "tag {tag}");
            assert_eq!(
                take(&ranks[1], 0, *tag).as_ref(),
                Some(payload),
                "tag {tag}"
            );
        }
    }

    /// A frame queued for a higher peer whose connection on first use this rank is still
    /// making when it finalizes goes out before the goodbye (the connection is awaited); the
    /// peer sees the goodbye, not a failure. (From the higher rank of a pair, the frame goes
    /// only if the lower one calls back before the goodbye: a lower rank that finished does
    /// not, and waiting for it would hold finalize for the heartbeat timeout.)
    #[test]
    fn frames_waiting_for_a_connection_go_out_before_the_goodbye() {
        let (ranks, _sockets) = on_demand_job(2, config());
        ranks[0].route(vec![(WorldRank(1), data(0, 5))], false); // as a progress thread sends: never waits
        ranks[0].finish(true);
        assert!(
            eventually(|| holds(&ranks[1], 0, 5)),
            "the frame was dropped"
        );
        // Written before the goodbye on that connection, not after it on its own.
        assert!(
            eventually(|| lock(&ranks[1].detector).fence().has_departed(WorldRank(0))),
            "no goodbye after the frame"
        );
        assert!(!knows_failed(&ranks[1], 0));
    }

    /// Holds `tcp`'s reading of its connection to `peer` (the test stands in for a reader
    /// that does not get to it).
    fn hold_reading(
        tcp: &Tcp,
        peer: u32,
    ) -> MutexGuard<'_, Option<super::super::sockets::Connection>> {
        let poller = poller_of(tcp);
        lock(&poller.connections[peer as usize])
    }

    /// Every frame a read completes is delivered in its turn: 3,000 small messages that sat in
    /// the socket while nobody read it arrive at once when reading resumes (a turn that
    /// delivered 64 of them left the rest in the decoder until the peer's next bytes, such as
    /// its next heartbeat).
    #[test]
    fn every_frame_a_read_completes_is_delivered() {
        let (ranks, _sockets) = on_demand_job(2, no_heartbeats());
        // Held messages are counted without probing (a probe asks the sender for credit, and
        // its answer would bring the connection back by itself).
        let held_bytes = || ranks[0].endpoint.lock().flow_stats().unexpected_bytes;
        ranks[1].send(WorldRank(1), WorldRank(0), data(1, -1));
        assert!(eventually(|| held_bytes() > 0));
        let one = held_bytes();
        let held = hold_reading(&ranks[0], 1);
        const MESSAGES: u64 = 3000;
        for tag in 0..MESSAGES {
            ranks[1].send(WorldRank(1), WorldRank(0), data(1, tag as i32));
        }
        drop(held);
        assert!(
            eventually(|| held_bytes() == one * (MESSAGES + 1)),
            "{} of {} messages",
            held_bytes() / one,
            MESSAGES + 1
        );
    }

    /// A write that finds no room holds no thread but an application's own send: frames that
    /// a progress thread or a delivery sends to a peer that stopped reading wait in the
    /// writer, the rank's progress thread goes on reading its other peers (rank 2's message
    /// reaches rank 1 long before rank 0's time-out), and a connection that takes nothing for
    /// the heartbeat timeout is suspected as a stuck write.
    #[test]
    fn a_peer_that_stops_reading_holds_no_thread_and_is_suspected_after_the_timeout() {
        let config = Config {
            heartbeat_period: Duration::from_millis(100),
            heartbeat_timeout: Duration::from_secs(3),
            ..config()
        };
        let (ranks, _sockets) = on_demand_job(3, config);
        ranks[1].send(WorldRank(1), WorldRank(0), data(1, -1));
        ranks[2].send(WorldRank(2), WorldRank(1), data(2, -1));
        assert!(eventually(
            || holds(&ranks[0], 1, -1) && holds(&ranks[1], 2, -1)
        ));
        let held = hold_reading(&ranks[0], 1);
        let large = |tag: i32| Packet::Data {
            context: runthrough_core::packet::WORLD_CONTEXT,
            source: 1,
            tag,
            payload: vec![1; 1 << 20],
        };
        for tag in 0..16 {
            ranks[1].route(vec![(WorldRank(0), large(tag))], false); // as a delivery sends: never waits
        }
        ranks[2].send(WorldRank(2), WorldRank(1), data(2, 1));
        assert!(eventually(|| holds(&ranks[1], 2, 1)));
        assert!(
            ranks[1].is_alive(WorldRank(0)),
            "fenced before rank 2's message was read"
        );
        assert!(
            eventually(|| !ranks[1].is_alive(WorldRank(0))),
            "the stuck write"
        );
        drop(held);
    }

    /// Bytes left in a writer by a write that found no room go out when the connection has
    /// room even if that news came while another thread held the writer: the flag it left
    /// (`Peer::room_missed`) makes the next flush write them, though nothing new was queued.
    #[test]
    fn a_missed_room_wake_up_is_made_good_by_the_next_flush() {
        let (ranks, _sockets) = on_demand_job(2, no_heartbeats());
        ranks[1].send(WorldRank(1), WorldRank(0), data(1, -1));
        assert!(eventually(|| holds(&ranks[0], 1, -1)));
        let p = &ranks[1].peers[0];
        {
            let mut guard = lock(&p.writer);
            let writer = guard.as_mut().expect("connected");
            wire::encode_packet(&data(1, 42), &mut writer.buffer);
        }
        p.room_missed.store(true, Ordering::SeqCst);
        p.flush(&ranks[1], 0).unwrap();
        assert!(eventually(|| holds(&ranks[0], 1, 42)));
        assert!(!p.room_missed.load(Ordering::SeqCst));
    }

    /// A message and then the end of its connection: a thread waiting for the message polls
    /// the connection and gets it; the end is read (by a waiting thread or the progress
    /// thread) and the peer suspected. (A suspicion alone rings no waiter: the engine hears
    /// of a failure once it is confirmed, so the test waits in the library for the message
    /// only.)
    #[test]
    fn a_message_then_the_end_of_its_connection_delivers_it_and_fences_the_peer() {
        let secret = auth::random_token();
        let (one, address) = rank(1, 2, secret);
        let (zero, _) = rank(0, 2, secret);
        zero.connect(1, &address);
        assert!(eventually(|| one.peers[0].settled.load(Ordering::SeqCst)));
        let closer = {
            let one = Arc::clone(&one);
            std::thread::spawn(move || {
                one.send(WorldRank(1), WorldRank(0), data(1, 7));
                lock(&one.peers[0].stream)
                    .as_ref()
                    .unwrap()
                    .shutdown(Shutdown::Both)
                    .unwrap();
            })
        };
        assert!(wait_until(&zero, || holds(&zero, 1, 7)), "the message");
        closer.join().unwrap();
        assert!(eventually(|| !zero.is_alive(WorldRank(1))), "the end read");
        assert!(!knows_failed(&zero, 1), "a close is no confirmation");
    }

    /// A rank with Unix sockets off, or whose Unix connect fails, uses TCP.
    #[test]
    fn tcp_only_ranks_and_broken_paths_use_tcp() {
        let secret = auth::random_token();
        let (one, address_one, _one_socket) = rank_unix(1, 3, secret);
        let (two, address_two, _two_socket) = rank_unix(2, 3, secret);
        let (zero, _) = rank(0, 3, secret); // Unix sockets off here
        zero.connect(1, &address_one);
        assert_eq!(kind_to(&zero, 1), Some("tcp"));
        assert!(eventually(|| one.peers[0].settled.load(Ordering::SeqCst)));
        let mut broken = Address::parse(&address_two);
        broken.unix = broken
            .unix
            .map(|(path, host)| (path.with_file_name("gone"), host));
        let (zero_unix, _, _zero_socket) = rank_unix(0, 3, secret);
        zero_unix.connect(2, &broken.word());
        assert_eq!(kind_to(&zero_unix, 2), Some("tcp"));
        assert!(eventually(|| two.peers[0].settled.load(Ordering::SeqCst)));
    }

    /// Semantics §4: over a Unix socket too, a process without the job secret is refused and the
    /// rank it pretended to be is neither connected nor failed.
    #[test]
    fn a_unix_connection_without_the_secret_is_refused() {
        let (one, address, socket) = rank_unix(1, 2, auth::random_token());
        let (rogue, _, _rogue_socket) = rank_unix(0, 2, auth::random_token());
        rogue.connect(1, &address);
        assert!(
            !rogue.is_alive(WorldRank(1)),
            "the rogue could not verify rank 1"
        );
        // A rogue that does not speak the protocol: refused, the socket closed on it.
        let mut raw = stream::connect_unix(&socket.path).unwrap();
        raw.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        raw.write_all(b"GET / HTTP/1.0\r\n\r\n").unwrap();
        let mut rest = Vec::new();
        let _ = std::io::Read::read_to_end(&mut raw, &mut rest);
        assert!(rest.is_empty(), "no challenge for a bad hello");
        assert!(!one.peers[0].settled.load(Ordering::SeqCst));
        assert!(one.is_alive(WorldRank(0)));
    }

    /// `size` ranks of one host (Unix sockets), every one connected on first use: nothing is
    /// connected at start.
    fn on_demand_job(size: u32, config: Config) -> (Vec<Arc<Tcp>>, Vec<UnixSocket>) {
        let secret = auth::random_token();
        let ranks: Vec<_> = (0..size)
            .map(|r| rank_unix_with(r, size, secret, config.clone()))
            .collect();
        let table: Vec<Option<String>> = ranks.iter().map(|(_, a, _)| Some(a.clone())).collect();
        let mut tcps = Vec::new();
        let mut sockets = Vec::new();
        for (tcp, _, socket) in ranks {
            tcp.set_addresses(table.clone(), &vec![true; size as usize]);
            tcp.wait_settled(Duration::from_secs(5));
            tcps.push(tcp);
            sockets.push(socket);
        }
        (tcps, sockets)
    }

    fn data(from: u32, tag: i32) -> Packet {
        Packet::Data {
            context: runthrough_core::packet::WORLD_CONTEXT,
            source: from,
            tag,
            payload: vec![from as u8; 8],
        }
    }

    /// How many messages from `from` with `tag` rank `tcp` holds unreceived (at most 2).
    fn holds(tcp: &Tcp, from: u32, tag: i32) -> bool {
        use runthrough_core::matching::{SourceSelector, TagSelector};
        matches!(
            tcp.endpoint.lock().probe(
                runthrough_core::packet::WORLD_CONTEXT,
                SourceSelector::Rank(from),
                TagSelector::Value(tag),
            ),
            Ok(Some(_))
        )
    }

    fn connections(tcp: &Tcp) -> Vec<u32> {
        (0..tcp.size())
            .filter(|&p| kind_to(tcp, p).is_some())
            .collect()
    }

    /// Connections on first use: none at start; a lower rank's first message connects it to
    /// the higher one, and a higher rank's first message asks the lower one to connect (only
    /// the lower rank of a pair ever connects); the messages queued meanwhile arrive, in order;
    /// and two ranks that start talking to each other at once end with one connection.
    #[test]
    fn ranks_connect_on_first_use_from_either_side() {
        let (ranks, _sockets) = on_demand_job(6, config());
        assert!(
            ranks.iter().all(|t| connections(t).is_empty()),
            "none at start"
        );
        // Lower to higher, then higher to lower: three messages each, queued before the
        // connection exists.
        for tag in 0..3 {
            ranks[1].send(WorldRank(1), WorldRank(4), data(1, tag));
            ranks[5].send(WorldRank(5), WorldRank(2), data(5, tag));
        }
        for tag in 0..3 {
            assert!(eventually(|| holds(&ranks[4], 1, tag)), "1 -> 4, tag {tag}");
            assert!(eventually(|| holds(&ranks[2], 5, tag)), "5 -> 2, tag {tag}");
        }
        assert_eq!(connections(&ranks[1]), vec![4]);
        assert_eq!(connections(&ranks[4]), vec![1]);
        assert_eq!(connections(&ranks[5]), vec![2]);
        assert_eq!(connections(&ranks[2]), vec![5]);
        assert_eq!(kind_to(&ranks[5], 2), Some("unix"));
        // Both at once.
        let (a, b) = (Arc::clone(&ranks[0]), Arc::clone(&ranks[3]));
        let other = std::thread::spawn(move || b.send(WorldRank(3), WorldRank(0), data(3, 9)));
        a.send(WorldRank(0), WorldRank(3), data(0, 9));
        other.join().unwrap();
        assert!(eventually(
            || holds(&ranks[3], 0, 9) && holds(&ranks[0], 3, 9)
        ));
        assert_eq!(connections(&ranks[0]), vec![3]);
        assert_eq!(connections(&ranks[3]), vec![0]);
        assert!(
            ranks
                .iter()
                .all(|t| (0..6).all(|r| t.is_alive(WorldRank(r)))),
            "nobody suspected"
        );
    }

    /// Semantics §1's majority with connections on first use: a rank that suspects a live peer
    /// (here: silent) votes to the peers it has no connection with a heartbeat period later,
    /// connecting to them, since the suspect is still not known dead; they fence it in turn and
    /// every one of them fails it by a majority, nobody else.
    #[test]
    fn a_suspicion_reaches_the_peers_connected_on_first_use_a_period_later() {
        let (ranks, _sockets) = on_demand_job(5, quick());
        for tcp in &ranks {
            tcp.watch_majority().unwrap();
        }
        ranks[1].declare_failed(4, Cause::Silent);
        for r in [0, 1, 2, 3] {
            assert!(eventually(|| knows_failed(&ranks[r], 4)), "rank {r}");
        }
        assert!(!connections(&ranks[0]).is_empty(), "the votes connected");
        for r in [0, 1, 2, 3] {
            assert_eq!(ranks[r].halted(), None, "rank {r}");
            assert!((0..4).all(|p| ranks[r].is_alive(WorldRank(p))), "rank {r}");
        }
    }

    /// A blocking send to an on-demand peer waits for its connection (so that the message is
    /// out of the process when the send returns); a peer that cannot be reached (nothing
    /// listens at its address) is suspected, and the send returns instead of waiting forever.
    #[test]
    fn a_blocking_send_to_an_unreachable_peer_returns_and_fences_it() {
        let secret = auth::random_token();
        let (zero, zero_address, _socket) = rank_unix(0, 3, secret);
        let (_one, one_address, _one_socket) = rank_unix(1, 3, secret);
        let closed = TcpListener::bind("127.0.0.1:0").unwrap();
        let nobody = closed.local_addr().unwrap().to_string();
        drop(closed);
        let table = vec![Some(zero_address), Some(one_address), Some(nobody)];
        zero.set_addresses(table, &[true, true, true]);
        zero.send(WorldRank(0), WorldRank(2), data(0, 1));
        assert!(!zero.is_alive(WorldRank(2)), "suspected");
        assert!(lock(&zero.detector).fence().is_fenced(WorldRank(2)));
        assert!(zero.is_alive(WorldRank(1)), "the others are left alone");
    }

    /// A rank connected on first use that cannot be reached is suspected (fenced), as one that
    /// does not connect at start; in finalize it departs instead (it left, or died: the
    /// agreements route around it either way), without a suspicion.
    #[test]
    fn an_unreachable_peer_is_suspected_except_in_finalize() {
        let (ranks, _sockets) = on_demand_job(4, config());
        ranks[0].unreachable(3, "connection refused".into());
        assert!(!ranks[0].is_alive(WorldRank(3)));
        assert!(
            lock(&ranks[0].detector).fence().is_fenced(WorldRank(3)),
            "suspected and fenced"
        );
        ranks[1].begin_finalize();
        ranks[1].unreachable(3, "connection refused".into());
        assert!(!ranks[1].is_alive(WorldRank(3)));
        let detector = lock(&ranks[1].detector);
        let fence = detector.fence();
        assert!(
            fence.has_departed(WorldRank(3)) && !fence.is_fenced(WorldRank(3)),
            "departed, not suspected"
        );
    }

    fn knows_failed(tcp: &Tcp, rank: u32) -> bool {
        tcp.endpoint.lock().knows_failed(WorldRank(rank))
    }

    /// `size` ranks on loopback, every pair connected.
    fn job(size: u32, config: Config) -> Vec<Arc<Tcp>> {
        let secret = auth::random_token();
        let ranks: Vec<(Arc<Tcp>, String)> = (0..size)
            .map(|r| rank_with(r, size, secret, config.clone()))
            .collect();
        for (low, (tcp, _)) in ranks.iter().enumerate() {
            for (high, (_, address)) in ranks.iter().enumerate().skip(low + 1) {
                tcp.connect(high as u32, address);
            }
        }
        let ranks: Vec<Arc<Tcp>> = ranks.into_iter().map(|(t, _)| t).collect();
        for tcp in &ranks {
            tcp.wait_settled(Duration::from_secs(5));
        }
        assert!(ranks
            .iter()
            .all(|t| (0..size).all(|r| t.is_alive(WorldRank(r)))));
        ranks
    }

    /// Semantics §1: a closed connection fences the peer at once, but is no confirmation: the
    /// engine hears of the failure when the launcher confirms it (or a majority fences it).
    #[test]
    fn a_closed_connection_fences_and_a_confirmation_fails() {
        let secret = auth::random_token();
        let (one, address) = rank(1, 2, secret);
        let (zero, _) = rank(0, 2, secret);
        let (stream, _, _) = zero.handshake_connect(1, &address).unwrap();
        assert!(eventually(|| one.peers[0].settled.load(Ordering::SeqCst)));
        drop(stream);
        assert!(eventually(|| !one.is_alive(WorldRank(0))));
        assert!(!knows_failed(&one, 0), "1 of 2 is no majority");
        one.notice(0, None);
        assert!(knows_failed(&one, 0));
        assert_eq!(one.halted(), None);
    }

    fn quick() -> Config {
        Config {
            heartbeat_period: Duration::from_millis(30),
            heartbeat_timeout: Duration::from_millis(300),
            ..config()
        }
    }

    /// A rank halted as the fencing rule says: told it was fenced, or left without a majority
    /// (when the frame telling it could not be sent without waiting).
    fn halted_as_fenced(tcp: &Tcp) -> bool {
        matches!(
            tcp.halted(),
            Some(launch::EXIT_FENCED | launch::EXIT_NO_MAJORITY)
        )
    }

    /// Semantics §1: a rank whose engine learned that its peers declared it failed (an agreement's
    /// decision named it) halts as a fenced rank does: exit status 86 (here, without exiting,
    /// its connections closed), and its peers see it gone.
    #[test]
    fn a_rank_declared_failed_by_an_agreement_halts_as_fenced() {
        let ranks = job(3, quick());
        Transport::halt_declared_failed(&*ranks[2], WorldRank(2));
        assert_eq!(ranks[2].halted(), Some(launch::EXIT_FENCED));
        assert!(eventually(
            || !ranks[0].is_alive(WorldRank(2)) && !ranks[1].is_alive(WorldRank(2))
        ));
        assert_eq!(ranks[0].halted(), None);
        assert_eq!(ranks[1].halted(), None);
    }

    /// Semantics §1: one rank's suspicion fences the suspect everywhere (the vote spreads), the
    /// suspect halts, and a majority (2 of 3) puts it in the output.
    #[test]
    fn a_suspicion_spreads_and_a_majority_fails_the_suspect() {
        let ranks = job(3, quick());
        for tcp in &ranks {
            tcp.watch_majority().unwrap();
        }
        ranks[1].declare_failed(2, Cause::Silent);
        assert!(!ranks[1].is_alive(WorldRank(2)));
        assert!(
            eventually(|| !ranks[0].is_alive(WorldRank(2))),
            "rank 0 learned of it"
        );
        assert!(eventually(
            || knows_failed(&ranks[0], 2) && knows_failed(&ranks[1], 2)
        ));
        assert!(eventually(|| halted_as_fenced(&ranks[2])));
        assert_eq!(ranks[0].halted(), None);
        assert_eq!(ranks[1].halted(), None);
        assert!(ranks[0].is_alive(WorldRank(1)) && ranks[1].is_alive(WorldRank(0)));
    }

    /// Semantics §1 halting: a rank that reaches no majority of the ranks it believes alive (a
    /// confirmed death shrinks them, a suspicion does not) halts after the heartbeat timeout.
    /// No sockets: the peers are silent from the start, so nothing else happens meanwhile.
    #[test]
    fn a_rank_without_a_majority_halts_after_the_timeout() {
        let config = quick();
        let timeout = config.heartbeat_timeout;
        let endpoint = Arc::new(Endpoint::new(WorldRank(0), 4));
        let tcp = Tcp::new(0, 4, endpoint, auth::random_token(), config);
        tcp.watch_majority().unwrap();
        tcp.notice(3, None); // dead for certain: 3 ranks believed alive
        tcp.declare_failed(1, Cause::Silent);
        assert!(knows_failed(&tcp, 3) && !knows_failed(&tcp, 1));
        assert!(
            lock(&tcp.detector).fence().has_majority(),
            "ranks 0 and 2 of 3"
        );
        let start = Instant::now();
        tcp.declare_failed(2, Cause::Silent);
        assert!(!lock(&tcp.detector).fence().has_majority(), "rank 0 of 3");
        assert!(eventually(|| tcp.halted() == Some(launch::EXIT_NO_MAJORITY)));
        assert!(start.elapsed() >= timeout);
        assert!(!knows_failed(&tcp, 1) && !knows_failed(&tcp, 2));
    }

    /// Semantics §1: a rank alone after confirmed failures of all the others keeps its majority.
    #[test]
    fn a_rank_alone_after_confirmed_failures_keeps_its_majority() {
        let endpoint = Arc::new(Endpoint::new(WorldRank(1), 3));
        let tcp = Tcp::new(1, 3, endpoint, auth::random_token(), quick());
        tcp.declare_failed(0, Cause::Silent);
        tcp.declare_failed(2, Cause::Silent);
        assert!(
            !lock(&tcp.detector).fence().has_majority(),
            "suspicions alone: 1 of 3"
        );
        tcp.notice(0, None);
        tcp.notice(2, None);
        assert!(knows_failed(&tcp, 0) && knows_failed(&tcp, 2));
        assert!(lock(&tcp.detector).fence().has_majority(), "1 of 1");
    }

    /// A vote naming a rank outside the job is bad input: the sender is fenced.
    #[test]
    fn a_suspicion_of_a_rank_outside_the_job_fences_the_sender() {
        let secret = auth::random_token();
        let (one, address) = rank(1, 2, secret);
        let (zero, _) = rank(0, 2, secret);
        let (mut stream, _, _) = zero.handshake_connect(1, &address).unwrap();
        assert!(eventually(|| one.peers[0].settled.load(Ordering::SeqCst)));
        let mut bytes = Vec::new();
        wire::encode(&Frame::Suspect { rank: 7 }, &mut bytes);
        stream.write_all(&bytes).unwrap();
        assert!(eventually(|| !one.is_alive(WorldRank(0))));
        assert_eq!(one.halted(), None);
    }

    /// docs/src/semantics.md §3.4: a rank that finalized says goodbye. Its peers do not suspect
    /// it (no vote, no fence, not in the engine's failures), and it leaves the ranks they
    /// believe alive: when a second rank leaves too, the last one keeps its majority (1 of 1)
    /// and never halts, though nobody confirmed an exit.
    #[test]
    fn a_rank_that_says_goodbye_departs_without_suspicion() {
        let ranks = job(3, quick());
        for tcp in &ranks {
            tcp.watch_majority().unwrap();
        }
        ranks[2].finish(true);
        for tcp in &ranks[..2] {
            assert!(eventually(|| lock(&tcp.detector)
                .fence()
                .has_departed(WorldRank(2))));
            assert!(!lock(&tcp.detector).fence().is_fenced(WorldRank(2)) && !knows_failed(tcp, 2));
            assert_eq!(lock(&tcp.detector).fence().alive(), 2);
        }
        ranks[1].finish(true);
        assert!(eventually(|| lock(&ranks[0].detector)
            .fence()
            .has_departed(WorldRank(1))));
        assert!(lock(&ranks[0].detector).fence().has_majority());
        std::thread::sleep(quick().heartbeat_timeout * 2);
        assert_eq!(ranks[0].halted(), None);
        assert!(!knows_failed(&ranks[0], 1) && !knows_failed(&ranks[0], 2));
    }

    /// A goodbye is only heard on an authenticated connection: sent in place of the hello,
    /// it is refused like any stranger, and the rank it would speak for is not disturbed.
    #[test]
    fn a_goodbye_before_the_handshake_is_refused() {
        let (one, address) = rank(1, 2, auth::random_token());
        let mut raw = TcpStream::connect(&address).unwrap();
        let mut bytes = Vec::new();
        wire::encode(&Frame::Goodbye, &mut bytes);
        raw.write_all(&bytes).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        assert!(!one.peers[0].settled.load(Ordering::SeqCst));
        assert!(!lock(&one.detector).fence().has_departed(WorldRank(0)));
        assert!(one.is_alive(WorldRank(0)));
    }
}
