// SPDX-License-Identifier: MIT OR Apache-2.0
//! Shared memory between the ranks of one host: the data path of the process transport when
//! two ranks are connected over a Unix socket (issue 12 step (c)).
//!
//! # Set-up
//! Each rank makes one *inbox* at start ([`runthrough_net::shm::Inbox`]: its two bells and one
//! ring per peer, in a sealed memfd). During the handshake on a Unix connection, after both
//! sides proved the job secret, the acceptor sends its inbox's descriptor (or a byte saying it
//! has none), then the connector does the same (`SCM_RIGHTS`; the byte streams carry nothing
//! else at that moment, so no descriptor can be read by a plain `read`). Each direction stands
//! alone: a rank that mapped its peer's inbox writes every frame for that peer into its ring
//! there; otherwise it writes to the socket. The socket stays for the handshake, the
//! heartbeats, the goodbye and as a death signal (its end, as before).
//!
//! # Sending
//! A frame is encoded as on a socket (the same wire format) and written into the ring in
//! entries of at most 64 KiB (so the receiver copies one out while the sender copies the next
//! in); what does not fit waits in the lane's *pending* bytes,
//! in order, and every later frame queues behind it. After writing, the sender sets its bit in
//! the receiver's *active* bitmap and rings the receiver's *application bell* (the receiver's
//! event count, which its waiting threads watch: one atomic add, and a `FUTEX_WAKE` only when
//! a thread sleeps there). Control frames (agreement messages, revocations, requests for
//! credit, suspicions) also ring the *progress bell*, which wakes the receiver's progress
//! thread, so agreements advance while the receiver computes, unless a thread of the receiver
//! is inside a blocking wait (the inbox's *pollers* count; an agreement or a creation counts
//! from its start to its return): that thread reads them itself, and drains once more as it
//! leaves. A sender that is itself inside a blocking wait puts that wake-up off until its wait
//! idles or ends, and skips it if the receiver polls by then (`Tcp::defer_ring`): two ranks
//! running agreements back to back otherwise woke each other's progress thread at nearly every
//! call. Data, collective traffic and credits never wake the progress thread, so a computing
//! rank pays no wake-up per message; except collective traffic for a rank that runs
//! non-blocking collectives (its inbox says so while it does): its engine advances them as
//! their messages arrive, so they must reach it while it computes.
//! Several threads of a rank that send to one peer are serialised by the lane's writer mutex,
//! held only while copying.
//!
//! When the ring is full the sender sets its *blocked* bit in the receiver's inbox and rings
//! its progress bell (unless a thread of the receiver polls); the receiver drains that ring
//! and rings the sender's bells, and the sender's pending bytes go out. An application
//! thread's send returns only once its bytes are in the ring (so a rank that dies after `send`
//! returned leaves its message receivable, as the socket path does once the kernel has the
//! bytes); it drains its own inbox while it waits, so
//! two ranks sending to each other never deadlock. Progress threads never wait: their frames
//! stay pending and the next poll sends them.
//!
//! # Receiving (polling progress)
//! Any thread of the rank that waits in the library polls: it takes the active bits and
//! drains those rings, decoding and delivering frames to the engine on its own thread (no
//! reader-thread hop). The progress thread does the same when its bell rings. A ring is
//! drained under its reader mutex, and delivered under it too, so frames reach the engine in
//! ring order.
//!
//! # Failures
//! When a peer is fenced, its socket reader drains the socket, then this ring, under the reader
//! mutex, before the engine hears of the failure: complete messages a rank wrote before it died
//! stay receivable, whoever learned of the death first. A writer killed inside an entry left
//! nothing published. Bad data in the ring (the ring's checks, or a frame the decoder refuses)
//! fences the peer as bad input on a socket does.

use std::cell::Cell;
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use runthrough_core::packet::Packet;
use runthrough_core::wire::{self, Decoder, Frame};
use runthrough_net::shm::{self, Bell, Consumer, Inbox, Producer, Push, RingError, Slot};

use super::tcp::{lock, Cause, Tcp};
use crate::signal::{Doorbell, Futex};

