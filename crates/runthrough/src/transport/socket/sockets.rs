// SPDX-License-Identifier: MIT OR Apache-2.0
//! One thread reads the sockets of every peer this rank shares memory with both ways.
//!
//! Such a socket carries little: the goodbye, and the frames sent before the lanes existed;
//! data and control traffic go through the rings (`super::shm_lane`). A reader thread per such
//! peer would cost a thread (and its stack) per rank of the host for almost nothing, and 200
//! processes on one host would need 40,000 threads. So these sockets are read by one thread per
//! rank (`rt-sockets`), waiting in `epoll` (level-triggered) on all of them, with the same rules
//! as a reader thread (`Tcp::read_loop`): frames delivered in order, a peer silent for the
//! heartbeat timeout fenced, a connection that ends or carries bad input suspected, and, once
//! the peer is fenced from elsewhere, what had arrived drained (for at most a period) before the
//! engine hears of the failure.
//!
//! Heartbeats between such peers cost nothing: instead of a frame per peer per period (n² frames
//! and as many wake-ups on a host of n ranks), the thread advances the *pulse* word of its own
//! inbox four times a period, and reads each peer's pulse in the peer's inbox: a pulse that
//! moved is a heartbeat heard. A stopped or hung process stops its pulse and is fenced after
//! the timeout, as a silent socket is. Both sides of a pair agree on it: a lane is both ways on
//! both sides or on neither (the handshake says who mapped whose inbox).
//!
//! Reads never block (`MSG_DONTWAIT`: the descriptor is shared with the writer, which keeps
//! blocking writes with a time-out). A connection is served a bounded number of frames per turn,
//! so a peer that floods its socket cannot starve the others (level-triggered readiness brings
//! it back). The one wait that could block, whether the process of a peer whose connection ended
//! has ended too (`Tcp::confirm_if_ended`, up to a period), runs on a thread of its own.
//! Peers whose data comes over the socket (TCP, or Unix sockets without shared memory) keep
//! their reader thread: their writes and reads are the hot path.

use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rustix::event::{epoll, eventfd, EventfdFlags};
use rustix::net::RecvFlags;

use runthrough_core::wire::{Decoder, Frame, WireError};
use runthrough_net::stream::Stream;

use super::tcp::{lock, Cause, Tcp};

/// Frames taken from one connection before the others get a turn.
const FRAMES_PER_TURN: usize = 64;
/// The token of the wake-up descriptor (peers' tokens are their ranks).
const WAKE: u64 = u64::MAX;

/// The rank's socket poller: its `epoll` instance and the connections handed to its thread.
#[derive(Debug)]
pub(super) struct Poller {
    epoll: OwnedFd,
    /// Written to hand the thread new connections.
    wake: OwnedFd,
    incoming: Mutex<Vec<Connection>>,
}

/// A connection the poller reads.
#[derive(Debug)]
struct Connection {
    peer: u32,
    stream: Stream,
    decoder: Decoder,
    last_heard: Instant,
    /// The peer's pulse when last read.
    pulse: Option<u64>,
    /// Set once the peer is fenced: what arrives until then is delivered, then the reading
    /// ends.
    drain_until: Option<Instant>,
}

/// Whether a connection is still read after its turn.
enum Turn {
    Open,
    Done,
}

/// Reads a socket without blocking, whatever the descriptor's mode.
struct NoWait<'a>(&'a Stream);

impl Read for NoWait<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let (read, _) = rustix::net::recv(self.0, buf, RecvFlags::DONTWAIT)?;
        Ok(read)
    }
}

impl Poller {
    fn new() -> io::Result<Poller> {
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        let wake = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
        epoll::add(
            &epoll,
            &wake,
            epoll::EventData::new_u64(WAKE),
            epoll::EventFlags::IN,
        )?;
        Ok(Poller {
            epoll,
            wake,
            incoming: Mutex::new(Vec::new()),
        })
    }

    fn hand_over(&self, connection: Connection) -> io::Result<()> {
        lock(&self.incoming).push(connection);
        rustix::io::write(&self.wake, &1u64.to_ne_bytes())?;
        Ok(())
    }
}

