// SPDX-License-Identifier: MIT OR Apache-2.0
//! Recovering the application's data, not only its communicators: in-memory checkpoints with
//! copies on buddy ranks, committed by one agreement, restored after a shrink, onto replacement
//! ranks (respawn) or onto spare ranks.
//!
//! The data is cut into **slots**, one per rank of the communicator the [`Store`] starts on
//! (slot `i` is first owned by rank `i`): a block of a grid, a rank's particles, whatever the
//! application holds per rank, as bytes. A rank may own several slots after a recovery.
//!
//! - [`Store::checkpoint`] sends each slot this rank owns to `copies` buddies (the next ranks
//!   after the owner, cyclically) and takes the copies it holds for others; then every rank
//!   agrees ([`Comm::agree`]) on whether all of that arrived. Committed, the checkpoint replaces
//!   the previous one at every rank at once; not committed (a rank died during it), the previous
//!   one stands everywhere and the call returns an error at every rank.
//! - After a failure the application repairs its communicator ([`Comm::shrink`],
//!   [`Comm::respawn`], or its own communicator of survivors and spare ranks) and calls
//!   [`Store::recover`] at every survivor and [`Store::join`] at every newcomer (a replacement
//!   or a spare, which holds nothing yet). The dead ranks' slots go to the newcomers, in order
//!   (the lowest newcomer takes the slots of the lowest dead rank), and, when there are fewer
//!   newcomers than dead owners, to the first surviving buddy, which has the copy already.
//!   Every slot comes back as it was at the last committed checkpoint (every rank rolls back
//!   there), and the restored state is checkpointed again on the new communicator before the
//!   call returns, so that every slot has its copies on live ranks.
//! - A slot whose owner and every buddy died is lost: every rank gets [`Error::Lost`] with the
//!   same slots. With `copies = k`, any `k` failures between two checkpoints lose nothing.
//!
//! Every call is collective over its communicator and fault-tolerant: a failure during it makes
//! it return an error at every rank (the last step of each is an agreement), never a hang, and
//! leaves the last committed checkpoint whole, so the application can repair and recover again.
//!
//! ```
//! use runthrough::resilience::Store;
//! let universe = runthrough::local(4);
//! let faults = universe.fault_handle();
//! let outcomes = universe.run(move |world| {
//!     let mut store = Store::new(world, 1)?; // one copy of each slot, on the next rank
//!     let me = world.rank();
//!     store.checkpoint(&[(me, &[me as u8; 8])])?;
//!     if me == 2 {
//!         faults.kill(2); // rank 2 dies after the checkpoint...
//!     }
//!     assert!(world.barrier().is_err()); // ...the others see it...
//!     let shrunk = world.shrink()?; // ...repair...
//!     let restored = store.recover(&shrunk)?; // ...and get the slots back
//!     Ok::<_, runthrough::resilience::Error>(restored)
//! });
//! let rank3 = outcomes.into_iter().nth(3).unwrap().returned().unwrap().unwrap();
//! assert_eq!(rank3, vec![(2, vec![2; 8]), (3, vec![3; 8])]); // it took over rank 2's slot
//! ```

use std::collections::BTreeMap;

use crate::{Comm, Error as CommError, Op, Rank, Request};

/// Slots with their data, by slot number, ascending: what a recovery gives a rank.
pub type Slots = Vec<(u32, Vec<u8>)>;

/// What a call of the store can report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A communication error (a rank failed during the call, the communicator was revoked,
    /// ...): the call did not complete at any rank, the last committed checkpoint stands.
    #[error(transparent)]
    Comm(#[from] CommError),
    /// The call did not complete: some rank could not take its part (its copies did not all
    /// arrive, or a rank gave the wrong slots); the last committed checkpoint stands.
    #[error("not committed: some rank could not take its part; the last checkpoint stands")]
    NotCommitted,
    /// These slots are lost: their owner and every rank holding a copy failed since the last
    /// committed checkpoint. Every rank gets the same slots.
    #[error("slots {slots:?} are lost: their owner and every rank holding a copy failed")]
    Lost {
        /// The lost slots.
        slots: Vec<u32>,
    },
    /// Wrong use at this rank (other ranks get [`Error::NotCommitted`]).
    #[error("{0}")]
    Usage(String),
}