thread_local! {
    /// How many blocking waits of the calling thread are open (`Tcp::begin_wait`): a thread
    /// inside one comes back to its waits soon, and may put off waking a peer's progress
    /// thread until then.
    static WAITS: Cell<u32> = const { Cell::new(0) };
    /// When the calling thread first put off a wake-up it has not done yet.
    static DEFERRED_SINCE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// A wake-up put off by a waiting thread is done at the latest this long after (when the
/// thread is still inside its wait, and its waits keep ending before they go idle).
const DEFER_AT_MOST: Duration = crate::wait::POLICY.spin;

/// Frames up to this many bytes are encoded whole before they are copied into the ring; a
/// larger payload is copied into the ring straight from the packet.
const COPY_LIMIT: usize = 16 << 10;

/// The writing side: this rank's producer into its slot of the peer's inbox.
struct Outbound {
    producer: Producer<Slot>,
    /// Bytes of frames not yet in the ring, in order (`sent..` of it still to go).
    pending: Vec<u8>,
    sent: usize,
    /// Whether a control frame is among the pending bytes (its flush wakes the receiver's
    /// progress thread, as its send would have).
    pending_control: bool,
    /// Reused encoding buffer.
    scratch: Vec<u8>,
}

/// The reading side: this rank's consumer of the peer's slot in its own inbox.
struct Inbound {
    consumer: Consumer<Slot>,
    decoder: Decoder,
    /// An entry too large for the decoder's buffer at the time, served from here.
    leftover: Vec<u8>,
    at: usize,
    /// Drained for the last time (the peer failed or departed): nothing more is read.
    closed: bool,
}

/// One peer's shared-memory lane, either direction or both.
pub(super) struct Lane {
    peer_inbox: Option<Inbox>,
    out: Option<Mutex<Outbound>>,
    input: Option<Mutex<Inbound>>,
    their_app: Option<Doorbell<Futex>>,
    their_progress: Option<Doorbell<Futex>>,
    /// A control frame went into the ring while the peer had no poller, and the waiting
    /// thread that wrote it put off waking the peer's progress thread ([`Tcp::ring_deferred`]).
    ring_deferred: AtomicBool,
}

impl Lane {
    /// The peer's pulse, read from its inbox (`None` when this rank does not map it).
    pub(super) fn peer_pulse(&self) -> Option<u64> {
        self.peer_inbox.as_ref().map(Inbox::pulse)
    }
}

impl std::fmt::Debug for Lane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lane")
            .field("out", &self.out.is_some())
            .field("in", &self.input.is_some())
            .finish()
    }
}

/// What a frame just pushed may wake at its receiver (see the module docs).
#[derive(Clone, Copy)]
struct Wakes {
    /// A control frame: the progress thread, unless a thread of the receiver polls.
    control: bool,
    /// A collective message: the progress thread too while the receiver runs non-blocking
    /// collectives (its inbox says so).
    collective: bool,
}

impl Wakes {
    const CONTROL: Wakes = Wakes {
        control: true,
        collective: false,
    };

    fn control(control: bool) -> Wakes {
        Wakes {
            control,
            collective: false,
        }
    }
}

/// Whether a frame must wake the receiver's progress thread (see the module docs). Credits
/// need not: a sender waiting for one waits in the library, polling.
fn is_control(frame: &Frame) -> bool {
    !matches!(
        frame,
        Frame::Packet(
            Packet::Data { .. }
                | Packet::Collective { .. }
                | Packet::Credit { .. }
                | Packet::Loan { .. }
        )
    )
}

impl Lane {
    /// The lane between this rank (`me`) and `peer`: outbound when the peer gave its inbox
    /// (`theirs`), inbound when this rank gave its own (`mine`, its slot for `peer` laid out).
    pub(super) fn new(
        me: u32,
        peer: u32,
        mine: Option<&Inbox>,
        theirs: Option<Inbox>,
        max_frame: usize,
    ) -> io::Result<Option<Lane>> {
        let ring = |e: RingError| io::Error::new(io::ErrorKind::InvalidData, e);
        let out = match &theirs {
            Some(inbox) => Some(Mutex::new(Outbound {
                producer: Producer::attach(inbox.slot(me)?).map_err(ring)?,
                pending: Vec::new(),
                sent: 0,
                pending_control: false,
                scratch: Vec::with_capacity(COPY_LIMIT),
            })),
            None => None,
        };
        let input = match mine {
            Some(inbox) => Some(Mutex::new(Inbound {
                consumer: Consumer::attach(inbox.slot(peer)?).map_err(ring)?,
                decoder: Decoder::new(max_frame),
                leftover: Vec::new(),
                at: 0,
                closed: false,
            })),
            None => None,
        };
        if out.is_none() && input.is_none() {
            return Ok(None);
        }
        let bell = |b| theirs.clone().map(|i| Doorbell::new(Futex::shared(i, b)));
        Ok(Some(Lane {
            their_app: bell(Bell::Application),
            their_progress: bell(Bell::Progress),
            peer_inbox: theirs,
            out,
            input,
            ring_deferred: AtomicBool::new(false),
        }))
    }

