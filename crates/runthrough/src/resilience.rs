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
//!   after the owner, cyclically, or by host: below) and takes the copies it holds for others; then every rank
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
//! With **host-aware placement** ([`Store::with_hosts`]), each rank gives a key of its host, and
//! the copies of a slot go to ranks on other hosts than its owner's and each other's while
//! there are any, so that losing one whole host (all of its ranks at once) loses no slot; the
//! protocol is the same, only the choice of buddies differs.
//!
//! Instead of whole copies, a store can keep **XOR parity** ([`Redundancy::Xor`],
//! [`Store::with_redundancy`]): the ranks of the communicator are cut into consecutive groups
//! of `group` ranks, and each group keeps enough parity to rebuild any one of its ranks, for
//! `1 / (group - 1)` of the memory and traffic of one copy. The checkpoint, its agreement and
//! the recovery are the same calls with the same guarantees; only what travels differs.
//!
//! - **Groups.** Ranks `0..group`, `group..2·group`, ... of the communicator the checkpoint is
//!   taken on; a last group of fewer than `group` ranks keeps its size, except a last group of
//!   one rank, which joins the group before it (a rank alone could not be rebuilt). A group
//!   larger than the communicator is the whole communicator; a communicator of one rank has
//!   no parity (its death leaves nobody to recover). After a recovery the groups are cut again
//!   on the new communicator.
//! - **Blocks and parity, spread over the group (as the stripes of RAID-5).** A rank's block
//!   is its slots end to end, in slot order. In a group of `m` ranks, each rank cuts its block
//!   into `m - 1` chunks of equal size (the last ones shorter or empty) and sends its `i`-th
//!   chunk to the `i + 1`-th rank after it in the group, cyclically; every rank keeps the XOR
//!   of the `m - 1` chunks it receives, shorter chunks padded with zeros, and the slot lengths
//!   of every other member (they travel with the chunks). A rank's chunks are all in the
//!   parity of *different* ranks, none its own: when one rank of the group dies, each of its
//!   chunks is the XOR of a surviving parity block with the survivors' other chunks in it, and
//!   its own parity block, lost with it, protected only the others' chunks, which are alive.
//! - **Recovery.** A dead rank's slots go to a newcomer as with copies, or else to the next
//!   surviving rank of its group (cyclically). Every survivor of the group sends that rank its
//!   share (its parity block or its chunk in each of the dead block's parity blocks, cut to
//!   the chunk's length), whose XOR is the dead block, split into its slots by their recorded
//!   lengths: bit for bit the data of the last committed checkpoint. If two ranks or more of
//!   one group died, the slots of its dead ranks are lost: [`Error::Lost`] at every rank.
//!
//! [`Redundancy::ReedSolomon`] keeps `parity` code chunks per stripe instead of one XOR, with
//! the same layout generalized: in a group of `m` ranks, stripe `s` has its
//! code chunks at the members `s .. s + parity` and a data chunk from each other member; each
//! rank cuts its block into `m - parity` chunks, sends each to its stripe's holders, and each
//! holder encodes its stripes' chunks (padded to the longest, rounded up to an even length)
//! and keeps its own code chunk. Any `parity` deaths in a group leave at least `m - parity`
//! chunks of every stripe; the rank that rebuilds a dead block gets every survivor's chunk of
//! the stripes the dead rank had data in and decodes them.
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
    /// committed checkpoint (with parity: their owner and another rank of its group). Every
    /// rank gets the same slots.
    #[error("slots {slots:?} are lost: their owner and every rank that could rebuild them failed")]
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

/// How a [`Store`] keeps each slot safe on other ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Redundancy {
    /// Whole copies of each slot on the next `k` ranks after its owner, cyclically: any `k`
    /// failures between two checkpoints lose nothing; `k` times the data in memory and on the
    /// wire. At least 1.
    Copies(u32),
    /// XOR parity over consecutive groups of `group` ranks, spread over each group's members
    /// (see the [module documentation](self)): one failure per group between two checkpoints
    /// loses nothing; `1 / (group - 1)` of the data in memory and on the wire. At least 2
    /// (a group of 2 is one copy on the other member).
    Xor {
        /// Ranks per group.
        group: u32,
    },
    /// Reed-Solomon parity over consecutive groups of `group` ranks, spread over each group's
    /// members like [`Redundancy::Xor`]'s: any `parity` failures per group between two
    /// checkpoints lose nothing; `parity / (group - parity)` of the data in memory. `parity` at
    /// least 1 and less than `group` (a smaller last group keeps at most one parity fewer than
    /// its ranks). With `parity` 1 it keeps what [`Redundancy::Xor`] keeps, computed otherwise.
    ReedSolomon {
        /// Ranks per group.
        group: u32,
        /// Failures per group it survives.
        parity: u32,
    },
}

impl Redundancy {
    /// Why this redundancy cannot be used, if it cannot.
    fn problem(self) -> Option<String> {
        match self {
            Redundancy::Copies(0) => Some("a store keeps at least one copy of each slot".into()),
            Redundancy::Xor { group } if group < 2 => Some(format!(
                "XOR parity needs groups of at least 2 ranks, not {group}"
            )),
            Redundancy::ReedSolomon { group, parity } if parity == 0 || parity >= group => {
                Some(format!(
                    "Reed-Solomon parity needs 1 to group - 1 parity blocks, not {parity} for groups of {group}"
                ))
            }
            Redundancy::ReedSolomon { group, parity }
                if !reed_solomon_simd::ReedSolomonEncoder::supports(
                    (group - parity) as usize,
                    parity as usize,
                ) =>
            {
                Some(format!(
                    "Reed-Solomon codes of {group} shards with {parity} of parity are not supported"
                ))
            }
            _ => None,
        }
    }

    /// With parity: the group size and the failures per group it survives.
    fn parity(self) -> Option<(u32, u32)> {
        match self {
            Redundancy::Copies(_) => None,
            Redundancy::Xor { group } => Some((group, 1)),
            Redundancy::ReedSolomon { group, parity } => Some((group, parity)),
        }
    }

    /// Three words that name it (for comparing every rank's and telling newcomers).
    fn words(self) -> [u64; 3] {
        match self {
            Redundancy::Copies(k) => [0, u64::from(k), 0],
            Redundancy::Xor { group } => [1, u64::from(group), 0],
            Redundancy::ReedSolomon { group, parity } => [2, u64::from(group), u64::from(parity)],
        }
    }

    fn from_words(words: [u64; 3]) -> Option<Redundancy> {
        let (a, b) = (u32::try_from(words[1]).ok()?, u32::try_from(words[2]).ok()?);
        match words[0] {
            0 => Some(Redundancy::Copies(a)),
            1 => Some(Redundancy::Xor { group: a }),
            2 => Some(Redundancy::ReedSolomon {
                group: a,
                parity: b,
            }),
            _ => None,
        }
    }
}

/// The stripes of a parity group of `count` members keeping `parity` parity chunks per stripe
/// (at most `count - 1`). There are `count` stripes; stripe `s` has its parity chunks at the
/// members `s, s + 1, ..., s + parity - 1` (its holders, cyclically) and one data chunk from
/// each of the `count - parity` others (its contributors, data index `j` for member
/// `s + parity + j`); a member's chunk `i` is its data in stripe `member + 1 + i`. So a member
/// holds the parity of `parity` stripes and has data in `count - parity` others, never both in
/// one stripe: losing any `parity` members loses at most `parity` chunks of each stripe.
#[derive(Debug, Clone, Copy)]
struct Stripes {
    count: usize,
    parity: usize,
}