impl Tcp {
    /// Has the socket poller read `stream`, the connection to `peer` (starting the poller on
    /// first use). On failure the connection is given back, to be read by a thread of its own.
    pub(super) fn poll_socket(
        self: &Arc<Self>,
        peer: u32,
        stream: Stream,
        decoder: Decoder,
    ) -> Result<(), (Stream, Decoder)> {
        let poller = match self.poller() {
            Ok(poller) => poller,
            Err(_) => return Err((stream, decoder)),
        };
        let now = Instant::now();
        let connection = Connection {
            peer,
            stream,
            decoder,
            last_heard: now,
            pulse: self.peer(peer).shm.get().and_then(|lane| lane.peer_pulse()),
            drain_until: None,
        };
        // The eventfd counts up to 2^64 - 2: a write fails only if the thread is gone.
        poller.hand_over(connection).map_err(|_| {
            let c = lock(&poller.incoming)
                .pop()
                .expect("the connection just pushed");
            (c.stream, c.decoder)
        })
    }

    fn poller(self: &Arc<Self>) -> io::Result<&Arc<Poller>> {
        let mut started = Ok(());
        let poller = self.poller.get_or_init(|| {
            let made = Poller::new().and_then(|poller| {
                let poller = Arc::new(poller);
                let (tcp, thread_poller) = (Arc::clone(self), Arc::clone(&poller));
                std::thread::Builder::new()
                    .name("rt-sockets".into())
                    .spawn(move || tcp.socket_loop(&thread_poller))
                    .map(|_| poller)
            });
            match made {
                Ok(poller) => Some(poller),
                Err(e) => {
                    started = Err(e);
                    None
                }
            }
        });
        started?;
        poller
            .as_ref()
            .ok_or_else(|| io::Error::other("the socket poller could not start"))
    }