    /// Whether frames to the peer go through shared memory.
    pub(super) fn sends(&self) -> bool {
        self.out.is_some()
    }

    /// Whether the peer's frames may arrive through shared memory.
    pub(super) fn receives(&self) -> bool {
        self.input.is_some()
    }
}

/// Reads ring entries as a byte stream for the decoder.
struct RingReader<'a> {
    consumer: &'a mut Consumer<Slot>,
    leftover: &'a mut Vec<u8>,
    at: &'a mut usize,
}

impl Read for RingReader<'_> {
    /// Fills `buf` from the leftover entry, else from the next entry (straight into `buf` when
    /// it fits); `Ok(0)`: the ring is empty now.
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let corrupt = |e: RingError| io::Error::new(io::ErrorKind::InvalidData, e);
        if *self.at == self.leftover.len() {
            match self.consumer.try_pop_into(buf) {
                Ok(Some((_, n))) => return Ok(n),
                Ok(None) => return Ok(0),
                Err(RingError::TooLarge { .. }) => {
                    self.consumer.try_pop(self.leftover).map_err(corrupt)?;
                    *self.at = 0;
                }
                Err(e) => return Err(corrupt(e)),
            }
        }
        let n = buf.len().min(self.leftover.len() - *self.at);
        buf[..n].copy_from_slice(&self.leftover[*self.at..*self.at + n]);
        *self.at += n;
        Ok(n)
    }
}

impl Outbound {
    /// Copies `bytes` into the ring behind whatever is pending; the rest becomes pending.
    /// Whether any entry was published.
    fn push(&mut self, bytes: &[u8]) -> Result<bool, RingError> {
        if self.sent < self.pending.len() {
            self.pending.extend_from_slice(bytes);
            return Ok(false);
        }
        let written = push_some(&mut self.producer, bytes)?;
        if written < bytes.len() {
            self.pending.clear();
            self.sent = 0;
            self.pending.extend_from_slice(&bytes[written..]);
        }
        Ok(written > 0)
    }

    /// Copies pending bytes into the ring, as many as fit; whether any entry was published.
    fn flush(&mut self) -> Result<bool, RingError> {
        if self.sent == self.pending.len() {
            return Ok(false);
        }
        let written = push_some(&mut self.producer, &self.pending[self.sent..])?;
        self.sent += written;
        if self.sent == self.pending.len() {
            self.pending.clear();
            self.sent = 0;
            if self.pending.capacity() > 4 << 20 {
                self.pending = Vec::new();
            }
        }
        Ok(written > 0)
    }

    fn is_pending(&self) -> bool {
        self.sent < self.pending.len()
    }
}

/// The largest entry written: small enough that a ring holds several, so that the receiver
/// copies one out while the sender copies the next in.
const CHUNK: usize = 64 << 10;

/// Publishes `bytes` in entries of at most [`CHUNK`]; how many bytes went in.
fn push_some(producer: &mut Producer<Slot>, bytes: &[u8]) -> Result<usize, RingError> {
    let max = producer.max_payload().min(CHUNK);
    let mut written = 0;
    while written < bytes.len() {
        let n = (bytes.len() - written).min(max);
        match producer.try_push(0, &bytes[written..written + n])? {
            Push::Done => written += n,
            Push::Full => break,
        }
    }
    Ok(written)
}

/// Leaves the inbox's pollers when dropped, draining what peers left meanwhile (as
/// `Transport::end_wait` does).
struct LeaveWait<'a>(&'a Tcp);

impl Drop for LeaveWait<'_> {
    fn drop(&mut self) {
        crate::transport::Transport::end_wait(self.0);
    }
}

/// What a send into a lane did.
pub(super) enum Sent {
    /// Not through shared memory: use the socket.
    NoLane,
    /// In the ring, or pending behind earlier bytes.
    Queued,
    /// In the peer's backlog: its connection is being installed ([`super::tcp::Peer::routed`]),
    /// which moves the backlog into the ring first.
    Backlogged,
}