/// The tag of the store's messages (on its own communicator, so no application message meets
/// them): the checkpoint attempt's number keeps the messages of an abandoned attempt out of
/// the next one's.
fn tag_of(attempt: u32) -> i32 {
    (attempt % (1 << 20)) as i32
}

/// The tag of the slots a recovery sends to newcomers (above every checkpoint's tag).
const RECOVERY_TAG: i32 = 1 << 20;

/// A slot on the wire is two messages on one tag (a pair stays in order: messages between two
/// ranks on one tag are not overtaken): a header (the slot, the checkpoint version, whether
/// the sender has the data: 0 if it gave up, and the receiver's part fails), then, if it has,
/// the data itself, sent from the caller's buffer and received into the vector the store
/// keeps (no copy of its own on either side).
fn header_of(slot: u32, version: u64, has_data: bool) -> [u8; 13] {
    let mut header = [0u8; 13];
    header[0..4].copy_from_slice(&slot.to_le_bytes());
    header[4..12].copy_from_slice(&version.to_le_bytes());
    header[12] = u8::from(has_data);
    header
}

/// A slot to send: a number (the slot, or the rank it goes to), its header and its data.
type Outgoing<'a> = (u32, [u8; 13], Option<&'a [u8]>);

/// Starts sending `slot` ([`header_of`]) to `to`: the requests to wait for, which borrow
/// `header` and `data`.
fn send_slot<'a>(
    comm: &'a Comm,
    to: Rank,
    tag: i32,
    header: &'a [u8; 13],
    data: Option<&'a [u8]>,
) -> Result<Vec<Request<'a>>, CommError> {
    let mut requests = vec![comm.isend(header, to, tag)?];
    if let Some(data) = data {
        requests.push(comm.isend(data, to, tag)?);
    }
    Ok(requests)
}

/// Receives a slot from `from` ([`send_slot`]): the slot and its data if the sender had the
/// data of `version`; `Ok(None)` if it gave up.
fn recv_slot(
    comm: &Comm,
    from: Rank,
    tag: i32,
    version: u64,
) -> Result<Option<(u32, Vec<u8>)>, CommError> {
    let mut header = [0u8; 13];
    comm.recv(&mut header, from, tag)?;
    let slot = u32::from_le_bytes(header[0..4].try_into().expect("4 bytes"));
    let got = u64::from_le_bytes(header[4..12].try_into().expect("8 bytes"));
    if header[12] != 1 {
        return Ok(None);
    }
    let (data, _) = comm.recv_vec::<u8>(from, tag)?;
    Ok((got == version).then_some((slot, data)))
}

/// In-memory checkpoints of an application's slots, with `copies` copies of each on other
/// ranks. See the [module documentation](self).
#[derive(Debug)]
pub struct Store {
    /// A communicator of the store's own (a duplicate of the application's).
    comm: Comm,
    copies: u32,
    /// Checkpoint attempts on `comm` (their tags).
    attempt: u32,
    /// The owner of each slot, in `comm`'s numbering.
    owners: Vec<Rank>,
    /// The last committed checkpoint (version 0: none yet).
    committed: Committed,
}

/// What the last committed checkpoint left at this rank.
#[derive(Debug, Clone, Default)]
struct Committed {
    version: u64,
    /// The world ranks of the communicator it was taken on, in its order.
    layout: Vec<u32>,
    /// Each slot's owner then, as an index into `layout`.
    owners: Vec<Rank>,
    /// The data of the slots this rank owned.
    mine: BTreeMap<u32, Vec<u8>>,
    /// The copies it held for others.
    held: BTreeMap<u32, Vec<u8>>,
}