impl Stripes {
    fn new(count: usize, parity: u32) -> Stripes {
        Stripes {
            count,
            parity: (parity as usize).min(count.saturating_sub(1)),
        }
    }

    /// Data chunks per stripe (and chunks per block).
    fn data(self) -> usize {
        self.count - self.parity
    }

    /// The stripe of chunk `index` of member `member`.
    fn stripe_of(self, member: usize, index: usize) -> usize {
        (member + 1 + index) % self.count
    }

    /// The chunk of `member` in stripe `stripe`, if it has data there.
    fn chunk_in(self, member: usize, stripe: usize) -> Option<usize> {
        let index = (stripe + 2 * self.count - member - 1) % self.count;
        (index < self.data()).then_some(index)
    }

    /// Which parity chunk of `stripe` `member` holds, if any.
    fn holder_in(self, member: usize, stripe: usize) -> Option<usize> {
        let offset = (member + self.count - stripe) % self.count;
        (offset < self.parity).then_some(offset)
    }

    /// The data index of `member` in `stripe`, if it has data there.
    fn data_index(self, member: usize, stripe: usize) -> Option<usize> {
        let index = (member + 2 * self.count - stripe - self.parity) % self.count;
        (index < self.data()).then_some(index)
    }

    /// The length of stripe `stripe`'s chunks when the members' blocks are `lens` long: its
    /// longest data chunk, rounded up to an even length (the codec's unit); 0 if all are empty.
    fn shard_len(self, stripe: usize, lens: &[usize]) -> usize {
        let longest = (0..self.count)
            .filter_map(|m| {
                let index = self.chunk_in(m, stripe)?;
                Some(chunk(index, lens[m], self.data()).len())
            })
            .max()
            .unwrap_or(0);
        longest.next_multiple_of(2)
    }
}

/// The ranks of the parity group of `rank` in a communicator of `size` ranks cut into groups of
/// `group`: consecutive groups, the last one smaller, a last one of one rank joined to the one
/// before, a group larger than `size` the whole communicator.
fn group_of(rank: usize, size: usize, group: u32) -> std::ops::Range<usize> {
    let group = (group as usize).clamp(1, size.max(1));
    let count = size / group + usize::from(size % group >= 2);
    let index = (rank / group).min(count - 1);
    let start = index * group;
    let end = if index == count - 1 {
        size
    } else {
        start + group
    };
    start..end
}

/// The ranks that keep copies of `owner`'s slots in a communicator of `size` ranks: `copies`
/// of them (fewer when fewer other ranks are left). Without hosts (`hosts` empty), the next
/// ones after the owner, cyclically. With `hosts[rank]` every rank's host key: along the ring
/// that takes one rank of each host in turn (hosts in the order of their lowest rank), the next
/// ranks after the owner whose hosts hold no copy yet, then the next ones whatever their host
/// ([`Store::with_hosts`]). Every rank computes the same lists from the same keys.
fn buddies(owner: usize, size: usize, copies: u32, hosts: &[u64]) -> Vec<usize> {
    let count = (copies as usize).min(size.saturating_sub(1));
    if hosts.len() != size {
        return (1..=count).map(|i| (owner + i) % size).collect();
    }
    // The hosts in the order of their lowest rank, each with its ranks in order.
    let mut by_host: Vec<(u64, Vec<usize>)> = Vec::new();
    for (rank, &key) in hosts.iter().enumerate() {
        match by_host.iter_mut().find(|(k, _)| *k == key) {
            Some((_, ranks)) => ranks.push(rank),
            None => by_host.push((key, vec![rank])),
        }
    }
    let deepest = by_host.iter().map(|(_, r)| r.len()).max().unwrap_or(0);
    let ring: Vec<usize> = (0..deepest)
        .flat_map(|turn| by_host.iter().filter_map(move |(_, ranks)| ranks.get(turn)))
        .copied()
        .collect();
    let start = ring.iter().position(|&r| r == owner).unwrap_or(0);
    let after: Vec<usize> = (1..size).map(|step| ring[(start + step) % size]).collect();
    let mut chosen = Vec::with_capacity(count);
    let mut used = vec![hosts[owner]];
    for &rank in &after {
        if chosen.len() == count {
            break;
        }
        if !used.contains(&hosts[rank]) {
            used.push(hosts[rank]);
            chosen.push(rank);
        }
    }
    for &rank in &after {
        if chosen.len() == count {
            break;
        }
        if !chosen.contains(&rank) {
            chosen.push(rank);
        }
    }
    chosen
}

/// The byte range of chunk `index` of a block of `len` bytes cut into `parts` chunks.
fn chunk(index: usize, len: usize, parts: usize) -> std::ops::Range<usize> {
    let size = len.div_ceil(parts.max(1));
    (index * size).min(len)..((index + 1) * size).min(len)
}

/// The bytes `range` of the blocks `parts` put end to end: borrowed when they lie in one
/// part, else gathered; bytes past the end are left out.
fn gather<'a>(parts: &[&'a [u8]], range: std::ops::Range<usize>) -> std::borrow::Cow<'a, [u8]> {
    let mut start = 0;
    for part in parts {
        let end = start + part.len();
        if range.start >= start && range.end <= end {
            return std::borrow::Cow::Borrowed(&part[range.start - start..range.end - start]);
        }
        start = end;
    }
    let mut out = Vec::with_capacity(range.len());
    let mut start = 0;
    for part in parts {
        let end = start + part.len();
        let (from, to) = (range.start.max(start), range.end.min(end));
        if from < to {
            out.extend_from_slice(&part[from - start..to - start]);
        }
        start = end;
    }
    std::borrow::Cow::Owned(out)
}

/// `into ^= from`, `into` first padded with zeros to `from`'s length if shorter.
fn xor_into(into: &mut Vec<u8>, from: &[u8]) {
    if into.len() < from.len() {
        into.resize(from.len(), 0);
    }
    // Eight bytes at a time (the compiler makes vector instructions of it).
    let mut to = into[..from.len()].chunks_exact_mut(8);
    let mut by = from.chunks_exact(8);
    for (a, b) in (&mut to).zip(&mut by) {
        let x = u64::from_ne_bytes((&*a).try_into().expect("8 bytes"))
            ^ u64::from_ne_bytes(b.try_into().expect("8 bytes"));
        a.copy_from_slice(&x.to_ne_bytes());
    }
    for (a, b) in to.into_remainder().iter_mut().zip(by.remainder()) {
        *a ^= b;
    }
}

/// The slots of a rank's block and their lengths, in slot (and block) order.
type Table = Vec<(u32, usize)>;

/// A parity message's header: the version, whether the sender has the data, and the slot
/// table of the block the data belongs to.
fn table_header(version: u64, table: Option<&Table>) -> Vec<u8> {
    let mut header = version.to_le_bytes().to_vec();
    header.push(u8::from(table.is_some()));
    for &(slot, len) in table.into_iter().flatten() {
        header.extend_from_slice(&slot.to_le_bytes());
        header.extend_from_slice(&(len as u64).to_le_bytes());
    }
    header
}