impl Tcp {
    /// Sends `frame` (or `packet`) to `to` through its lane, if frames to it go through shared
    /// memory. `blocking`: an application thread, which returns only once its bytes are in the
    /// ring (or the peer failed).
    pub(super) fn send_shm(&self, to: u32, frame: FrameRef<'_>, blocking: bool) -> Sent {
        let p = self.peer(to);
        let Some(lane) = p.shm.get().filter(|l| l.sends()) else {
            return Sent::NoLane;
        };
        if !p.routed.load(Ordering::Acquire) {
            // The lane exists but the frames queued before it are not in the ring yet: this
            // one goes after them (`Tcp::open_route` moves them, under the same lock).
            let mut backlog = lock(&p.backlog);
            if !p.routed.load(Ordering::Acquire) {
                let tail = frame.encode(&mut backlog);
                backlog.extend_from_slice(tail);
                return Sent::Backlogged;
            }
        }
        let out = lane.out.as_ref().expect("sends() checked");
        let control = frame.is_control();
        let collective = frame.is_collective();
        let (published, pending) = {
            let mut guard = lock(out);
            let out = &mut *guard;
            let mut scratch = std::mem::take(&mut out.scratch);
            scratch.clear();
            let tail = frame.encode(&mut scratch);
            let mut result = out.push(&scratch);
            if !tail.is_empty() {
                result = result.and_then(|head| Ok(out.push(tail)? || head));
            }
            out.scratch = scratch;
            if control && out.is_pending() {
                out.pending_control = true;
            }
            match result {
                Ok(published) => (published, self.note_pending(p, out)),
                Err(e) => {
                    drop(guard);
                    return self.lane_broken(to, e);
                }
            }
        };
        self.after_push(
            lane,
            published,
            Wakes {
                control,
                collective,
            },
            pending,
        );
        if pending && blocking {
            self.wait_pending(to);
        }
        Sent::Queued
    }

    /// Pushes already encoded frames (the backlog of a connection being installed,
    /// `Tcp::open_route`) into `to`'s ring; a refused push is returned, for the caller to fence
    /// the peer once it holds no lock of the peer's.
    pub(super) fn push_shm_bytes(&self, to: u32, bytes: &[u8]) -> Result<(), RingError> {
        let Some(lane) = self.peer(to).shm.get() else {
            return Ok(());
        };
        let Some(out) = &lane.out else {
            return Ok(());
        };
        let (published, pending) = {
            let mut out = lock(out);
            let result = out.push(bytes);
            if out.is_pending() {
                out.pending_control = true;
            }
            (result?, self.note_pending(self.peer(to), &out))
        };
        self.after_push(lane, published, Wakes::CONTROL, pending);
        Ok(())
    }

    /// Tells the receiver what a push did: its active bit and bells; when bytes remain
    /// pending, the blocked bit (the receiver rings back once it drained).
    fn after_push(&self, lane: &Lane, published: bool, wakes: Wakes, pending: bool) {
        let (Some(theirs), Some(app), Some(progress)) =
            (&lane.peer_inbox, &lane.their_app, &lane.their_progress)
        else {
            return;
        };
        if published {
            theirs.mark_active(self.me());
            app.ring();
        }
        if pending {
            // Blocked, then active (unconditionally, a release): whoever takes the active bit
            // drains this ring and then finds the blocked bit, even if the entries already
            // published were drained before.
            theirs.set_blocked(self.me(), true);
            theirs.force_active(self.me());
            app.ring();
            if !theirs.has_pollers() {
                progress.ring();
            }
        } else if published
            // Read after the active bit is set (as the pollers are): a receiver sets its
            // collectives flag, then drains the rings whose bits are set.
            && (wakes.control || (wakes.collective && theirs.wants_collectives()))
            && !theirs.has_pollers()
        {
            if WAITS.get() > 0 && !crate::transport::Transport::oversubscribed(self) {
                self.defer_ring(lane);
            } else {
                progress.ring();
            }
        }
    }

    /// A thread inside a blocking wait wrote a control frame for a peer that had no poller:
    /// most often the peer is between two calls and polls again within a microsecond, and a
    /// `FUTEX_WAKE` of its progress thread would cost both ranks more than the whole
    /// exchange (the progress thread competes with the peer's application thread for its
    /// core). So the wake-up waits until this thread goes idle in its wait, leaves it, or
    /// [`DEFER_AT_MOST`] passes ([`Tcp::ring_deferred`]), and is skipped then if the peer
    /// polls by that time. Not when the host's ranks outnumber its cores: the peer then most
    /// likely waits for a core, not about to poll, and measured agreements at 4 and 8 ranks on
    /// 2 cores were no faster with it.
    fn defer_ring(&self, lane: &Lane) {
        if !lane.ring_deferred.swap(true, Ordering::SeqCst) {
            self.deferred_rings.fetch_add(1, Ordering::SeqCst);
        }
        if DEFERRED_SINCE.get().is_none() {
            DEFERRED_SINCE.set(Some(Instant::now()));
        }
    }