impl Store {
    /// A store for the slots of `comm`'s ranks (slot `i` owned by rank `i`), keeping `copies`
    /// copies of each (at most the other ranks' number). Collective over `comm` (it duplicates
    /// it). Nothing is committed until the first [`Store::checkpoint`].
    ///
    /// # Errors
    /// `copies` of 0 ([`Error::Usage`]); the errors of [`Comm::dup`].
    pub fn new(comm: &Comm, copies: u32) -> Result<Store, Error> {
        Store::empty(comm, copies, (0..comm.size()).collect())
    }

    /// A store on a duplicate of `comm` with these owners and nothing committed.
    fn empty(comm: &Comm, copies: u32, owners: Vec<Rank>) -> Result<Store, Error> {
        if copies == 0 {
            return Err(Error::Usage(
                "a store keeps at least one copy of each slot".into(),
            ));
        }
        Ok(Store {
            comm: comm.dup()?,
            copies,
            attempt: 0,
            owners,
            committed: Committed::default(),
        })
    }

    /// The slots this rank owns now, in ascending order.
    pub fn owned(&self) -> Vec<u32> {
        let me = self.comm.rank();
        (0..self.owners.len() as u32)
            .filter(|&s| self.owners[s as usize] == me)
            .collect()
    }

    /// The owner of each slot, in the numbering of the communicator the store runs on now.
    pub fn owners(&self) -> &[Rank] {
        &self.owners
    }

    /// The version of the last committed checkpoint (1 for the first, 0 before any).
    pub fn version(&self) -> u64 {
        self.committed.version
    }

    /// Copies of each slot kept on other ranks.
    pub fn copies(&self) -> u32 {
        self.copies
    }

    /// The ranks that keep copies of `owner`'s slots: the next ones after it, cyclically.
    fn buddies(owner: usize, size: usize, copies: u32) -> impl Iterator<Item = usize> {
        let count = (copies as usize).min(size.saturating_sub(1));
        (1..=count).map(move |i| (owner + i) % size)
    }

    /// Checkpoints this rank's slots: `data` holds exactly the slots of [`Store::owned`], each
    /// once. Collective over the store's communicator. Returns the new version once every rank
    /// has committed it.
    ///
    /// # Errors
    /// [`Error::Comm`] when a rank failed during the checkpoint (or the communicator was
    /// revoked), [`Error::NotCommitted`] when a rank could not take its part, at every rank:
    /// the previous checkpoint stands. [`Error::Usage`] at a rank whose `data` is not its
    /// slots (the others get [`Error::NotCommitted`]).
    pub fn checkpoint(&mut self, data: &[(u32, &[u8])]) -> Result<u64, Error> {
        let owned = self.owned();
        let mut given: Vec<u32> = data.iter().map(|&(s, _)| s).collect();
        given.sort_unstable();
        let usage = (given != owned).then(|| {
            Error::Usage(format!(
                "checkpoint: this rank owns slots {owned:?}, the data is for {given:?}"
            ))
        });
        let data: BTreeMap<u32, &[u8]> = data.iter().copied().collect();
        let mine = usage.is_none().then_some(&data);
        match self.exchange(mine) {
            Ok(held) => {
                // The previous checkpoint's buffers are reused where a slot kept its length
                // (no new pages to fault in for a large slot).
                let mut previous = std::mem::take(&mut self.committed.mine);
                let mine = data
                    .iter()
                    .map(|(&slot, bytes)| match previous.remove(&slot) {
                        Some(mut kept) if kept.len() == bytes.len() => {
                            kept.copy_from_slice(bytes);
                            (slot, kept)
                        }
                        _ => (slot, bytes.to_vec()),
                    })
                    .collect();
                self.committed = Committed {
                    version: self.committed.version + 1,
                    layout: self.comm.group().world_ranks().to_vec(),
                    owners: self.owners.clone(),
                    mine,
                    held,
                };
                Ok(self.committed.version)
            }
            Err(e) => Err(usage.unwrap_or(e)),
        }
    }