/// Reads [`table_header`]: the table if the sender had the data of `version`.
fn read_table_header(header: &[u8], version: u64) -> Option<Table> {
    let (got, rest) = header.split_at_checked(8)?;
    let (&has_data, rest) = rest.split_first()?;
    if u64::from_le_bytes(got.try_into().ok()?) != version || has_data != 1 || rest.len() % 12 != 0
    {
        return None;
    }
    rest.chunks_exact(12)
        .map(|entry| {
            let slot = u32::from_le_bytes(entry[..4].try_into().ok()?);
            let len = usize::try_from(u64::from_le_bytes(entry[4..].try_into().ok()?)).ok()?;
            Some((slot, len))
        })
        .collect()
}

/// Receives a parity message from `from` (its header, then its data if the sender has it):
/// the sender's table and data, `Ok(None)` if it gave up or sent another version.
fn recv_parity(
    comm: &Comm,
    from: Rank,
    tag: i32,
    version: u64,
) -> Result<Option<(Table, Vec<u8>)>, CommError> {
    let (header, _) = comm.recv_vec::<u8>(from, tag)?;
    if header.get(8) != Some(&1) {
        return Ok(None);
    }
    let (data, _) = comm.recv_vec::<u8>(from, tag)?;
    Ok(read_table_header(&header, version).map(|table| (table, data)))
}

/// In-memory checkpoints of an application's slots, with `copies` copies of each on other
/// ranks or parity over groups of ranks ([`Redundancy`]). See the
/// [module documentation](self).
#[derive(Debug)]
pub struct Store {
    /// A communicator of the store's own (a duplicate of the application's).
    comm: Comm,
    redundancy: Redundancy,
    /// Checkpoint attempts on `comm` (their tags).
    attempt: u32,
    /// The owner of each slot, in `comm`'s numbering.
    owners: Vec<Rank>,
    /// The last committed checkpoint (version 0: none yet).
    committed: Committed,
    /// With host-aware placement ([`Store::with_hosts`]): this rank's host key...
    host: Option<u64>,
    /// ...and every rank's, in `comm`'s numbering (empty without).
    hosts: Vec<u64>,
}

/// What the last committed checkpoint left at this rank.
#[derive(Debug, Clone, Default)]
struct Committed {
    version: u64,
    /// The world ranks of the communicator it was taken on, in its order.
    layout: Vec<u32>,
    /// Each slot's owner then, as an index into `layout`.
    owners: Vec<Rank>,
    /// The host key of each rank of `layout` (empty without host-aware placement).
    hosts: Vec<u64>,
    /// The data of the slots this rank owned.
    mine: BTreeMap<u32, Vec<u8>>,
    /// The copies it held for others, or its parity.
    held: Held,
}

/// What a rank holds for others at a committed checkpoint.
#[derive(Debug, Clone, Default)]
struct Held {
    /// With copies: the copies of other ranks' slots, by slot.
    copies: BTreeMap<u32, Vec<u8>>,
    /// With parity: this rank's parity block (the XOR of the chunks it received)...
    parity: Vec<u8>,
    /// ...and the slot table of every member of its group, itself included, by rank in the
    /// checkpoint's communicator.
    tables: BTreeMap<Rank, Table>,
    /// With Reed-Solomon parity: this rank's parity chunk of each stripe it holds, by stripe.
    stripes: BTreeMap<usize, Vec<u8>>,
}

impl Store {
    /// A store for the slots of `comm`'s ranks (slot `i` owned by rank `i`), keeping `copies`
    /// copies of each (at most the other ranks' number). Collective over `comm` (it duplicates
    /// it). Nothing is committed until the first [`Store::checkpoint`].
    ///
    /// # Errors
    /// `copies` of 0 ([`Error::Usage`]); the errors of [`Comm::dup`].
    pub fn new(comm: &Comm, copies: u32) -> Result<Store, Error> {
        let redundancy = Redundancy::Copies(copies);
        if let Some(problem) = redundancy.problem() {
            return Err(Error::Usage(problem));
        }
        Store::empty(comm, redundancy, (0..comm.size()).collect())
    }

    /// A store for the slots of `comm`'s ranks (slot `i` owned by rank `i`) kept safe by
    /// `redundancy`: [`Redundancy::Copies`] is [`Store::new`]; [`Redundancy::Xor`] keeps
    /// parity over groups of ranks (see the [module documentation](self)). Collective over
    /// `comm`: it duplicates it and agrees on whether every rank gave the same redundancy, so
    /// that it succeeds or fails alike at every rank. Nothing is committed until the first
    /// [`Store::checkpoint`].
    ///
    /// # Errors
    /// [`Error::Usage`] at every rank when the ranks gave different redundancies, or no
    /// copies, or groups of fewer than 2 ranks, or Reed-Solomon parity of 0 or of as many
    /// blocks as the group has ranks; the errors of [`Comm::dup`], [`Comm::all_reduce`] and
    /// [`Comm::agree`].
    pub fn with_redundancy(comm: &Comm, redundancy: Redundancy) -> Result<Store, Error> {
        Store::create(comm, redundancy, None)
    }

    /// [`Store::with_redundancy`] with host-aware placement: `host` is a key of the host this
    /// rank runs on (ranks with equal keys share a host, and a host that goes down takes all
    /// of its ranks along). Each slot's copies then go to ranks on other hosts than its
    /// owner's and than each other's while there are any, so that losing any one whole host
    /// loses no slot when the ranks span two hosts or more. The ranks are laid out in a ring
    /// that takes one rank of each host in turn (hosts in the order of their lowest rank,
    /// ranks in rank order), and a slot's buddies are the next ranks after its owner in that
    /// ring on hosts that hold no copy of it yet, then, if those run out, the next ones
    /// whatever their host. With every rank on one host, that is [`Store::new`]'s placement.
    /// The keys are gathered here and again at each recovery (newcomers give theirs to
    /// [`Store::join_with_hosts`]), so the placement follows the ranks that are left.
    /// Collective over `comm`, like [`Store::with_redundancy`].
    ///
    /// # Errors
    /// Those of [`Store::with_redundancy`], and [`Error::Usage`] at every rank when some ranks
    /// gave hosts and others did not, or `redundancy` is parity (host-aware placement is for
    /// [`Redundancy::Copies`]).
    pub fn with_hosts(comm: &Comm, redundancy: Redundancy, host: u64) -> Result<Store, Error> {
        Store::create(comm, redundancy, Some(host))
    }