    /// If the calling thread put a wake-up off since its last flush: does the progress-thread
    /// wake-ups put off by [`Tcp::defer_ring`] (those of every thread of this rank), for peers
    /// that still have no poller. Every deferring thread flushes after its own deferral, so a
    /// thread that deferred nothing need not look. A count that another thread's flush lowers
    /// before the deferring thread raised it wraps for a moment; only whether it is zero
    /// matters.
    pub(super) fn ring_deferred(&self) {
        if DEFERRED_SINCE.take().is_none() || self.deferred_rings.load(Ordering::SeqCst) == 0 {
            return;
        }
        for peer in 0..self.size() {
            let Some(lane) = self.peers_get(peer).and_then(|p| p.shm.get()) else {
                continue;
            };
            if !lane.ring_deferred.swap(false, Ordering::SeqCst) {
                continue;
            }
            self.deferred_rings.fetch_sub(1, Ordering::SeqCst);
            if let (Some(theirs), Some(progress)) = (&lane.peer_inbox, &lane.their_progress) {
                if !theirs.has_pollers() {
                    progress.ring();
                }
            }
        }
    }

    /// The calling thread starts a blocking wait (see [`WAITS`]).
    pub(super) fn note_wait_begins() {
        WAITS.set(WAITS.get() + 1);
    }

    /// The calling thread's blocking wait ends: what it put off is done now.
    pub(super) fn note_wait_ends(&self) {
        WAITS.set(WAITS.get().saturating_sub(1));
        self.ring_deferred();
    }

    /// An application thread waits until its bytes for `to` are in the ring: it drains its
    /// own inbox meanwhile (the peer may be waiting on this rank the same way) and sleeps on its
    /// own bell, which the peer rings once it drained.
    pub(super) fn wait_pending(&self, to: u32) {
        let p = self.peer(to);
        // A poller for the whole wait: the peer that frees room rings only its application
        // bell, not its progress thread.
        crate::transport::Transport::begin_wait(self);
        let _leave = LeaveWait(self);
        loop {
            let seen = self.endpoint().signal.current();
            self.flush_pending(to);
            if !p.shm_blocked.load(Ordering::SeqCst)
                || p.failed.load(Ordering::SeqCst)
                || self.endpoint().is_killed()
            {
                return;
            }
            self.poll_shm();
            self.wait_polling(&self.endpoint().signal, seen);
        }
    }

    /// Copies `to`'s pending bytes into its ring, as many as fit.
    fn flush_pending(&self, to: u32) {
        let p = self.peer(to);
        let Some(lane) = p.shm.get() else {
            return;
        };
        let Some(out) = &lane.out else {
            return;
        };
        if p.failed.load(Ordering::SeqCst) {
            let mut out = lock(out);
            out.pending.clear();
            out.pending_control = false;
            out.sent = 0;
            self.note_pending(p, &out);
            return;
        }
        let (published, pending, control) = {
            let mut out = lock(out);
            match out.flush() {
                Ok(published) => {
                    let pending = self.note_pending(p, &out);
                    let control = published && out.pending_control;
                    if !pending {
                        out.pending_control = false;
                    }
                    (published, pending, control)
                }
                Err(e) => {
                    drop(out);
                    self.lane_broken(to, e);
                    return;
                }
            }
        };
        if !pending {
            if let Some(theirs) = &lane.peer_inbox {
                theirs.set_blocked(self.me(), false);
            }
            // A thread of this rank may wait for these bytes to go (`wait_pending`), and the
            // flush may be another thread's: its wait ends only when this rank's bell moves.
            self.endpoint().signal.notify();
        }
        self.after_push(lane, published, Wakes::control(control), pending);
    }

