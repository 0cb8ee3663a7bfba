// SPDX-License-Identifier: MIT OR Apache-2.0
//! One progress thread reads every socket of the rank, and a thread waiting in the library
//! reads the sockets that carry data itself (polling progress).
//!
//! # The rank's socket poller
//! A reader thread per connection would cost a thread (and its stack) per peer, and a kernel
//! wake-up of that thread plus a hand-off to the waiting thread per message. So the sockets are
//! read by one thread per rank (`rt-sockets`), waiting in `epoll` (level-triggered), with the
//! rules of a reader thread (`Tcp::read_loop`, still used when the poller cannot start):
//! frames delivered in order, when each peer was last heard told to the failure detector (which
//! fences a peer silent for the heartbeat timeout), a connection that
//! ends or carries bad input suspected, and, once the peer is fenced from elsewhere, what had
//! arrived drained (for at most a period) before the engine hears of the failure.
//!
//! Two kinds of connections:
//! - **Shared-memory peers** (a lane both ways, `super::shm_lane`): the socket carries little
//!   (the goodbye, the frames sent before the lane existed). Heartbeats cost nothing: instead
//!   of a frame per peer per period, the thread advances the *pulse* word of its own inbox
//!   four times a period and reads each peer's pulse in the peer's inbox: a pulse that moved is
//!   a heartbeat heard. A stopped or hung process stops its pulse and is fenced after the
//!   timeout, as a silent socket is. Both sides of a pair agree on it: a lane is both ways on
//!   both sides or on neither (the handshake says who mapped whose inbox). Their sockets sit
//!   in the thread's own `epoll`.
//! - **Data connections** (TCP, and Unix sockets without shared memory): every message comes
//!   through the socket. They sit in a second `epoll` set, the *data set*, which the thread's
//!   `epoll` watches as one entry, armed one-shot. The thread sends a heartbeat frame on each
//!   of them every period.
//!
//! # Polling progress on data connections
//! A thread that waits in the library (`crate::wait`) reads the data set itself while it spins
//! and yields (one `epoll_wait` with no timeout per round, then non-blocking reads of the ready
//! sockets), and delivers what it read on its own thread: no hop through another thread, no
//! wake-up per message. It is counted among the data set's *pollers* meanwhile. When the
//! data set's one-shot entry fires while a thread polls, the progress thread leaves it
//! disarmed (*parked*): more messages do not wake it. Who arms it again:
//! - a polling thread about to sleep (its wait outlasted the spin and yield phases): from then
//!   on the progress thread must read, and its delivery rings the sleeper's doorbell;
//! - the progress thread itself, on its next tick ([`PARKED_TICK`]) after a tick during which
//!   no wait began: a rank that went back to computing gets its control traffic (agreement
//!   messages, votes, a peer's end of file) read within about two ticks, without its waits
//!   ringing anything when they end.
//!
//! One word holds the pollers and the armed flag ([`Poller::state`]), so a sleeper and a
//! parking progress thread cannot both leave the set disarmed.
//!
//! A connection is read under its slot's mutex, by whichever thread takes it (`try_lock`: a
//! thread that finds it taken leaves it to the one reading, and does not count it as read),
//! so its frames reach the engine in order. Reads never block (`MSG_DONTWAIT`). A connection
//! is served a bounded number of reads per turn, and every frame they complete is delivered,
//! so a peer that floods its socket cannot starve the others (level-triggered readiness
//! brings it back) and no complete frame waits in the decoder for the peer's next bytes.
//!
//! # Writes that find no room
//! An application thread's send waits for room (up to the heartbeat timeout, as a blocking
//! write with `SO_SNDTIMEO`), reading this rank's data connections meanwhile
//! ([`Tcp::write_polling`]): two ranks that fill each other's connections do not wait on each
//! other. Every other write (the progress thread's heartbeats, what a delivery causes: credits,
//! agreement messages, votes) never waits: it writes what the connection takes and leaves the
//! rest in the writer, in order before anything sent later, and the progress thread writes it
//! when the connection has room ([`Tcp::want_room`]); a connection that takes none of it for
//! the heartbeat timeout is suspected as a stuck write is ([`Tcp::stuck_writes`]). So neither
//! the progress thread nor a reading thread is held by one slow peer. The one wait that could
//! block the progress thread, whether the process of a peer whose connection ended has ended
//! too (`Tcp::confirm_if_ended`, up to a period), runs on a thread of its own.