    /// Takes part in a checkpoint without data, at a rank that cannot give its slots (its
    /// part of the computation failed): every rank's checkpoint then fails alike
    /// ([`Error::NotCommitted`] or [`Error::Comm`]), and the previous one stands.
    ///
    /// # Errors
    /// Always: the checkpoint is not committed.
    pub fn skip_checkpoint(&mut self) -> Result<u64, Error> {
        self.exchange(None)?;
        Err(Error::NotCommitted)
    }

    /// Sends this rank's slots (`mine`; `None`: it gives up) to their buddies, takes the copies
    /// it holds for others, and agrees on whether every rank got all of its part. The copies
    /// received if the agreement says yes.
    fn exchange(
        &mut self,
        mine: Option<&BTreeMap<u32, &[u8]>>,
    ) -> Result<BTreeMap<u32, Vec<u8>>, Error> {
        let (size, me) = (self.comm.size() as usize, self.comm.rank() as usize);
        let version = self.committed.version + 1;
        let tag = tag_of(self.attempt);
        self.attempt += 1;
        let headers: Vec<Outgoing<'_>> = self
            .owned()
            .into_iter()
            .map(|slot| {
                let data = mine.and_then(|m| m.get(&slot).copied());
                (slot, header_of(slot, version, data.is_some()), data)
            })
            .collect();
        let mut ok = mine.is_some();
        let mut sends: Vec<Request<'_>> = Vec::new();
        for (_, header, data) in &headers {
            for buddy in Self::buddies(me, size, self.copies) {
                match send_slot(&self.comm, buddy as Rank, tag, header, *data) {
                    Ok(requests) => sends.extend(requests),
                    Err(_) => ok = false,
                }
            }
        }
        let mut held = BTreeMap::new();
        for owner in (0..size).filter(|&o| o != me) {
            if !Self::buddies(owner, size, self.copies).any(|b| b == me) {
                continue;
            }
            let slots = self.owners.iter().filter(|&&o| o as usize == owner).count();
            for _ in 0..slots {
                match recv_slot(&self.comm, owner as Rank, tag, version) {
                    Ok(Some((slot, bytes)))
                        if self.owners.get(slot as usize) == Some(&(owner as Rank)) =>
                    {
                        held.insert(slot, bytes);
                    }
                    Ok(_) => ok = false,
                    Err(_) => {
                        ok = false;
                        break; // nothing more comes from a failed owner
                    }
                }
            }
        }
        for request in &mut sends {
            if request.wait().is_err() {
                ok = false;
            }
        }
        drop(sends);
        match self.comm.agree(u32::from(ok))? {
            1 => Ok(held),
            _ => Err(Error::NotCommitted),
        }
    }