    /// Keeps `p.shm_blocked` and the count of blocked lanes in step with `out` (under its lock,
    /// so that two threads cannot leave bytes pending with the flag cleared); whether bytes are
    /// pending.
    fn note_pending(&self, p: &super::tcp::Peer, out: &Outbound) -> bool {
        let pending = out.is_pending();
        if p.shm_blocked.swap(pending, Ordering::SeqCst) != pending {
            if pending {
                self.shm_pending.fetch_add(1, Ordering::SeqCst);
            } else {
                self.shm_pending.fetch_sub(1, Ordering::SeqCst);
            }
        }
        pending
    }

    /// The peer wrote something the ring refuses: it is fenced like a peer that sent garbage
    /// on its socket.
    pub(super) fn lane_broken(&self, peer: u32, error: RingError) -> Sent {
        self.declare_failed(
            peer,
            Cause::BadInput(format!("shared memory with rank {peer}: {error}")),
        );
        Sent::Queued
    }

    /// Waits for `signal` to move past `seen` (the wait policy: no spin when this host's ranks
    /// outnumber its cores), counted among the inbox's
    /// pollers meanwhile, so that peers ring only the application bell; then polls, which
    /// drains whatever a peer left to this waiter ([`Inbox::leave_wait`]).
    pub(super) fn wait_polling(&self, signal: &crate::signal::Signal, seen: u32) {
        let oversubscribed = crate::transport::Transport::oversubscribed(self);
        // With data connections, the waiter reads their sockets as it spins and yields.
        let mut hooks = self.polling_hooks();
        let Some(inbox) = self.inbox() else {
            return match hooks.as_mut() {
                Some(hooks) => signal.wait_past_hooked(seen, oversubscribed, hooks),
                None => signal.wait_past(seen, oversubscribed),
            };
        };
        if DEFERRED_SINCE
            .get()
            .is_some_and(|since| since.elapsed() >= DEFER_AT_MOST)
        {
            self.ring_deferred();
        }
        inbox.enter_wait();
        match hooks.as_mut() {
            Some(hooks) => signal.wait_past_hooked(seen, oversubscribed, hooks),
            None => signal.wait_past_then(seen, oversubscribed, &mut || self.ring_deferred()),
        }
        drop(hooks);
        inbox.leave_wait();
        self.poll_shm();
    }

    /// Polling progress: drains the rings whose senders marked them active, and sends the
    /// bytes that waited for room. Called by every thread that waits in the library, and by
    /// the progress thread.
    pub(super) fn poll_shm(&self) {
        let Some(inbox) = self.inbox() else {
            return;
        };
        if inbox.any_active() {
            inbox.take_active(|peer| self.drain_lane(peer, false));
        }
        if self.shm_pending.load(Ordering::SeqCst) > 0 {
            for peer in 0..self.size() {
                if self.peer(peer).shm_blocked.load(Ordering::SeqCst) {
                    self.flush_pending(peer);
                }
            }
        }
    }

    /// Delivers every complete frame in `peer`'s ring. `last`: the peer failed or departed;
    /// this is the final drain (under the reader mutex, so it waits for a drain in progress on
    /// another thread), and the ring is read no more afterwards.
    pub(super) fn drain_lane(&self, peer: u32, last: bool) {
        let Some(p) = self.peers_get(peer) else {
            return;
        };
        let Some(lane) = p.shm.get() else {
            return;
        };
        let Some(input) = &lane.input else {
            return;
        };
        let mut input = lock(input);
        if input.closed {
            return;
        }
        if !last && p.failed.load(Ordering::SeqCst) && !p.reading.load(Ordering::SeqCst) {
            return; // fenced and drained by its reader; what comes after is ignored
        }
        let outcome = loop {
            let input = &mut *input;
            match input.decoder.next_frame() {
                Ok(Some(frame)) => {
                    if let Err(why) = self.handle_lane_frame(peer, frame, last) {
                        break Err(why.to_string());
                    }
                    continue;
                }
                Ok(None) => {}
                Err(e) => break Err(e.to_string()),
            }
            let mut reader = RingReader {
                consumer: &mut input.consumer,
                leftover: &mut input.leftover,
                at: &mut input.at,
            };
            match input.decoder.read_from(&mut reader) {
                Ok(0) => break Ok(()),
                Ok(_) => self.release_blocked(peer, lane),
                Err(e) => break Err(e.to_string()),
            }
        };
        // After bad data nothing more is read from the ring: the peer is fenced below.
        if last || outcome.is_err() {
            input.closed = true;
        }
        drop(input);
        if let Err(why) = outcome {
            self.declare_failed(peer, Cause::BadInput(format!("in shared memory: {why}")));
            return;
        }
        self.release_blocked(peer, lane);
    }