    /// [`Store::with_redundancy`] and [`Store::with_hosts`]: the store, once every rank gave
    /// the same redundancy and placement (one all-reduce, the hosts' all-gather, one
    /// agreement).
    fn create(comm: &Comm, redundancy: Redundancy, host: Option<u64>) -> Result<Store, Error> {
        let mut store = Store::empty(comm, redundancy, (0..comm.size()).collect())?;
        store.host = host;
        let problem = redundancy.problem().or_else(|| {
            (host.is_some() && redundancy.parity().is_some())
                .then(|| "host-aware placement is for copies, not parity".to_string())
        });
        // The largest of each word and of its complement: every rank gave the same words iff
        // each largest word is the complement of the largest complement. Then one agreement,
        // so that every rank returns alike.
        let words = redundancy.words();
        let words = [words[0], words[1], words[2], u64::from(host.is_some())];
        let bad = u64::from(problem.is_some());
        let mut mine = [0u64; 9];
        for (i, word) in words.iter().enumerate() {
            mine[i] = *word;
            mine[i + 4] = !word;
        }
        mine[8] = bad;
        let mut all = [0u64; 9];
        let reduced = store.comm.all_reduce(&mine, &mut all, Op::Max);
        let same = (0..4).all(|i| all[i] == !all[i + 4]);
        let mut fine = reduced.is_ok() && same && all[8] == 0;
        // Every rank knows alike whether to gather the hosts: the reduction is the same at
        // every rank that completed it, and one that did not gives up in the agreement.
        let gathered = if fine && host.is_some() {
            store.gather_hosts()
        } else {
            Ok(())
        };
        fine &= gathered.is_ok();
        if store.comm.agree(u32::from(fine))? == 1 {
            return Ok(store);
        }
        Err(match (reduced, gathered) {
            (Err(e), _) | (_, Err(e)) => e.into(),
            (Ok(()), _) if !same => {
                Error::Usage(format!(
                "the ranks gave different redundancies or placements (this one {redundancy:?}, {})",
                if host.is_some() { "with hosts" } else { "without hosts" }
            ))
            }
            (Ok(()), _) if all[8] != 0 => Error::Usage(problem.unwrap_or_else(|| {
                "another rank gave a redundancy that cannot be used".to_string()
            })),
            (Ok(()), _) => Error::NotCommitted,
        })
    }

    /// Every rank's host key, by an all-gather over the store's communicator.
    fn gather_hosts(&mut self) -> Result<(), CommError> {
        let mut hosts = vec![0u64; self.comm.size() as usize];
        let result = self.comm.all_gather(&[self.host.unwrap_or(0)], &mut hosts);
        self.hosts = if result.is_ok() { hosts } else { Vec::new() };
        result
    }