    /// Restores the slots after a failure, at a rank that survived it, over `comm`: the
    /// repaired communicator (of [`Comm::shrink`], [`Comm::respawn`], or the survivors and some
    /// spare ranks in any order), whose newcomers call [`Store::join`] at the same time.
    /// Collective over `comm`. Every slot rolls back to the last committed checkpoint; the
    /// result is this rank's slots (its own and those it takes over from dead ranks) with
    /// their data, and the restored state is checkpointed again on `comm` (its version is
    /// [`Store::version`] afterwards) before the call returns.
    ///
    /// # Errors
    /// [`Error::Lost`] at every rank when a slot's owner and all its copies' holders died;
    /// [`Error::Comm`] / [`Error::NotCommitted`] at every rank when a failure interrupts the
    /// recovery (repair again and call again: the last committed checkpoint is still whole);
    /// [`Error::Usage`] before any checkpoint was committed, or at a rank that was not in the
    /// communicator of the last one.
    pub fn recover(&mut self, comm: &Comm) -> Result<Slots, Error> {
        let committed = &self.committed;
        let group = comm.group();
        let me_world = group.world_ranks()[comm.rank() as usize];
        if committed.version == 0 {
            return Err(Error::Usage("recover: no checkpoint was committed".into()));
        }
        if !committed.layout.contains(&me_world) {
            return Err(Error::Usage(
                "recover: this rank was not in the last checkpoint (a newcomer calls join)".into(),
            ));
        }
        let plan = Plan::new(committed, self.copies, comm);
        let private = comm.dup()?;
        // The plan goes to the newcomers from the lowest survivor (newcomers learn who that
        // is from the all-reduce that every rank joins).
        let mut header = plan.header();
        let shared = share_plan(&private, Some(plan.root), &mut header);
        let mut ok = shared.is_ok();
        // Each adopted slot's data goes to its newcomer from the first surviving holder.
        let me = comm.rank();
        let sends: Vec<Outgoing<'_>> = plan
            .moves
            .iter()
            .filter(|(_, &(_, source))| source == Some(me))
            .map(|(slot, &(owner, _))| {
                let data = committed.held.get(slot).map(Vec::as_slice);
                (
                    owner,
                    header_of(*slot, committed.version, data.is_some()),
                    data,
                )
            })
            .collect();
        let mut requests = Vec::new();
        for (to, header, data) in &sends {
            match send_slot(&private, *to, RECOVERY_TAG, header, *data) {
                Ok(r) => requests.extend(r),
                Err(_) => ok = false,
            }
        }
        for r in &mut requests {
            ok &= r.wait().is_ok();
        }
        drop(requests);
        let restored: Slots = plan
            .new_owners
            .iter()
            .enumerate()
            .filter(|&(_, &o)| o == me)
            .filter_map(|(slot, _)| {
                let slot = slot as u32;
                let data = committed
                    .mine
                    .get(&slot)
                    .or_else(|| committed.held.get(&slot));
                data.map(|d| (slot, d.clone()))
            })
            .collect();
        ok &= restored.len() == plan.new_owners.iter().filter(|&&o| o == me).count()
            || !plan.lost.is_empty();
        self.comm = private;
        self.finish(plan.lost, plan.new_owners, restored, ok)
    }