    /// A sender that found its ring full waits for room: once this rank consumed some, it
    /// rings the sender's bells (as it goes, so that both copy at once).
    fn release_blocked(&self, peer: u32, lane: &Lane) {
        if let Some(inbox) = self.inbox() {
            if inbox.take_blocked(peer) {
                if let (Some(app), Some(progress), Some(theirs)) =
                    (&lane.their_app, &lane.their_progress, &lane.peer_inbox)
                {
                    app.ring();
                    if !theirs.has_pollers() {
                        progress.ring();
                    }
                }
            }
        }
    }

    fn handle_lane_frame(&self, peer: u32, frame: Frame, last: bool) -> Result<(), &'static str> {
        match frame {
            // Control frames of a peer being drained for the last time are ignored, as on
            // its socket.
            Frame::Packet(_) => self.handle(peer, frame),
            _ if last => Ok(()),
            // A heartbeat may come here with a backlog moved over at connection.
            Frame::Heartbeat => Ok(()),
            Frame::Goodbye => Err("a goodbye in shared memory (it goes on the socket)"),
            _ => self.handle(peer, frame),
        }
    }

    /// The progress thread of a rank with an inbox: drains rings and sends pending bytes
    /// whenever its bell rings (control traffic, a freed ring), and at least every heartbeat
    /// period; ends once the rank finished or halted.
    pub(super) fn shm_progress_loop(&self, inbox: Inbox) {
        let bell = Doorbell::new(Futex::shared(inbox, Bell::Progress));
        let period = self.heartbeat_period();
        loop {
            if self.is_done() {
                return;
            }
            let seen = bell.current();
            self.poll_shm();
            bell.sleep(seen, Some(period));
        }
    }

    /// Before the goodbye: sends what waits for room in the rings, for at most `until`.
    pub(super) fn flush_all_pending(&self, until: std::time::Instant) {
        while self.shm_pending.load(Ordering::SeqCst) > 0 && std::time::Instant::now() < until {
            let seen = self.endpoint().signal.current();
            self.poll_shm();
            if self.shm_pending.load(Ordering::SeqCst) == 0 {
                return;
            }
            self.wait_polling(&self.endpoint().signal, seen);
        }
    }
}

/// A frame to send: a packet of the engine or a transport frame.
#[derive(Clone, Copy)]
pub(super) enum FrameRef<'a> {
    Packet(&'a Packet),
    Frame(&'a Frame),
}

impl<'a> FrameRef<'a> {
    /// Whether it is a collective message.
    fn is_collective(self) -> bool {
        matches!(self, FrameRef::Packet(Packet::Collective { .. }))
    }

    fn is_control(self) -> bool {
        match self {
            FrameRef::Packet(packet) => !matches!(
                packet,
                Packet::Data { .. }
                    | Packet::Collective { .. }
                    | Packet::Credit { .. }
                    | Packet::Loan { .. }
            ),
            FrameRef::Frame(frame) => is_control(frame),
        }
    }

    /// Encodes the frame into `out`; a large payload is returned to be copied after it.
    fn encode(self, out: &mut Vec<u8>) -> &'a [u8] {
        match self {
            FrameRef::Packet(packet) => wire::encode_packet_split(packet, out, COPY_LIMIT),
            FrameRef::Frame(frame) => {
                wire::encode(frame, out);
                &[]
            }
        }
    }
}