use runthrough_core::WorldRank;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::event::epoll;
use rustix::net::{RecvFlags, SendFlags};

use runthrough_core::wire::{Decoder, Frame, WireError};
use runthrough_net::stream::Stream;

use super::tcp::{lock, Cause, Tcp};

thread_local! {
    /// The calling thread is reading data connections ([`Tcp::poll_data`]): a write that waits
    /// for room from inside a delivery does not read again.
    static READING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Reads from one connection before the others get a turn (the complete frames of each read
/// are all delivered: a frame left in the decoder would wait for the peer's next bytes).
const READS_PER_TURN: usize = 16;
/// Tokens of the progress thread's `epoll` with this bit: the peer's connection has room for
/// the bytes a write that could not wait left ([`Tcp::want_room`]).
const ROOM: u64 = 1 << 32;
/// The token of the data set in the progress thread's `epoll` (peers' tokens are their ranks).
const DATA: u64 = u64::MAX - 1;
/// While the data set is parked, the progress thread looks this often whether waits still
/// begin (see the module docs).
pub(super) const PARKED_TICK: Duration = Duration::from_millis(1);
/// [`Poller::state`]: the data set is armed in the progress thread's `epoll` (or the event it
/// fired is being handled).
const ARMED: u64 = 1;
/// [`Poller::state`]: one polling thread.
const POLLER: u64 = 2;
/// Ready sockets taken per `epoll_wait` of the data set.
const EVENTS: usize = 32;

/// The rank's socket poller: its `epoll` instances and the connections they read.
#[derive(Debug)]
pub(super) struct Poller {
    /// The progress thread's: the shared-memory peers' sockets, and the data set (one-shot).
    epoll: OwnedFd,
    /// The data set: sockets of the data connections.
    data: OwnedFd,
    /// Per peer, its connection while it is read here; its mutex is the reading lock.
    pub(super) connections: Vec<Mutex<Option<Connection>>>,
    /// Data connections read here (waiting threads skip the data set while there are none).
    data_connections: AtomicUsize,
    /// [`ARMED`], plus [`POLLER`] per thread polling the data set.
    state: AtomicU64,
    /// Waits that began polling the data set (the progress thread arms the set again after a
    /// tick during which this did not move).
    waits: AtomicU64,
    /// Turns served to data connections by waiting threads, and by the progress thread
    /// (diagnostics and tests: where the reading happens).
    pub(super) waiter_turns: AtomicU64,
    pub(super) progress_turns: AtomicU64,
}

/// What the progress thread does after a tick while the data set is parked ([`Poller::look`]).
#[derive(Debug, PartialEq, Eq)]
enum Look {
    /// The set is armed again (by this look, or by a thread about to sleep).
    Armed,
    /// Still parked: a thread polls, or a wait began since the last look (the count now).
    Parked(u64),
}

/// A connection the poller reads.
#[derive(Debug)]
pub(super) struct Connection {
    peer: u32,
    stream: Stream,
    decoder: Decoder,
    /// In the data set (else in the progress thread's set, with pulse heartbeats).
    data: bool,
    last_heard: Instant,
    /// When this rank last sent a heartbeat frame on it (data connections).
    last_beat: Instant,
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
struct NoWait<'a> {
    stream: &'a Stream,
    /// The last read returned fewer bytes than asked for: the socket had nothing more then.
    short: bool,
}

impl Read for NoWait<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let asked = buf.len();
        let (read, _) = rustix::net::recv(self.stream, buf, RecvFlags::DONTWAIT)?;
        self.short = read < asked;
        Ok(read)
    }
}