    fn socket_loop(self: &Arc<Self>, poller: &Poller) {
        let tick = self.config().heartbeat_period / 4;
        let mut connections: Vec<Option<Connection>> = (0..self.size()).map(|_| None).collect();
        let mut events = Vec::with_capacity(256);
        let mut next_tick = Instant::now();
        loop {
            for c in std::mem::take(&mut *lock(&poller.incoming)) {
                let peer = c.peer;
                let token = epoll::EventData::new_u64(u64::from(peer));
                let watched = epoll::add(
                    &poller.epoll,
                    &c.stream,
                    token,
                    epoll::EventFlags::IN | epoll::EventFlags::RDHUP,
                );
                match watched {
                    Ok(()) => connections[peer as usize] = Some(c),
                    Err(e) => {
                        self.declare_failed(peer, Cause::Io(e.into()));
                        self.end_reading(peer);
                    }
                }
            }
            let wait = next_tick.saturating_duration_since(Instant::now());
            let timeout = rustix::event::Timespec {
                tv_sec: wait.as_secs() as i64,
                tv_nsec: i64::from(wait.subsec_nanos()),
            };
            events.clear();
            match epoll::wait(
                &poller.epoll,
                rustix::buffer::spare_capacity(&mut events),
                Some(&timeout),
            ) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => {
                    // Nothing can be read any more: every peer read here is suspected, as a
                    // reader thread whose read failed would.
                    let error = io::Error::from(e);
                    for c in connections.iter_mut().filter_map(Option::take) {
                        self.declare_failed(c.peer, Cause::Io(io::Error::other(error.to_string())));
                        self.end_reading(c.peer);
                    }
                    return;
                }
            }
            for event in &events {
                let token = event.data.u64();
                if token == WAKE {
                    let mut count = [0u8; 8];
                    let _ = rustix::io::read(&poller.wake, &mut count);
                    continue;
                }
                self.turn(poller, &mut connections, token as usize);
            }
            let now = Instant::now();
            if now >= next_tick {
                next_tick = now + tick;
                if let Some(inbox) = self.inbox() {
                    inbox.beat();
                }
                for peer in 0..connections.len() {
                    let Some(c) = connections[peer].as_mut() else {
                        continue;
                    };
                    if c.drain_until.is_some() || self.peer(c.peer).failed.load(Ordering::SeqCst) {
                        self.turn(poller, &mut connections, peer);
                        continue;
                    }
                    let pulse = self
                        .peer(c.peer)
                        .shm
                        .get()
                        .and_then(|lane| lane.peer_pulse());
                    if pulse != c.pulse {
                        c.pulse = pulse;
                        c.last_heard = now;
                    }
                    if now.duration_since(c.last_heard) >= self.config().heartbeat_timeout {
                        let c = connections[peer].take().expect("checked above");
                        let _ = epoll::delete(&poller.epoll, &c.stream);
                        self.connection_ended(c.peer, Cause::Silent);
                        self.end_reading(c.peer);
                    }
                }
            }
        }
    }

    /// Serves one connection a turn; removes it when its reading is over.
    fn turn(
        self: &Arc<Self>,
        poller: &Poller,
        connections: &mut [Option<Connection>],
        peer: usize,
    ) {
        let Some(c) = connections.get_mut(peer).and_then(Option::as_mut) else {
            return;
        };
        if let Turn::Done = self.read_some(c) {
            let c = connections[peer].take().expect("checked above");
            let _ = epoll::delete(&poller.epoll, &c.stream);
            self.end_reading(c.peer);
        }
    }

    /// Up to [`FRAMES_PER_TURN`] frames of one connection, as `Tcp::read_until_fenced` and
    /// `Tcp::drain` take them.
    fn read_some(self: &Arc<Self>, c: &mut Connection) -> Turn {
        let peer = c.peer;
        for _ in 0..FRAMES_PER_TURN {
            let now = Instant::now();
            if c.drain_until.is_none() && self.peer(peer).failed.load(Ordering::SeqCst) {
                c.drain_until = Some(now + self.config().heartbeat_period);
            }
            let draining = match c.drain_until {
                Some(until) if now >= until => return Turn::Done,
                Some(_) => true,
                None => false,
            };
            let ended = match c.decoder.next_frame() {
                Ok(Some(Frame::Packet(packet))) if draining => {
                    if !self.endpoint().is_killed() {
                        self.progress(|| self.endpoint().deliver(peer, packet));
                    }
                    continue;
                }
                Ok(Some(_)) if draining => continue,
                Ok(Some(Frame::Goodbye)) => {
                    // Everything the peer wrote into shared memory came before its goodbye.
                    self.drain_lane(peer, true);
                    self.peer_said_goodbye(peer);
                    return Turn::Done;
                }
                Ok(Some(frame)) => {
                    c.last_heard = now;
                    match self.handle(peer, frame) {
                        Ok(()) => continue,
                        Err(why) => Cause::BadInput(why.to_string()),
                    }
                }
                Ok(None) => match c.decoder.read_from(&mut NoWait(&c.stream)) {
                    Ok(0) if draining => return Turn::Done,
                    Ok(0) => Cause::Closed,
                    Ok(_) => {
                        if !draining {
                            c.last_heard = now;
                        }
                        continue;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Turn::Open,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) if draining => return Turn::Done,
                    Err(e) => Cause::Io(e),
                },
                Err(_) if draining => return Turn::Done,
                Err(WireError::Closed) => Cause::Closed,
                Err(WireError::Io(e)) => Cause::Io(e),
                Err(e) => Cause::BadInput(e.to_string()),
            };
            self.connection_ended(peer, ended);
            return Turn::Done;
        }
        Turn::Open
    }

    /// The peer's connection ended, failed, fell silent or carried bad input: it is suspected,
    /// and, when the connection ended, its process checked on a thread of its own.
    fn connection_ended(self: &Arc<Self>, peer: u32, cause: Cause) {
        let ended = matches!(cause, Cause::Closed | Cause::Io(_));
        self.declare_failed(peer, cause);
        if ended {
            let tcp = Arc::clone(self);
            let _ = std::thread::Builder::new()
                .name("rt-confirm".into())
                .spawn(move || tcp.confirm_if_ended(peer));
        }
    }

    /// The reading of `peer`'s connection is over (`Tcp::read_loop`'s end).
    fn end_reading(&self, peer: u32) {
        self.drain_lane(peer, true);
        self.peer(peer).reading.store(false, Ordering::SeqCst);
        self.tell_engine(peer);
    }
}