    /// A store on a duplicate of `comm` with these owners and nothing committed.
    fn empty(comm: &Comm, redundancy: Redundancy, owners: Vec<Rank>) -> Result<Store, Error> {
        Ok(Store {
            comm: comm.dup()?,
            redundancy,
            attempt: 0,
            owners,
            committed: Committed::default(),
            host: None,
            hosts: Vec::new(),
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

    /// Copies of each slot kept on other ranks (0 with parity).
    pub fn copies(&self) -> u32 {
        match self.redundancy {
            Redundancy::Copies(k) => k,
            Redundancy::Xor { .. } | Redundancy::ReedSolomon { .. } => 0,
        }
    }

    /// How the store keeps the slots safe.
    pub fn redundancy(&self) -> Redundancy {
        self.redundancy
    }

    /// How many hosts the ranks of the store's communicator run on, by the keys they gave
    /// ([`Store::with_hosts`]); `None` without host-aware placement.
    pub fn host_count(&self) -> Option<usize> {
        if self.hosts.is_empty() {
            return None;
        }
        let mut keys = self.hosts.clone();
        keys.sort_unstable();
        keys.dedup();
        Some(keys.len())
    }

    /// The world ranks that held `slot`'s data at the last committed checkpoint: its owner
    /// then, followed by the ranks that kept its copies (with parity: the other members of its
    /// owner's group). Empty before the first checkpoint or for a slot that does not exist.
    /// After [`Error::Lost`], the ranks that all failed.
    pub fn holders(&self, slot: u32) -> Vec<u32> {
        let committed = &self.committed;
        let Some(&owner) = committed.owners.get(slot as usize) else {
            return Vec::new();
        };
        if committed.version == 0 {
            return Vec::new();
        }
        let (owner, size) = (owner as usize, committed.layout.len());
        let others: Vec<usize> = match self.redundancy.parity() {
            None => buddies(owner, size, self.copies(), &committed.hosts),
            Some((group, _)) => group_of(owner, size, group)
                .filter(|&m| m != owner)
                .collect(),
        };
        std::iter::once(owner)
            .chain(others)
            .map(|r| committed.layout[r])
            .collect()
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
                    hosts: self.hosts.clone(),
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

    /// Sends what this rank's slots (`mine`; `None`: it gives up) need on other ranks (copies
    /// or parity chunks), takes what it holds for others, and agrees on whether every rank got
    /// all of its part. What this rank holds if the agreement says yes.
    fn exchange(&mut self, mine: Option<&BTreeMap<u32, &[u8]>>) -> Result<Held, Error> {
        let version = self.committed.version + 1;
        let tag = tag_of(self.attempt);
        self.attempt += 1;
        let (held, ok) = match self.redundancy {
            Redundancy::Copies(copies) => self.exchange_copies(mine, copies, version, tag),
            Redundancy::Xor { group } => self.exchange_parity(mine, group, version, tag),
            Redundancy::ReedSolomon { group, parity } => {
                self.exchange_reed_solomon(mine, group, parity, version, tag)
            }
        };
        match self.comm.agree(u32::from(ok))? {
            1 => Ok(held),
            _ => Err(Error::NotCommitted),
        }
    }

    /// [`Store::exchange`] with copies: each slot to its owner's buddies, the copies of the
    /// slots of the ranks this one is a buddy of back; whether all of it went and came.
    fn exchange_copies(
        &self,
        mine: Option<&BTreeMap<u32, &[u8]>>,
        copies: u32,
        version: u64,
        tag: i32,
    ) -> (Held, bool) {
        let (size, me) = (self.comm.size() as usize, self.comm.rank() as usize);
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
        let buddies_of = |owner: usize| buddies(owner, size, copies, &self.hosts);
        let mine_go_to = buddies_of(me);
        for (_, header, data) in &headers {
            for &buddy in &mine_go_to {
                match send_slot(&self.comm, buddy as Rank, tag, header, *data) {
                    Ok(requests) => sends.extend(requests),
                    Err(_) => ok = false,
                }
            }
        }
        let mut held = BTreeMap::new();
        for owner in (0..size).filter(|&o| o != me) {
            if !buddies_of(owner).contains(&me) {
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
        let held = Held {
            copies: held,
            ..Held::default()
        };
        (held, ok)
    }

    /// [`Store::exchange`] with parity: this rank's block cut into one chunk for each other
    /// member of its group (the `i`-th to the `i + 1`-th member after it, cyclically), each
    /// with this rank's slot table; the XOR of the chunks the others send it, and their
    /// tables, back; whether all of it went and came.
    fn exchange_parity(
        &self,
        mine: Option<&BTreeMap<u32, &[u8]>>,
        group: u32,
        version: u64,
        tag: i32,
    ) -> (Held, bool) {
        let (size, me) = (self.comm.size() as usize, self.comm.rank() as usize);
        let members = group_of(me, size, group);
        let (count, position) = (members.len(), me - members.start);
        let member = |offset: usize| (members.start + (position + offset) % count) as Rank;
        let owned = self.owned();
        // `mine` holds exactly the owned slots (the checkpoint checked it).
        let parts: Option<Vec<&[u8]>> =
            mine.map(|data| owned.iter().map(|slot| data[slot]).collect());
        let table: Option<Table> = parts.as_ref().map(|parts| {
            owned
                .iter()
                .zip(parts)
                .map(|(&slot, part)| (slot, part.len()))
                .collect()
        });
        let len: usize = table.iter().flatten().map(|&(_, len)| len).sum();
        let header = table_header(version, table.as_ref());
        let mut ok = mine.is_some();
        let mut sends: Vec<Request<'_>> = Vec::new();
        for index in 0..count - 1 {
            let to = member(index + 1);
            match self.comm.isend(&header, to, tag) {
                Ok(request) => sends.push(request),
                Err(_) => ok = false,
            }
            if let Some(parts) = &parts {
                let data = gather(parts, chunk(index, len, count - 1));
                match self.comm.isend(&data, to, tag) {
                    Ok(request) => sends.push(request),
                    Err(_) => ok = false,
                }
            }
        }
        let mut held = Held::default();
        if let Some(table) = table {
            held.tables.insert(me as Rank, table);
        }
        // From the member `back` ranks before this one comes its chunk `back - 1`.
        for back in 1..count {
            let from = member(count - back);
            match recv_parity(&self.comm, from, tag, version) {
                Ok(Some((table, data))) => {
                    let slots = table.iter().map(|&(slot, _)| slot);
                    let owns =
                        (0..self.owners.len() as u32).filter(|&s| self.owners[s as usize] == from);
                    let total = table.iter().map(|&(_, len)| len).sum();
                    if slots.eq(owns) && data.len() == chunk(back - 1, total, count - 1).len() {
                        if held.parity.is_empty() {
                            held.parity = data;
                        } else {
                            xor_into(&mut held.parity, &data);
                        }
                        held.tables.insert(from, table);
                    } else {
                        ok = false;
                    }
                }
                Ok(None) | Err(_) => ok = false,
            }
        }
        for request in &mut sends {
            if request.wait().is_err() {
                ok = false;
            }
        }
        (held, ok)
    }

    /// [`Store::exchange`] with Reed-Solomon parity ([`Stripes`]): this rank's block cut into
    /// one chunk per stripe it has data in, each sent to that stripe's holders with this
    /// rank's slot table; for each stripe it holds, the data chunks of its contributors, padded
    /// to the longest and encoded, of which it keeps its own parity chunk; whether all of it
    /// went and came.
    fn exchange_reed_solomon(
        &self,
        mine: Option<&BTreeMap<u32, &[u8]>>,
        group: u32,
        parity: u32,
        version: u64,
        tag: i32,
    ) -> (Held, bool) {
        let (size, me) = (self.comm.size() as usize, self.comm.rank() as usize);
        let members = group_of(me, size, group);
        let stripes = Stripes::new(members.len(), parity);
        let position = me - members.start;
        let rank = |position: usize| (members.start + position) as Rank;
        let owned = self.owned();
        let parts: Option<Vec<&[u8]>> =
            mine.map(|data| owned.iter().map(|slot| data[slot]).collect());
        let table: Option<Table> = parts.as_ref().map(|parts| {
            owned
                .iter()
                .zip(parts)
                .map(|(&slot, part)| (slot, part.len()))
                .collect()
        });
        let len: usize = table.iter().flatten().map(|&(_, len)| len).sum();
        let header = table_header(version, table.as_ref());
        let mut ok = mine.is_some();
        let mut sends: Vec<Request<'_>> = Vec::new();
        if stripes.parity > 0 {
            for index in 0..stripes.data() {
                let stripe = stripes.stripe_of(position, index);
                let data = parts
                    .as_ref()
                    .map(|parts| gather(parts, chunk(index, len, stripes.data())));
                for offset in 0..stripes.parity {
                    let to = rank((stripe + offset) % stripes.count);
                    match self.comm.isend(&header, to, tag) {
                        Ok(request) => sends.push(request),
                        Err(_) => ok = false,
                    }
                    if let Some(data) = &data {
                        match self.comm.isend(data, to, tag) {
                            Ok(request) => sends.push(request),
                            Err(_) => ok = false,
                        }
                    }
                }
            }
        }
        let mut held = Held::default();
        if let Some(table) = table {
            held.tables.insert(me as Rank, table);
        }
        // The stripes this rank holds parity of, and their data chunks as they come.
        let mine_stripes: Vec<usize> = (0..stripes.parity)
            .map(|offset| (position + stripes.count - offset) % stripes.count)
            .collect();
        let mut chunks: BTreeMap<usize, Vec<Option<Vec<u8>>>> = mine_stripes
            .iter()
            .map(|&stripe| (stripe, vec![None; stripes.data()]))
            .collect();
        for from in (0..stripes.count).filter(|&m| m != position) {
            // The chunks `from` sends here, in the order of its chunks.
            let mut theirs: Vec<(usize, usize)> = mine_stripes
                .iter()
                .filter_map(|&stripe| Some((stripes.chunk_in(from, stripe)?, stripe)))
                .collect();
            theirs.sort_unstable();
            for (index, stripe) in theirs {
                match recv_parity(&self.comm, rank(from), tag, version) {
                    Ok(Some((table, data))) => {
                        let slots = table.iter().map(|&(slot, _)| slot);
                        let owns = (0..self.owners.len() as u32)
                            .filter(|&s| self.owners[s as usize] == rank(from));
                        let total = table.iter().map(|&(_, len)| len).sum();
                        let j = stripes.data_index(from, stripe).expect("a contributor");
                        if slots.eq(owns) && data.len() == chunk(index, total, stripes.data()).len()
                        {
                            chunks.get_mut(&stripe).expect("held")[j] = Some(data);
                            held.tables.insert(rank(from), table);
                        } else {
                            ok = false;
                        }
                    }
                    Ok(None) => ok = false,
                    Err(_) => {
                        ok = false;
                        break; // nothing more comes from a failed member
                    }
                }
            }
        }
        for (stripe, data) in chunks {
            let Some(mut data) = data.into_iter().collect::<Option<Vec<Vec<u8>>>>() else {
                ok = false;
                continue;
            };
            let longest = data.iter().map(Vec::len).max().unwrap_or(0);
            let shard = longest.next_multiple_of(2);
            let offset = stripes.holder_in(position, stripe).expect("a holder");
            if shard == 0 {
                held.stripes.insert(stripe, Vec::new());
                continue;
            }
            for d in &mut data {
                d.resize(shard, 0);
            }
            match reed_solomon_simd::encode(stripes.data(), stripes.parity, &data) {
                Ok(mut recovery) => {
                    held.stripes.insert(stripe, recovery.swap_remove(offset));
                }
                Err(_) => ok = false,
            }
        }
        for request in &mut sends {
            if request.wait().is_err() {
                ok = false;
            }
        }
        (held, ok)
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
    /// [`Error::Lost`] at every rank when a slot's owner and all its copies' holders died
    /// (with parity: when its owner and another rank of its group died);
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
        let plan = Plan::new(committed, self.redundancy, self.host.is_some(), comm);
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
                let data = committed.held.copies.get(slot).map(Vec::as_slice);
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
        // With parity, each dead block is rebuilt at its taker from the shares of its group's
        // survivors (not when something is lost: the recovery fails anyway).
        let mut rebuilt = BTreeMap::new();
        if plan.lost.is_empty() {
            let me_old = committed.layout.iter().position(|&w| w == me_world);
            let redundancy = self.redundancy;
            let share = |dead: usize| me_old.and_then(|me| share(committed, me, dead, redundancy));
            let (slots, done) = rebuild(
                &private,
                &plan.rebuilds,
                me,
                committed.version,
                redundancy,
                share,
            );
            rebuilt = slots;
            ok &= done;
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
                    .or_else(|| committed.held.copies.get(&slot));
                match data {
                    Some(data) => Some((slot, data.clone())),
                    None => rebuilt.remove(&slot).map(|data| (slot, data)),
                }
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
    /// returns. [`Store::join_with_redundancy`] with [`Redundancy::Copies`].
    ///
    /// # Errors
    /// Those of [`Store::join_with_redundancy`].
    pub fn join(comm: &Comm, copies: u32) -> Result<(Store, Slots), Error> {
        Store::join_with_redundancy(comm, Redundancy::Copies(copies))
    }

    /// [`Store::join`] for a store of any redundancy: the survivors' (with parity, the
    /// newcomer gets the dead rank's slots rebuilt from the parity of its group).
    ///
    /// # Errors
    /// Those of [`Store::recover`]; [`Error::Usage`] here (and [`Error::NotCommitted`] at the
    /// other ranks) when `redundancy` is not the survivors'.
    pub fn join_with_redundancy(
        comm: &Comm,
        redundancy: Redundancy,
    ) -> Result<(Store, Slots), Error> {
        Store::join_as(comm, redundancy, None)
    }

    /// [`Store::join_with_redundancy`] for survivors that keep a store of
    /// [`Store::with_hosts`]: `host` is this newcomer's host key, gathered with the others'
    /// before the restored slots are checkpointed on `comm`.
    ///
    /// # Errors
    /// Those of [`Store::join_with_redundancy`]; [`Error::Usage`] here (and
    /// [`Error::NotCommitted`] at the other ranks) when the survivors' store is not host-aware.
    /// (A newcomer that calls [`Store::join_with_redundancy`] to join a host-aware store gets
    /// the same.)
    pub fn join_with_hosts(
        comm: &Comm,
        redundancy: Redundancy,
        host: u64,
    ) -> Result<(Store, Slots), Error> {
        Store::join_as(comm, redundancy, Some(host))
    }

    /// A newcomer's part, with or without a host key.
    fn join_as(
        comm: &Comm,
        redundancy: Redundancy,
        host: Option<u64>,
    ) -> Result<(Store, Slots), Error> {
        let mut store = Store::empty(comm, redundancy, Vec::new())?;
        let mut words = Vec::new();
        let header = share_plan(&store.comm, None, &mut words)
            .ok()
            .and_then(|()| Header::read(&words));
        let Some(header) = header else {
            let restored = store.finish(Vec::new(), Vec::new(), Vec::new(), false);
            return restored.map(|r| (store, r));
        };
        // With another redundancy than the survivors', this rank still takes what they send
        // (as they keep it), then fails the recovery.
        let mismatch = header.redundancy != redundancy || header.hosted != host.is_some();
        store.host = host.filter(|_| !mismatch);
        store.committed.version = header.version;
        let me = comm.rank();
        let mut ok = !mismatch;
        let mut restored = Vec::new();
        if header.lost.is_empty() {
            let (mut rebuilt, done) = rebuild(
                &store.comm,
                &header.rebuilds,
                me,
                header.version,
                header.redundancy,
                |_| None,
            );
            ok &= done;
            for (slot, &owner) in header.owners.iter().enumerate() {
                if owner != me {
                    continue;
                }
                if header.redundancy.parity().is_some() {
                    match rebuilt.remove(&(slot as u32)) {
                        Some(data) => restored.push((slot as u32, data)),
                        None => ok = false,
                    }
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
        if mismatch {
            let failed = store.finish(Vec::new(), Vec::new(), Vec::new(), false);
            return Err(match failed {
                Err(Error::NotCommitted) => Error::Usage(format!(
                    "join: the survivors keep {:?} {}, not {redundancy:?} {}",
                    header.redundancy,
                    if header.hosted {
                        "with hosts"
                    } else {
                        "without hosts"
                    },
                    if host.is_some() {
                        "with hosts"
                    } else {
                        "without hosts"
                    },
                )),
                Err(e) => e,
                Ok(_) => Error::NotCommitted,
            });
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
        // With host-aware placement, the new communicator's hosts, agreed before any rank
        // places a copy by them (every rank holds the plan here, so all gather or none does).
        if self.host.is_some() {
            let gathered = self.gather_hosts().is_ok();
            if self.comm.agree(u32::from(gathered))? != 1 {
                return Err(Error::NotCommitted);
            }
        }
        self.owners = owners;
        self.attempt = 0;
        let data: Vec<(u32, &[u8])> = restored.iter().map(|(s, d)| (*s, d.as_slice())).collect();
        self.checkpoint(&data)?;
        Ok(restored)
    }
}

/// A survivor's share in rebuilding a dead member's block: what it sends the rank that
/// rebuilds it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Share {
    /// The group's members.
    count: u32,
    /// The dead member's and the sender's positions in the group.
    dead: u32,
    sender: u32,
    /// With Reed-Solomon parity: the length of the sender's chunk in each stripe the dead
    /// member had data in, in the order of its chunks (the data is these chunks end to end).
    sizes: Vec<usize>,
    /// The dead member's slot table.
    table: Table,
    data: Vec<u8>,
}

impl Share {
    /// The share's header (all but its data; without a share: a header that gives up).
    fn header(version: u64, share: Option<&Share>) -> Vec<u8> {
        let mut header = version.to_le_bytes().to_vec();
        header.push(u8::from(share.is_some()));
        if let Some(share) = share {
            for word in [
                share.count,
                share.dead,
                share.sender,
                share.sizes.len() as u32,
            ] {
                header.extend_from_slice(&word.to_le_bytes());
            }
            for &size in &share.sizes {
                header.extend_from_slice(&(size as u64).to_le_bytes());
            }
            header.extend_from_slice(&table_header(version, Some(&share.table))[9..]);
        }
        header
    }

    /// Receives a share from `from` ([`Share::header`], then the data): `Ok(None)` if the
    /// sender gave up or sent something else than a share of `version`.
    fn recv(comm: &Comm, from: Rank, version: u64) -> Result<Option<Share>, CommError> {
        let (header, _) = comm.recv_vec::<u8>(from, RECOVERY_TAG)?;
        if header.get(8) != Some(&1) {
            return Ok(None);
        }
        let (data, _) = comm.recv_vec::<u8>(from, RECOVERY_TAG)?;
        let read = || -> Option<Share> {
            let words = header.get(9..25)?;
            let word = |i: usize| u32::from_le_bytes(words[4 * i..4 * i + 4].try_into().unwrap());
            let sizes = word(3) as usize;
            let rest = header.get(25..)?;
            let (sizes_bytes, table) = rest.split_at_checked(8 * sizes)?;
            let mut table_bytes = header[..9].to_vec();
            table_bytes.extend_from_slice(table);
            Some(Share {
                count: word(0),
                dead: word(1),
                sender: word(2),
                sizes: sizes_bytes
                    .chunks_exact(8)
                    .map(|b| usize::try_from(u64::from_le_bytes(b.try_into().ok()?)).ok())
                    .collect::<Option<_>>()?,
                table: read_table_header(&table_bytes, version)?,
                data,
            })
        };
        Ok(read())
    }
}

/// A survivor's share in rebuilding the block of `dead` (ranks of the last checkpoint's
/// communicator, as `me`), the XOR of every surviving member's share being the dead block with
/// XOR parity ([`Stripes`] with one parity chunk): for each chunk of the dead block, this
/// rank's parity block if it holds that chunk's parity, else its own chunk in that parity
/// block, cut (or padded with zeros) to the dead chunk's length. With Reed-Solomon parity:
/// for each stripe the dead member had data in, this rank's chunk there (its parity chunk or
/// its data chunk, padded to the stripe's length). `None` if it lacks a table it needs.
fn share(committed: &Committed, me: usize, dead: usize, redundancy: Redundancy) -> Option<Share> {
    let (group, parity) = redundancy.parity()?;
    let members = group_of(dead, committed.layout.len(), group);
    if !members.contains(&me) {
        return None;
    }
    let stripes = Stripes::new(members.len(), parity);
    let (at_dead, at_me) = (dead - members.start, me - members.start);
    let table = committed.held.tables.get(&(dead as Rank))?.clone();
    let len: usize = table.iter().map(|&(_, len)| len).sum();
    let parts: Vec<&[u8]> = committed.mine.values().map(Vec::as_slice).collect();
    let my_len: usize = parts.iter().map(|part| part.len()).sum();
    let mut share = Share {
        count: stripes.count as u32,
        dead: at_dead as u32,
        sender: at_me as u32,
        sizes: Vec::new(),
        table,
        data: Vec::new(),
    };
    if let Redundancy::Xor { .. } = redundancy {
        let mut out = vec![0u8; len];
        for index in 0..stripes.data() {
            let range = chunk(index, len, stripes.data());
            let stripe = stripes.stripe_of(at_dead, index);
            let source = match stripes.chunk_in(at_me, stripe) {
                None => std::borrow::Cow::Borrowed(committed.held.parity.as_slice()),
                Some(mine) => gather(&parts, chunk(mine, my_len, stripes.data())),
            };
            let n = source.len().min(range.len());
            out[range.start..range.start + n].copy_from_slice(&source[..n]);
        }
        share.data = out;
        return Some(share);
    }
    // Every member's block length, for the stripes' chunk lengths.
    let lens: Vec<usize> = members
        .clone()
        .map(|m| {
            let table = committed.held.tables.get(&(m as Rank))?;
            Some(table.iter().map(|&(_, len)| len).sum())
        })
        .collect::<Option<_>>()?;
    for index in 0..stripes.data() {
        let stripe = stripes.stripe_of(at_dead, index);
        let size = stripes.shard_len(stripe, &lens);
        share.sizes.push(size);
        let at = share.data.len();
        match stripes.chunk_in(at_me, stripe) {
            None => {
                let held = committed.held.stripes.get(&stripe)?;
                if held.len() != size {
                    return None;
                }
                share.data.extend_from_slice(held);
            }
            Some(mine) => {
                share
                    .data
                    .extend_from_slice(&gather(&parts, chunk(mine, my_len, stripes.data())));
            }
        }
        share.data.resize(at + size, 0);
    }
    Some(share)
}

/// The dead block from every surviving member's share (all of one rebuild), or `None` if they
/// do not fit together or are too few.
fn assemble(redundancy: Redundancy, shares: Vec<Share>) -> Option<(Table, Vec<u8>)> {
    let first = shares.first()?;
    let (count, dead, table) = (first.count, first.dead, first.table.clone());
    let fits = |s: &Share| {
        (s.count, s.dead, &s.table) == (count, dead, &table)
            && s.sizes == first.sizes
            && s.data.len() == first.data.len()
    };
    if !shares.iter().all(fits) {
        return None;
    }
    let (_, parity) = redundancy.parity()?;
    let stripes = Stripes::new(count as usize, parity);
    let len: usize = table.iter().map(|&(_, len)| len).sum();
    if let Redundancy::Xor { .. } = redundancy {
        if shares.len() != stripes.count - 1 {
            return None;
        }
        let mut shares = shares.into_iter();
        let mut block = shares.next()?.data;
        for share in shares {
            xor_into(&mut block, &share.data);
        }
        return (block.len() == len).then_some((table, block));
    }
    let mut block = Vec::with_capacity(len);
    let mut at = 0;
    for (index, &size) in first.sizes.iter().enumerate() {
        let stripe = stripes.stripe_of(dead as usize, index);
        let want = chunk(index, len, stripes.data()).len();
        if size == 0 {
            if want != 0 {
                return None;
            }
            continue;
        }
        let (mut original, mut recovery) = (Vec::new(), Vec::new());
        for share in &shares {
            let piece = &share.data[at..at + size];
            let sender = share.sender as usize;
            match stripes.holder_in(sender, stripe) {
                Some(offset) => recovery.push((offset, piece)),
                None => original.push((stripes.data_index(sender, stripe)?, piece)),
            }
        }
        let index_of_dead = stripes.data_index(dead as usize, stripe)?;
        let mut restored =
            reed_solomon_simd::decode(stripes.data(), stripes.parity, original, recovery).ok()?;
        let piece = restored.remove(&index_of_dead)?;
        block.extend_from_slice(piece.get(..want)?);
        at += size;
    }
    (block.len() == len).then_some((table, block))
}

/// The parity part of a recovery at one rank (a survivor or a newcomer), on the recovery's
/// communicator: sends this rank's shares (`share(dead)`) to the takers of the rebuilds it
/// contributes to, takes the others' shares of the blocks it rebuilds, and cuts each rebuilt
/// block into its slots. The rebuilt slots, and whether all of it went well.
fn rebuild(
    comm: &Comm,
    rebuilds: &[Rebuild],
    me: Rank,
    version: u64,
    redundancy: Redundancy,
    share: impl Fn(usize) -> Option<Share>,
) -> (BTreeMap<u32, Vec<u8>>, bool) {
    let mut ok = true;
    let mut kept = BTreeMap::new();
    let mut outgoing = Vec::new();
    for r in rebuilds.iter().filter(|r| r.contributors.contains(&me)) {
        let mine = share(r.dead);
        ok &= mine.is_some();
        if r.taker == me {
            if let Some(mine) = mine {
                kept.insert(r.dead, mine);
            }
        } else {
            outgoing.push((r.taker, Share::header(version, mine.as_ref()), mine));
        }
    }
    let mut sends = Vec::new();
    for (to, header, share) in &outgoing {
        let data = share.as_ref().map(|s| s.data.as_slice());
        match send_slot_parts(comm, *to, header, data) {
            Ok(requests) => sends.extend(requests),
            Err(_) => ok = false,
        }
    }
    let mut rebuilt = BTreeMap::new();
    for r in rebuilds.iter().filter(|r| r.taker == me) {
        let mut shares: Vec<Share> = kept.remove(&r.dead).into_iter().collect();
        for &from in r.contributors.iter().filter(|&&c| c != me) {
            match Share::recv(comm, from, version) {
                Ok(Some(share)) => shares.push(share),
                _ => ok = false,
            }
        }
        let Some((table, block)) = assemble(redundancy, shares) else {
            ok = false;
            continue;
        };
        let mut at = 0;
        for (slot, len) in table {
            rebuilt.insert(slot, block[at..at + len].to_vec());
            at += len;
        }
    }
    for request in &mut sends {
        ok &= request.wait().is_ok();
    }
    (rebuilt, ok)
}

/// Sends a parity message (a header, then the data if there is any) to `to` on the recovery's
/// tag.
fn send_slot_parts<'a>(
    comm: &'a Comm,
    to: Rank,
    header: &[u8],
    data: Option<&[u8]>,
) -> Result<Vec<Request<'a>>, CommError> {
    let mut requests = vec![comm.isend(header, to, RECOVERY_TAG)?];
    if let Some(data) = data {
        requests.push(comm.isend(data, to, RECOVERY_TAG)?);
    }
    Ok(requests)
}

/// A dead rank's block to rebuild from parity: the dead rank (in the last checkpoint's
/// communicator), the rank that takes its slots and rebuilds it, and the surviving members of
/// its group, who send their shares (ranks in the recovery's communicator).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rebuild {
    dead: usize,
    taker: Rank,
    contributors: Vec<Rank>,
}

/// Where every slot goes in a recovery, as every survivor computes it from the last committed
/// checkpoint and the repaired communicator's members.
#[derive(Debug)]
struct Plan {
    version: u64,
    redundancy: Redundancy,
    /// Whether the store places copies by hosts ([`Store::with_hosts`]).
    hosted: bool,
    /// The lowest survivor (it tells the newcomers the plan).
    root: Rank,
    /// Each slot's owner in the repaired communicator.
    new_owners: Vec<Rank>,
    /// With copies, the slots whose owner died: new owner and the surviving rank that sends it
    /// its data (`None` when the new owner has it).
    moves: BTreeMap<u32, (Rank, Option<Rank>)>,
    /// With parity, the dead blocks to rebuild (of dead ranks that owned slots), by dead rank.
    rebuilds: Vec<Rebuild>,
    lost: Vec<u32>,
}

impl Plan {
    fn new(committed: &Committed, redundancy: Redundancy, hosted: bool, comm: &Comm) -> Plan {
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
        // The surviving rank that can give a dead owner's slots: with copies, its first
        // surviving buddy; with parity, if no more ranks of its group died than its parity
        // covers, the next surviving member of its group.
        let holder = |owner: usize| match (redundancy, redundancy.parity()) {
            (Redundancy::Copies(copies), _) => buddies(owner, old_size, copies, &committed.hosts)
                .into_iter()
                .find_map(|b| alive(layout[b])),
            (_, None) => None,
            (_, Some((group, parity))) => {
                let members = group_of(owner, old_size, group);
                let count = members.len();
                let dead = members.clone().filter(|&m| alive(layout[m]).is_none());
                if dead.count() > Stripes::new(count, parity).parity {
                    return None;
                }
                (1..count)
                    .map(|i| members.start + (owner - members.start + i) % count)
                    .find_map(|m| alive(layout[m]))
            }
        };
        let mut new_owners = Vec::with_capacity(committed.owners.len());
        let mut moves = BTreeMap::new();
        let mut takers = BTreeMap::new();
        let mut lost = Vec::new();
        for (slot, &owner) in committed.owners.iter().enumerate() {
            let slot = slot as u32;
            if let Some(rank) = alive(layout[owner as usize]) {
                new_owners.push(rank);
                continue;
            }
            let order = dead_owners
                .iter()
                .position(|&o| o == owner as usize)
                .unwrap();
            let taker = newcomers.get(order).copied();
            match (holder(owner as usize), taker) {
                (None, taker) => {
                    lost.push(slot);
                    new_owners.push(taker.unwrap_or(0));
                }
                (Some(holder), Some(newcomer)) => {
                    new_owners.push(newcomer);
                    moves.insert(slot, (newcomer, Some(holder)));
                    takers.insert(owner as usize, newcomer);
                }
                (Some(holder), None) => {
                    new_owners.push(holder);
                    moves.insert(slot, (holder, None));
                    takers.insert(owner as usize, holder);
                }
            }
        }
        let mut rebuilds = Vec::new();
        if let Some((group, _)) = redundancy.parity() {
            moves.clear();
            for (dead, taker) in takers {
                let contributors = group_of(dead, old_size, group)
                    .filter_map(|m| alive(layout[m]))
                    .collect();
                rebuilds.push(Rebuild {
                    dead,
                    taker,
                    contributors,
                });
            }
        }
        let root = (0..comm.size())
            .find(|r| !newcomers.contains(r))
            .expect("the calling survivor is in the communicator");
        Plan {
            version: committed.version,
            redundancy,
            hosted,
            root,
            new_owners,
            moves,
            rebuilds,
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
        words.extend(self.redundancy.words());
        words.push(u64::from(self.hosted));
        words.push(self.rebuilds.len() as u64);
        for r in &self.rebuilds {
            words.extend([
                r.dead as u64,
                u64::from(r.taker),
                r.contributors.len() as u64,
            ]);
            words.extend(r.contributors.iter().map(|&c| u64::from(c)));
        }
        words
    }
}

/// A recovery plan as a newcomer reads it.
struct Header {
    version: u64,
    owners: Vec<Rank>,
    sources: Vec<Rank>,
    lost: Vec<u32>,
    redundancy: Redundancy,
    hosted: bool,
    rebuilds: Vec<Rebuild>,
}

impl Header {
    fn read(words: &[u64]) -> Option<Header> {
        let mut words = words.iter().copied();
        let mut next = || words.next();
        let version = next()?;
        let slots = usize::try_from(next()?).ok()?;
        let lost = usize::try_from(next()?).ok()?;
        let mut ranks = |count: usize| -> Option<Vec<Rank>> {
            (0..count).map(|_| Rank::try_from(next()?).ok()).collect()
        };
        let owners = ranks(slots)?;
        let sources = ranks(slots)?;
        let lost = ranks(lost)?;
        let [kind, a, b] = <[Rank; 3]>::try_from(ranks(3)?).ok()?;
        let redundancy = Redundancy::from_words([kind, a, b].map(u64::from))?;
        let [hosted, count] = <[Rank; 2]>::try_from(ranks(2)?).ok()?;
        let mut rebuilds = Vec::new();
        for _ in 0..count {
            let [dead, taker, contributors] = <[Rank; 3]>::try_from(ranks(3)?).ok()?;
            rebuilds.push(Rebuild {
                dead: dead as usize,
                taker,
                contributors: ranks(contributors as usize)?,
            });
        }
        if ranks(1).is_some() {
            return None; // words left over
        }
        Some(Header {
            version,
            owners,
            sources,
            lost,
            redundancy,
            hosted: hosted == 1,
            rebuilds,
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
/// and after the last, the slots kept safe by `redundancy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopConfig {
    /// Steps of the loop.
    pub iterations: u64,
    /// A checkpoint after every this many steps (and after the last).
    pub checkpoint_every: u64,
    /// How the store keeps the slots ([`Store::with_redundancy`]): copies or parity.
    pub redundancy: Redundancy,
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
/// use runthrough::resilience::{run_loop, LoopConfig, Redundancy};
/// let config = LoopConfig { iterations: 10, checkpoint_every: 3, redundancy: Redundancy::Copies(1) };
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
/// of 0, a redundancy [`Store::with_redundancy`] refuses or a failure before the first
/// checkpoint committed; the errors of the recoveries.
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
    let mut store = Store::with_redundancy(&comm, config.redundancy)?;
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