fn timespec(wait: Duration) -> rustix::event::Timespec {
    rustix::event::Timespec {
        tv_sec: wait.as_secs() as i64,
        tv_nsec: i64::from(wait.subsec_nanos()),
    }
}

/// Reads once from `c`'s socket into its decoder, without blocking, counting it in `reads`;
/// `drained`: the read was shorter than asked for.
fn read_more(c: &mut Connection, reads: &mut usize, drained: &mut bool) -> io::Result<usize> {
    *reads += 1;
    let mut reader = NoWait {
        stream: &c.stream,
        short: false,
    };
    let read = c.decoder.read_from(&mut reader);
    *drained = reader.short;
    read
}

impl Poller {
    fn new(size: u32) -> io::Result<Poller> {
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        let data = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        epoll::add(
            &epoll,
            &data,
            epoll::EventData::new_u64(DATA),
            epoll::EventFlags::IN | epoll::EventFlags::ONESHOT,
        )?;
        Ok(Poller {
            epoll,
            data,
            connections: (0..size).map(|_| Mutex::new(None)).collect(),
            data_connections: AtomicUsize::new(0),
            state: AtomicU64::new(ARMED),
            waits: AtomicU64::new(0),
            waiter_turns: AtomicU64::new(0),
            progress_turns: AtomicU64::new(0),
        })
    }

    /// The data set's entry fired (it is disarmed now): if a thread polls, the set stays
    /// disarmed (parked) and this returns the count of waits so far; else `None`, and the
    /// caller reads the ready connections and arms it again.
    fn fired(&self) -> Option<u64> {
        self.state
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |state| {
                (state >= POLLER).then_some(state & !ARMED)
            })
            .ok()
            .map(|_| self.waits.load(Ordering::Relaxed))
    }

    /// Leaves the set disarmed (its entry fired and nobody polls, but there was nothing this
    /// thread could read): the next look arms it. Returns the count of waits.
    fn park(&self) -> Option<u64> {
        self.state.fetch_and(!ARMED, Ordering::SeqCst);
        Some(self.waits.load(Ordering::Relaxed))
    }

    /// A tick while parked; `seen`: the count of waits at the previous look. Arms the set
    /// again if no thread polls and no wait began since.
    fn look(&self, seen: u64) -> Look {
        let waits = self.waits.load(Ordering::Relaxed);
        if waits == seen
            && self
                .state
                .compare_exchange(0, ARMED, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        {
            self.arm();
            return Look::Armed;
        }
        if self.state.load(Ordering::SeqCst) & ARMED != 0 {
            return Look::Armed; // a thread about to sleep armed it
        }
        Look::Parked(waits)
    }

    /// Arms the data set's one-shot entry again (the caller made [`ARMED`] true).
    fn arm(&self) {
        let _ = epoll::modify(
            &self.epoll,
            &self.data,
            epoll::EventData::new_u64(DATA),
            epoll::EventFlags::IN | epoll::EventFlags::ONESHOT,
        );
    }

    /// A thread of the rank starts polling the data set.
    pub(super) fn begin_polling(&self) {
        self.state.fetch_add(POLLER, Ordering::SeqCst);
        self.waits.fetch_add(1, Ordering::Relaxed);
    }

    /// A polling thread stops. `sleeping`: it is about to sleep, so if it was the last poller
    /// and the set is parked, it arms the set (the progress thread reads from then on).
    pub(super) fn end_polling(&self, sleeping: bool) {
        let before = self.state.fetch_sub(POLLER, Ordering::SeqCst);
        if !sleeping || before != POLLER {
            return; // pollers remain, or the set is armed, or a quick wait ended
        }
        if self
            .state
            .compare_exchange(0, ARMED, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            self.arm();
        }
    }
}

/// A waiting thread's hooks ([`crate::wait::Hooks`]) on a rank with data connections.
pub(super) struct Polling<'a> {
    tcp: &'a Tcp,
    poller: &'a Poller,
    counted: bool,
}