    /// Shrinks `comm` and recovers over the survivors ([`Store::recover`]), again as long as
    /// a further failure interrupts the recovery (a rank that died during the shrink may be in
    /// the shrunk communicator; its failure then breaks the recovery at every rank alike).
    /// Collective over `comm`'s survivors. The communicator the store recovered over, and this
    /// rank's slots.
    ///
    /// # Errors
    /// [`Error::Lost`], [`Error::Usage`] as [`Store::recover`]; the errors of [`Comm::shrink`];
    /// the last recovery's error after one attempt per rank of `comm`.
    pub fn recover_by_shrinking(&mut self, comm: &Comm) -> Result<(Comm, Slots), Error> {
        let mut current = comm.shrink()?;
        let mut last = Error::NotCommitted;
        for _ in 0..comm.size() {
            match self.recover(&current) {
                Ok(restored) => return Ok((current, restored)),
                Err(e @ (Error::Comm(_) | Error::NotCommitted)) => {
                    last = e;
                    current = current.shrink()?;
                }
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }

    /// A newcomer's part of [`Store::recover`] (a replacement rank or a spare that takes a dead
    /// rank's place), on the same communicator at the same time: a store for `copies` copies
    /// (the survivors' number) holding this rank's slots of the restored checkpoint, which it
    /// returns.
    ///
    /// # Errors
    /// Those of [`Store::recover`].
    pub fn join(comm: &Comm, copies: u32) -> Result<(Store, Slots), Error> {
        let mut store = Store::empty(comm, copies, Vec::new())?;
        let mut words = Vec::new();
        let header = share_plan(&store.comm, None, &mut words)
            .ok()
            .and_then(|()| Header::read(&words));
        let Some(header) = header else {
            let restored = store.finish(Vec::new(), Vec::new(), Vec::new(), false);
            return restored.map(|r| (store, r));
        };
        store.committed.version = header.version;
        let me = comm.rank();
        let mut ok = true;
        let mut restored = Vec::new();
        if header.lost.is_empty() {
            for (slot, &owner) in header.owners.iter().enumerate() {
                if owner != me {
                    continue;
                }
                match recv_slot(
                    &store.comm,
                    header.sources[slot],
                    RECOVERY_TAG,
                    header.version,
                ) {
                    Ok(Some((got, bytes))) if got == slot as u32 => restored.push((got, bytes)),
                    _ => ok = false,
                }
            }
        }
        let restored = store.finish(header.lost, header.owners, restored, ok);
        restored.map(|r| (store, r))
    }

    /// The end of a recovery at every rank: agrees that every rank has its slots, then
    /// checkpoints them on the new communicator.
    fn finish(
        &mut self,
        lost: Vec<u32>,
        owners: Vec<Rank>,
        restored: Slots,
        ok: bool,
    ) -> Result<Slots, Error> {
        let agreed = self.comm.agree(u32::from(ok));
        if !lost.is_empty() {
            return Err(Error::Lost { slots: lost });
        }
        match agreed? {
            1 => {}
            _ => return Err(Error::NotCommitted),
        }
        self.owners = owners;
        self.attempt = 0;
        let data: Vec<(u32, &[u8])> = restored.iter().map(|(s, d)| (*s, d.as_slice())).collect();
        self.checkpoint(&data)?;
        Ok(restored)
    }
}

/// Where every slot goes in a recovery, as every survivor computes it from the last committed
/// checkpoint and the repaired communicator's members.
#[derive(Debug)]
struct Plan {
    version: u64,
    /// The lowest survivor (it tells the newcomers the plan).
    root: Rank,
    /// Each slot's owner in the repaired communicator.
    new_owners: Vec<Rank>,
    /// The slots whose owner died: new owner and the surviving rank that sends it its data
    /// (`None` when the new owner has it).
    moves: BTreeMap<u32, (Rank, Option<Rank>)>,
    lost: Vec<u32>,
}

impl Plan {
    fn new(committed: &Committed, copies: u32, comm: &Comm) -> Plan {
        let group = comm.group();
        let alive = |world: u32| group.rank_of_world(world);
        let layout = &committed.layout;
        let old_size = layout.len();
        let newcomers: Vec<Rank> = (0..comm.size())
            .filter(|&r| !layout.contains(&group.world_ranks()[r as usize]))
            .collect();
        // The dead owners, lowest first, and who takes each one's slots.
        let mut dead_owners: Vec<usize> = committed
            .owners
            .iter()
            .map(|&o| o as usize)
            .filter(|&o| alive(layout[o]).is_none())
            .collect();
        dead_owners.sort_unstable();
        dead_owners.dedup();
        let mut new_owners = Vec::with_capacity(committed.owners.len());
        let mut moves = BTreeMap::new();
        let mut lost = Vec::new();
        for (slot, &owner) in committed.owners.iter().enumerate() {
            let slot = slot as u32;
            if let Some(rank) = alive(layout[owner as usize]) {
                new_owners.push(rank);
                continue;
            }
            let holder =
                Store::buddies(owner as usize, old_size, copies).find_map(|b| alive(layout[b]));
            let order = dead_owners
                .iter()
                .position(|&o| o == owner as usize)
                .unwrap();
            let taker = newcomers.get(order).copied();
            match (holder, taker) {
                (None, taker) => {
                    lost.push(slot);
                    new_owners.push(taker.unwrap_or(0));
                }
                (Some(holder), Some(newcomer)) => {
                    new_owners.push(newcomer);
                    moves.insert(slot, (newcomer, Some(holder)));
                }
                (Some(holder), None) => {
                    new_owners.push(holder);
                    moves.insert(slot, (holder, None));
                }
            }
        }
        let root = (0..comm.size())
            .find(|r| !newcomers.contains(r))
            .expect("the calling survivor is in the communicator");
        Plan {
            version: committed.version,
            root,
            new_owners,
            moves,
            lost,
        }
    }

    /// What the newcomers need: [`Header`]'s words.
    fn header(&self) -> Vec<u64> {
        let mut words = vec![
            self.version,
            self.new_owners.len() as u64,
            self.lost.len() as u64,
        ];
        words.extend(self.new_owners.iter().map(|&o| u64::from(o)));
        for slot in 0..self.new_owners.len() as u32 {
            let source = self.moves.get(&slot).and_then(|&(_, s)| s).unwrap_or(0);
            words.push(u64::from(source));
        }
        words.extend(self.lost.iter().map(|&s| u64::from(s)));
        words
    }
}

/// A recovery plan as a newcomer reads it.
struct Header {
    version: u64,
    owners: Vec<Rank>,
    sources: Vec<Rank>,
    lost: Vec<u32>,
}

impl Header {
    fn read(words: &[u64]) -> Option<Header> {
        let (&version, rest) = words.split_first()?;
        let (&slots, rest) = rest.split_first()?;
        let (&lost, rest) = rest.split_first()?;
        let (slots, lost) = (usize::try_from(slots).ok()?, usize::try_from(lost).ok()?);
        if rest.len() != 2 * slots + lost {
            return None;
        }
        let rank = |w: &u64| Rank::try_from(*w).ok();
        Some(Header {
            version,
            owners: rest[..slots].iter().map(rank).collect::<Option<_>>()?,
            sources: rest[slots..2 * slots]
                .iter()
                .map(rank)
                .collect::<Option<_>>()?,
            lost: rest[2 * slots..].iter().map(|&w| w as u32).collect(),
        })
    }
}

/// Gives every rank of `comm` the plan's words (`words` at the survivors, filled in at the
/// newcomers): an all-reduce finds the root (survivors know it, newcomers give 0), then the
/// root broadcasts the length and the words.
fn share_plan(comm: &Comm, root: Option<Rank>, words: &mut Vec<u64>) -> Result<(), CommError> {
    let mut found = [0u32];
    comm.all_reduce(&[root.unwrap_or(0)], &mut found, Op::Max)?;
    let mut len = [words.len() as u64];
    comm.broadcast(&mut len, found[0])?;
    words.resize(len[0] as usize, 0);
    comm.broadcast(words, found[0])
}

/// How [`run_loop`] runs: `iterations` steps, a checkpoint every `checkpoint_every` of them
/// and after the last, `copies` copies of each slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopConfig {
    /// Steps of the loop.
    pub iterations: u64,
    /// A checkpoint after every this many steps (and after the last).
    pub checkpoint_every: u64,
    /// Copies of each slot ([`Store::new`]).
    pub copies: u32,
}

/// What [`run_loop`] ends with.
#[derive(Debug)]
pub struct Finished {
    /// The communicator of the ranks that finished (the survivors of every recovery).
    pub comm: Comm,
    /// This rank's slots after the last step.
    pub slots: Slots,
    /// Recoveries the loop went through.
    pub recoveries: u32,
}

/// The global-restart pattern as a loop: every rank of `comm` starts with its slot's data
/// (`init(slot)`) and runs `step(comm, slots, iteration)` for iterations `0..iterations`,
/// checkpointing the slots every `checkpoint_every` steps. When a step fails at some rank (an
/// error from any call in it), that rank revokes the communicator, so that the others' calls
/// fail too, and skips to the next checkpoint, which then fails at every rank; every survivor
/// then shrinks, gets its slots back as they were at the last committed checkpoint (those of
/// the dead ranks included, taken over as [`Store::recover`] says) and runs the steps again from
/// that checkpoint's iteration, with the shrunk communicator. `step` must be deterministic in
/// its slots for the result to be the failure-free one. Collective over `comm`.
///
/// ```
/// use runthrough::resilience::{run_loop, LoopConfig};
/// let config = LoopConfig { iterations: 10, checkpoint_every: 3, copies: 1 };
/// let universe = runthrough::local(4).kill_at_operation(1, 20);
/// let outcomes = universe.run(|world| {
///     // Each slot is a counter; each step adds the sum of all counters over the ranks.
///     let finished = run_loop(world, &config, |_slot| 1u64.to_le_bytes().to_vec(), |comm, slots, _| {
///         let mine: u64 = slots.iter().map(|(_, d)| u64::from_le_bytes(d[..8].try_into().unwrap())).sum();
///         let mut total = [0u64];
///         comm.all_reduce(&[mine], &mut total, runthrough::Op::Sum)?;
///         for (_, data) in slots.iter_mut() {
///             let value = u64::from_le_bytes(data[..8].try_into().unwrap()) + total[0];
///             data.copy_from_slice(&value.to_le_bytes());
///         }
///         Ok(())
///     })?;
///     Ok::<_, runthrough::resilience::Error>((finished.slots, finished.recoveries))
/// });
/// assert!(outcomes[1].is_killed());
/// let (slots, recoveries) = outcomes.into_iter().nth(2).unwrap().returned().unwrap().unwrap();
/// assert_eq!(recoveries, 1);
/// assert_eq!(slots.len(), 2); // rank 2 took over rank 1's slot
/// ```
///
/// # Errors
/// [`Error::Lost`] when a recovery finds a slot lost, [`Error::Usage`] for a `checkpoint_every`
/// of 0 or a failure before the first checkpoint committed; the errors of the recoveries.
pub fn run_loop<I, F>(
    comm: &Comm,
    config: &LoopConfig,
    init: I,
    mut step: F,
) -> Result<Finished, Error>
where
    I: Fn(u32) -> Vec<u8>,
    F: FnMut(&Comm, &mut Slots, u64) -> Result<(), CommError>,
{
    if config.checkpoint_every == 0 {
        return Err(Error::Usage("run_loop: checkpoint_every is 0".into()));
    }
    let mut comm = comm.dup()?;
    let mut store = Store::new(&comm, config.copies)?;
    let mut slots: Slots = store.owned().into_iter().map(|s| (s, init(s))).collect();
    let mut iteration = 0;
    let mut recoveries = 0;
    let mut failed = stamped_checkpoint(&mut store, &slots, 0).err();
    loop {
        while failed.is_none() && iteration < config.iterations {
            if let Err(e) = step(&comm, &mut slots, iteration) {
                failed = Some(e.into());
                let _ = comm.revoke();
            }
            // A failed rank counts on to the checkpoint, where every rank learns of it.
            let mut ended = iteration + 1;
            while failed.is_some() && !boundary(ended, config) {
                ended += 1;
            }
            iteration = ended;
            if boundary(iteration, config) {
                let result = match failed {
                    None => stamped_checkpoint(&mut store, &slots, iteration),
                    Some(_) => store.skip_checkpoint(),
                };
                if let Err(e) = result {
                    failed = Some(e);
                }
            }
        }
        match failed.take() {
            None => {
                return Ok(Finished {
                    comm,
                    slots,
                    recoveries,
                })
            }
            Some(e @ (Error::Lost { .. } | Error::Usage(_))) => return Err(e),
            Some(_) => {
                recoveries += 1;
                let (repaired, restored) = store.recover_by_shrinking(&comm)?;
                comm = repaired;
                let mut at = None;
                slots = restored
                    .into_iter()
                    .map(|(slot, data)| {
                        let (stamp, rest) = data.split_at(8.min(data.len()));
                        at = stamp.try_into().ok().map(u64::from_le_bytes);
                        (slot, rest.to_vec())
                    })
                    .collect();
                // Every survivor owns its own slot at least, and every slot holds the
                // iteration of the one committed checkpoint.
                iteration = at.unwrap_or(0);
            }
        }
    }
}

/// Whether a checkpoint follows step `iteration` (counted from 1).
fn boundary(iteration: u64, config: &LoopConfig) -> bool {
    iteration.is_multiple_of(config.checkpoint_every) || iteration >= config.iterations
}

/// A checkpoint of `slots`, each prefixed with the iteration it holds.
fn stamped_checkpoint(store: &mut Store, slots: &Slots, iteration: u64) -> Result<u64, Error> {
    let stamped: Vec<(u32, Vec<u8>)> = slots
        .iter()
        .map(|(slot, data)| {
            let mut bytes = iteration.to_le_bytes().to_vec();
            bytes.extend_from_slice(data);
            (*slot, bytes)
        })
        .collect();
    let parts: Vec<(u32, &[u8])> = stamped.iter().map(|(s, d)| (*s, d.as_slice())).collect();
    store.checkpoint(&parts)
}