/// Makes this rank's inbox for a job of `size` ranks, or says why not (then peers on this host
/// use the Unix sockets).
pub(crate) fn make_inbox(size: u32) -> io::Result<Inbox> {
    Inbox::create(size, shm::inbox::capacity_for(size))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use runthrough_core::packet::Lane as FlowLane;
    use runthrough_net::shm::Memory as _;

    /// The sending half of a lane and the receiving half, over one ring of `capacity` bytes in
    /// an inbox of this process.
    fn pair(capacity: usize) -> (Outbound, Inbound) {
        let inbox = Inbox::create(2, capacity).unwrap();
        inbox.init_slot(1).unwrap();
        let out = Outbound {
            producer: Producer::attach(inbox.slot(1).unwrap()).unwrap(),
            pending: Vec::new(),
            sent: 0,
            pending_control: false,
            scratch: Vec::new(),
        };
        let input = Inbound {
            consumer: Consumer::attach(inbox.slot(1).unwrap()).unwrap(),
            decoder: Decoder::new(wire::DEFAULT_MAX_FRAME),
            leftover: Vec::new(),
            at: 0,
            closed: false,
        };
        (out, input)
    }

    fn send(out: &mut Outbound, packet: &Packet) {
        let mut scratch = Vec::new();
        let tail = FrameRef::Packet(packet).encode(&mut scratch);
        out.push(&scratch).unwrap();
        out.push(tail).unwrap();
    }

    /// Reads every complete frame in the ring (as `Tcp::drain_lane` does).
    fn drain(input: &mut Inbound, got: &mut Vec<Packet>) {
        loop {
            match input.decoder.next_frame().unwrap() {
                Some(Frame::Packet(packet)) => {
                    got.push(packet);
                    continue;
                }
                Some(other) => panic!("unexpected frame {other:?}"),
                None => {}
            }
            let mut reader = RingReader {
                consumer: &mut input.consumer,
                leftover: &mut input.leftover,
                at: &mut input.at,
            };
            if input.decoder.read_from(&mut reader).unwrap() == 0 {
                return;
            }
        }
    }

    fn packet(kind: u8, size: usize, n: u32) -> Packet {
        let payload: Vec<u8> = (0..size).map(|i| (i as u32 ^ n) as u8).collect();
        match kind % 3 {
            0 => Packet::Data {
                context: 7,
                source: 1,
                tag: n as i32,
                payload,
            },
            1 => Packet::Collective {
                context: 7,
                source: 1,
                epoch: 2,
                sequence: n,
                payload,
            },
            _ => Packet::Credit {
                lane: FlowLane::Point,
                bytes: u64::from(n),
            },
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Frames of any size (larger than the ring too) go through in order and whole, however
        /// sends and drains interleave: what does not fit waits in the pending bytes, frames
        /// cross entries and entries cross frames, and the ring wraps many times.
        #[test]
        fn frames_arrive_whole_and_in_order_through_a_small_ring(
            steps in proptest::collection::vec((0u8..3, 0usize..20_000, any::<bool>()), 1..60),
            capacity_log in 12u32..16,
        ) {
            let (mut out, mut input) = pair(1 << capacity_log);
            let mut sent = Vec::new();
            let mut got = Vec::new();
            for (n, &(kind, size, drain_now)) in steps.iter().enumerate() {
                let p = packet(kind, size, n as u32);
                send(&mut out, &p);
                sent.push(p);
                if drain_now {
                    drain(&mut input, &mut got);
                    out.flush().unwrap();
                }
            }
            let mut rounds = 0;
            while out.is_pending() || !input.decoder.is_idle() || got.len() < sent.len() {
                rounds += 1;
                prop_assert!(rounds < 10_000, "no progress: {} of {}", got.len(), sent.len());
                drain(&mut input, &mut got);
                out.flush().unwrap();
                prop_assert!(got.len() <= sent.len());
                if !out.is_pending() && got.len() == sent.len() {
                    break;
                }
            }
            prop_assert_eq!(got, sent);
        }
    }

    /// A corrupt writer (a header that breaks the ring's rules) is an error for the reader, never
    /// a panic or a frame.
    #[test]
    fn a_corrupt_ring_is_an_error() {
        let inbox = Inbox::create(2, 4096).unwrap();
        inbox.init_slot(1).unwrap();
        let mut input = Inbound {
            consumer: Consumer::attach(inbox.slot(1).unwrap()).unwrap(),
            decoder: Decoder::new(wire::DEFAULT_MAX_FRAME),
            leftover: Vec::new(),
            at: 0,
            closed: false,
        };
        let mut producer = Producer::attach(inbox.slot(1).unwrap()).unwrap();
        producer.write_unpublished(0, b"half an entry");
        let mut reader = RingReader {
            consumer: &mut input.consumer,
            leftover: &mut input.leftover,
            at: &mut input.at,
        };
        // A writer killed inside an entry published nothing.
        assert_eq!(input.decoder.read_from(&mut reader).unwrap(), 0);
        // Garbage published as an entry's header.
        let slot = inbox.slot(1).unwrap();
        slot.store(256, u64::MAX, std::sync::atomic::Ordering::Release);
        slot.store(64, 64, std::sync::atomic::Ordering::Release);
        let mut reader = RingReader {
            consumer: &mut input.consumer,
            leftover: &mut input.leftover,
            at: &mut input.at,
        };
        let error = input.decoder.read_from(&mut reader).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData, "{error}");
    }
}