impl crate::wait::Hooks for Polling<'_> {
    fn poll(&mut self) -> bool {
        self.tcp.poll_data(self.poller, &self.poller.waiter_turns)
    }

    fn idle(&mut self) {
        self.tcp.ring_deferred();
    }

    fn before_sleep(&mut self) {
        if std::mem::take(&mut self.counted) {
            self.poller.end_polling(true);
        }
    }
}

impl Drop for Polling<'_> {
    fn drop(&mut self) {
        if std::mem::take(&mut self.counted) {
            self.poller.end_polling(false);
        }
    }
}

impl Tcp {
    /// Has the socket poller read `stream`, the connection to `peer` (starting the poller on
    /// first use): in the data set when `data` (messages come through it), else among the
    /// shared-memory peers' sockets. On failure the connection is given back, to be read by a
    /// thread of its own.
    pub(super) fn poll_socket(
        self: &Arc<Self>,
        peer: u32,
        stream: Stream,
        decoder: Decoder,
        data: bool,
    ) -> Result<(), (Stream, Decoder)> {
        let poller = match self.poller() {
            Ok(poller) => poller,
            Err(_) => return Err((stream, decoder)),
        };
        let now = Instant::now();
        let set = if data { &poller.data } else { &poller.epoll };
        let mut slot = lock(&poller.connections[peer as usize]);
        if slot.is_some() {
            return Err((stream, decoder));
        }
        let watched = epoll::add(
            set,
            &stream,
            epoll::EventData::new_u64(u64::from(peer)),
            epoll::EventFlags::IN | epoll::EventFlags::RDHUP,
        );
        if watched.is_err() {
            return Err((stream, decoder));
        }
        *slot = Some(Connection {
            peer,
            stream,
            decoder,
            data,
            last_heard: now,
            last_beat: now - self.config().heartbeat_period,
            pulse: self.peer(peer).shm.get().and_then(|lane| lane.peer_pulse()),
            drain_until: None,
        });
        if data {
            poller.data_connections.fetch_add(1, Ordering::SeqCst);
        }
        drop(slot);
        lock(&self.detector).watch(WorldRank(peer), self.time_of(now));
        Ok(())
    }

    fn poller(self: &Arc<Self>) -> io::Result<&Arc<Poller>> {
        let mut started = Ok(());
        let poller = self.poller.get_or_init(|| {
            let made = Poller::new(self.size()).and_then(|poller| {
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

    /// The poller, when it reads data connections (else a waiting thread has no socket to
    /// poll).
    fn data_poller(&self) -> Option<&Poller> {
        self.poller
            .get()
            .and_then(Option::as_deref)
            .filter(|p| p.data_connections.load(Ordering::Relaxed) > 0)
    }

    /// The hooks of a waiting thread: polling the data set when there is one (counted among
    /// its pollers from now until it sleeps or the hooks drop), and the deferred wake-ups of
    /// the shared-memory lanes when it idles.
    pub(super) fn polling_hooks(&self) -> Option<Polling<'_>> {
        let poller = self.data_poller()?;
        poller.begin_polling();
        Some(Polling {
            tcp: self,
            poller,
            counted: true,
        })
    }

    /// Reads the data connections that have something to read, on the calling thread.
    pub(super) fn poll_sockets(&self) {
        if let Some(poller) = self.data_poller() {
            self.poll_data(poller, &poller.waiter_turns);
        }
    }

    /// Writes all of `bytes` to `stream`, a connection's writing side. While the connection
    /// has no room, the calling thread reads this rank's data connections (the peer may be
    /// writing to this rank as hard: two ranks that both wait for room must not wait on each
    /// other) and waits until the connection has room or a data connection has something to
    /// read. A connection that takes nothing for the write time-out (the heartbeat timeout)
    /// fails the write (`TimedOut`), as a blocking write with `SO_SNDTIMEO` would.
    pub(super) fn write_polling(&self, stream: &Stream, mut bytes: &[u8]) -> io::Result<()> {
        use rustix::event::{PollFd, PollFlags};
        let mut until = None;
        while !bytes.is_empty() {
            match rustix::net::send(stream, bytes, SendFlags::DONTWAIT | SendFlags::NOSIGNAL) {
                Ok(n) => {
                    bytes = &bytes[n..];
                    until = None;
                    continue;
                }
                Err(rustix::io::Errno::INTR) => continue,
                Err(rustix::io::Errno::AGAIN) => {}
                Err(e) => return Err(e.into()),
            }
            let now = Instant::now();
            let until = *until.get_or_insert(now + self.config().heartbeat_timeout);
            if now >= until {
                return Err(io::ErrorKind::TimedOut.into());
            }
            // Reads what is there (not from inside a read: that connection is taken).
            let poller = self.data_poller();
            if let Some(poller) = poller {
                if self.poll_data(poller, &poller.waiter_turns) {
                    continue;
                }
            }
            let mut fds = [
                PollFd::new(stream, PollFlags::OUT),
                PollFd::new(stream, PollFlags::empty()),
            ];
            let watched = match poller {
                Some(poller) if !READING.get() => {
                    fds[1] = PollFd::new(&poller.data, PollFlags::IN);
                    2
                }
                _ => 1,
            };
            match rustix::event::poll(&mut fds[..watched], Some(&timespec(until - now))) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Reads the ready data connections, counting the turns in `turns`; returns whether it
    /// read any (a connection another thread is reading is left to it, and does not count).
    /// Not from inside a read of the calling thread (a write that waits for room there):
    /// returns false.
    fn poll_data(&self, poller: &Poller, turns: &AtomicU64) -> bool {
        /// Clears [`READING`] however the reading ends (a delivery that unwinds included).
        struct Reading;
        impl Drop for Reading {
            fn drop(&mut self) {
                READING.set(false);
            }
        }
        if READING.get() {
            return false;
        }
        READING.set(true);
        let _reading = Reading;
        self.poll_data_now(poller, turns)
    }

    fn poll_data_now(&self, poller: &Poller, turns: &AtomicU64) -> bool {
        let mut events = [epoll::Event {
            flags: epoll::EventFlags::empty(),
            data: epoll::EventData::new_u64(0),
        }; EVENTS];
        let zero = timespec(Duration::ZERO);
        let Ok(ready) = epoll::wait(&poller.data, &mut events[..], Some(&zero)) else {
            return false; // the progress thread sees the same error and acts on it
        };
        let mut served = 0;
        for event in &events[..ready] {
            if self.turn(poller, event.data.u64() as usize) {
                served += 1;
            }
        }
        if served > 0 {
            turns.fetch_add(served, Ordering::Relaxed);
        }
        served > 0
    }

    fn socket_loop(self: &Arc<Self>, poller: &Poller) {
        let tick = self.config().heartbeat_period / super::tcp::TICKS_PER_PERIOD;
        let mut events = Vec::with_capacity(256);
        let mut next_tick = Instant::now();
        // While the data set is parked: the count of waits at the last look.
        let mut parked: Option<u64> = None;
        let mut next_look = Instant::now();
        loop {
            let now = Instant::now();
            let until = match parked {
                Some(_) => next_tick.min(next_look),
                None => next_tick,
            };
            let timeout = timespec(until.saturating_duration_since(now));
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
                    for peer in 0..poller.connections.len() {
                        let Some(c) = lock(&poller.connections[peer]).take() else {
                            continue;
                        };
                        self.forget(poller, &c);
                        self.declare_failed(c.peer, Cause::Io(io::Error::other(error.to_string())));
                        self.end_reading(c.peer);
                    }
                    return;
                }
            }
            for event in &events {
                match event.data.u64() {
                    token if token != DATA && token & ROOM != 0 => {
                        self.room(poller, (token & !ROOM) as u32);
                    }
                    DATA => {
                        parked = self.data_ready(poller);
                        next_look = Instant::now() + PARKED_TICK;
                    }
                    peer => {
                        self.turn(poller, peer as usize);
                    }
                }
            }
            let now = Instant::now();
            if let Some(seen) = parked {
                if now >= next_look {
                    next_look = now + PARKED_TICK;
                    parked = match poller.look(seen) {
                        Look::Armed => None,
                        Look::Parked(waits) => Some(waits),
                    };
                }
            }
            if now >= next_tick {
                next_tick = now + tick;
                self.beat(poller, now);
                self.stuck_writes(now);
            }
        }
    }

    /// The data set's one-shot entry fired: reads the ready connections and arms it again,
    /// unless a waiting thread polls, or every ready connection is being read by another
    /// thread (then it stays parked: returns the count of waits).
    fn data_ready(&self, poller: &Poller) -> Option<u64> {
        let parked = poller.fired();
        if parked.is_some() {
            return parked;
        }
        if self.poll_data(poller, &poller.progress_turns) {
            poller.arm();
            return None;
        }
        // Every ready connection is being read by another thread (one that is not polling,
        // such as a writer waiting for room): arming again now would fire at once, over and
        // over. Parked, the set is armed again at a tick.
        poller.park()
    }

    /// The heartbeat tick: advances this rank's pulse, sends heartbeat frames that are due on
    /// data connections, tells the detector when each peer was last heard, and lets it decide
    /// (it fences the peers silent for the heartbeat timeout).
    fn beat(self: &Arc<Self>, poller: &Poller, now: Instant) {
        if let Some(inbox) = self.inbox() {
            inbox.beat();
        }
        let period = self.config().heartbeat_period;
        let mut heard = Vec::new();
        for peer in 0..poller.connections.len() {
            let Some(mut slot) = super::tcp::try_lock(&poller.connections[peer]) else {
                // Being read (it was readable: bytes came, or its end, which its reader acts
                // on): heard now. A heartbeat goes anyway (however long the reading lasts,
                // the peer keeps hearing this rank).
                heard.push((WorldRank(peer as u32), self.time_of(now)));
                self.send_frame(peer as u32, &Frame::Heartbeat);
                continue;
            };
            let Some(c) = slot.as_mut() else {
                continue;
            };
            if c.drain_until.is_some() || self.peer(c.peer).failed.load(Ordering::SeqCst) {
                drop(slot);
                self.turn(poller, peer);
                continue;
            }
            let mut due = false;
            if c.data {
                if now.duration_since(c.last_beat) >= period {
                    c.last_beat = now;
                    due = true;
                }
            } else {
                let pulse = self
                    .peer(c.peer)
                    .shm
                    .get()
                    .and_then(|lane| lane.peer_pulse());
                if pulse != c.pulse {
                    c.pulse = pulse;
                    c.last_heard = now;
                }
            }
            heard.push((WorldRank(c.peer), self.time_of(c.last_heard)));
            drop(slot);
            if due {
                self.send_frame(peer as u32, &Frame::Heartbeat);
            }
        }
        {
            let mut detector = lock(&self.detector);
            for (peer, at) in heard {
                detector.heard(peer, at);
            }
        }
        self.detector_tick();
    }

    /// A write that could not wait left bytes for `peer` in its writer (`Peer::flush`): the
    /// progress thread is told when the connection has room (`writer`: the writing side's
    /// descriptor, watched one-shot for room), and writes them then ([`Tcp::room`]).
    pub(super) fn want_room(&self, peer: u32, writer: &Stream) {
        let Some(poller) = self.poller.get().and_then(Option::as_deref) else {
            return; // reader threads only: the next flush or blocking send writes them
        };
        let token = epoll::EventData::new_u64(ROOM | u64::from(peer));
        let flags = epoll::EventFlags::OUT | epoll::EventFlags::ONESHOT;
        if epoll::modify(&poller.epoll, writer, token, flags).is_err() {
            let _ = epoll::add(&poller.epoll, writer, token, flags);
        }
    }

    /// `peer`'s connection has room: writes what waits for it, as much as fits (and asks to
    /// be told again if some is left). A thread holding the writer writes it itself.
    fn room(&self, _poller: &Poller, peer: u32) {
        let Some(p) = self.peers_get(peer) else {
            return;
        };
        let written = {
            let Some(mut guard) = super::tcp::try_lock(&p.writer) else {
                // Its holder writes what waits once it lets go (`Peer::flush`).
                p.room_missed.store(true, Ordering::SeqCst);
                return;
            };
            let Some(writer) = guard.as_mut() else {
                return;
            };
            match writer.write_some() {
                Ok(true) => Ok(()),
                Ok(false) => {
                    self.want_room(peer, &writer.stream);
                    return;
                }
                Err(e) => Err(e),
            }
        };
        match written.and_then(|()| p.flush(self, peer)) {
            Ok(()) => {}
            Err(e) => self.declare_failed(peer, Cause::Io(e)),
        }
    }

    /// Fences the peers whose connection took none of the bytes waiting for it for the
    /// heartbeat timeout (a write stuck that long, as a blocking write with `SO_SNDTIMEO`).
    fn stuck_writes(&self, now: Instant) {
        for peer in 0..self.size() {
            let Some(p) = self
                .peers_get(peer)
                .filter(|p| !p.failed.load(Ordering::SeqCst))
            else {
                continue;
            };
            let stuck = super::tcp::try_lock(&p.writer).is_some_and(|guard| {
                guard
                    .as_ref()
                    .and_then(|w| w.stuck_since)
                    .is_some_and(|since| {
                        now.duration_since(since) >= self.config().heartbeat_timeout
                    })
            });
            if stuck {
                self.declare_failed(peer, Cause::Io(io::ErrorKind::TimedOut.into()));
            } else if let Err(e) = p.flush(self, peer) {
                // What others queued, or a missed wake-up left, while this looked.
                self.declare_failed(peer, Cause::Io(e));
            }
        }
    }

    /// Takes `c` out of its `epoll` set.
    fn forget(&self, poller: &Poller, c: &Connection) {
        let set = if c.data { &poller.data } else { &poller.epoll };
        let _ = epoll::delete(set, &c.stream);
        if c.data {
            poller.data_connections.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Serves one connection a turn, unless another thread is reading it (returns whether it
    /// did); removes it when its reading is over.
    fn turn(&self, poller: &Poller, peer: usize) -> bool {
        let Some(slot) = poller.connections.get(peer) else {
            return false;
        };
        let Some(mut slot) = super::tcp::try_lock(slot) else {
            return false; // its reader delivers what is there
        };
        let Some(c) = slot.as_mut() else {
            return false;
        };
        if let Turn::Done = self.read_some(c) {
            let c = slot.take().expect("checked above");
            drop(slot);
            self.forget(poller, &c);
            self.end_reading(c.peer);
        }
        true
    }

    /// Up to [`READS_PER_TURN`] reads of one connection and every frame they complete, as
    /// `Tcp::read_until_fenced` and `Tcp::drain` take them.
    fn read_some(&self, c: &mut Connection) -> Turn {
        let peer = c.peer;
        // A read shorter than asked for emptied the socket: the frames it completed are taken,
        // and the turn ends without another read that would find nothing (a system call per
        // message saved; level-triggered readiness brings the connection back).
        let mut drained = false;
        let mut reads = 0;
        loop {
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
                        self.progress(|| self.endpoint().deliver(WorldRank(peer), packet));
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
                Ok(None) if drained || reads == READS_PER_TURN => return Turn::Open,
                Ok(None) => match read_more(c, &mut reads, &mut drained) {
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
    }

    /// The peer's connection ended, failed, fell silent or carried bad input: it is suspected,
    /// and, when the connection ended, its process checked on a thread of its own.
    fn connection_ended(&self, peer: u32, cause: Cause) {
        let ended = matches!(cause, Cause::Closed | Cause::Io(_));
        self.declare_failed(peer, cause);
        if let (true, Some(tcp)) = (ended, self.this()) {
            let _ = std::thread::Builder::new()
                .name("rt-confirm".into())
                .spawn(move || tcp.confirm_if_ended(peer));
        }
    }

    /// The reading of `peer`'s connection is over (`Tcp::read_loop`'s end).
    fn end_reading(&self, peer: u32) {
        lock(&self.detector).unwatch(WorldRank(peer));
        self.drain_lane(peer, true);
        self.peer(peer).reading.store(false, Ordering::SeqCst);
        self.tell_engine(peer);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::net::UnixStream;

    /// Events of the progress thread's set, without waiting.
    fn progress_events(poller: &Poller) -> Vec<u64> {
        let mut events = [epoll::Event {
            flags: epoll::EventFlags::empty(),
            data: epoll::EventData::new_u64(0),
        }; 4];
        let zero = timespec(Duration::ZERO);
        let n = epoll::wait(&poller.epoll, &mut events[..], Some(&zero)).unwrap();
        events[..n].iter().map(|e| e.data.u64()).collect()
    }

    /// A poller with one data socket; returns the socket's other end.
    fn poller_with_socket() -> (Poller, UnixStream, UnixStream) {
        let poller = Poller::new(2).unwrap();
        let (ours, theirs) = UnixStream::pair().unwrap();
        epoll::add(
            &poller.data,
            &ours,
            epoll::EventData::new_u64(1),
            epoll::EventFlags::IN,
        )
        .unwrap();
        (poller, ours, theirs)
    }

    /// While a thread polls the data set, the progress thread hears of its sockets once, then
    /// not again however many messages come (no wake-up per message); a quick wait that ends
    /// leaves it so; a poller about to sleep arms the set again, and data already there wakes
    /// the progress thread at once.
    #[test]
    fn a_polled_data_set_wakes_the_progress_thread_once_until_a_poller_sleeps() {
        let (poller, _ours, mut theirs) = poller_with_socket();
        assert!(progress_events(&poller).is_empty());
        poller.begin_polling();
        theirs.write_all(b"1").unwrap();
        assert_eq!(progress_events(&poller), vec![DATA]);
        assert!(poller.fired().is_some(), "a thread polls: parked");
        for _ in 0..10 {
            theirs.write_all(b"more").unwrap();
            assert!(progress_events(&poller).is_empty(), "parked: no wake-up");
        }
        poller.end_polling(false);
        assert!(
            progress_events(&poller).is_empty(),
            "a quick wait arms nothing"
        );
        poller.begin_polling();
        poller.end_polling(true);
        assert_eq!(progress_events(&poller), vec![DATA], "a sleeper armed it");
        assert!(
            poller.fired().is_none(),
            "nobody polls: the progress thread reads"
        );
    }

    /// Two pollers: the first to sleep leaves the set parked (the other still reads); the last
    /// one arms it.
    #[test]
    fn only_the_last_poller_to_sleep_arms_the_set() {
        let (poller, _ours, mut theirs) = poller_with_socket();
        poller.begin_polling();
        poller.begin_polling();
        theirs.write_all(b"1").unwrap();
        assert_eq!(progress_events(&poller), vec![DATA]);
        assert!(poller.fired().is_some());
        poller.end_polling(true);
        assert!(progress_events(&poller).is_empty());
        poller.end_polling(true);
        assert_eq!(progress_events(&poller), vec![DATA]);
    }

    /// A parked set is armed again by the progress thread's look only after a tick in which
    /// no wait began and nobody polls: a rank that went back to computing gets its traffic
    /// read.
    #[test]
    fn a_parked_set_is_armed_again_once_waits_stop() {
        let (poller, _ours, mut theirs) = poller_with_socket();
        poller.begin_polling();
        theirs.write_all(b"1").unwrap();
        assert_eq!(progress_events(&poller), vec![DATA]);
        let seen = poller.fired().expect("parked");
        assert_eq!(
            poller.look(seen),
            Look::Parked(seen),
            "a thread still polls"
        );
        poller.end_polling(false);
        poller.begin_polling();
        poller.end_polling(false);
        let later = match poller.look(seen) {
            Look::Parked(waits) => waits,
            Look::Armed => panic!("a wait began since the last look"),
        };
        assert!(progress_events(&poller).is_empty());
        assert_eq!(poller.look(later), Look::Armed);
        assert_eq!(progress_events(&poller), vec![DATA]);
    }
}
