// SPDX-License-Identifier: MIT OR Apache-2.0
//! Intercommunicators (MPI-4.0 §7.6): `MPI_Intercomm_create`, `MPI_Intercomm_merge`,
//! `MPI_Comm_remote_size`, `MPI_Comm_remote_group`; point-to-point on them goes through
//! [`send_side`] and [`receive_side`], the local queries (`MPI_Comm_size`, `_rank`, `_group`,
//! `_compare`) through [`Inter`], revocation and acknowledgement through [`backing`], and
//! `MPIX_Comm_agree` through [`agree`], `MPI_Barrier` over the communicator that spans both
//! groups. Every other call refuses an intercommunicator
//! (`crate::runtime::comm_of`).
//!
//! # Design
//! An intercommunicator between groups A and B (A being the group whose first member has the
//! lower world rank, so that both sides agree) is backed by two ordinary communicators that
//! span both groups, made by the runtime's fault-tolerant creation (two splits of the peer
//! communicator): one numbers A's members first (0..|A|, in A's order) and then B's, the other
//! B's first. A rank *sends* on the one that numbers its own group first (remote rank r is
//! rank `local size + r` there) and *receives* on the one that numbers the remote group first,
//! so a receive's source, as the runtime reports it, is already the sender's rank in the
//! remote group, and a wildcard receive can only match the remote group's messages (only
//! they send on it). A failed remote rank is a failed peer of these communicators: the
//! point-to-point failure rules (semantics §3.1) apply unchanged.
//!
//! Creation is collective over both groups: the leaders exchange their groups' world ranks
//! over the peer communicator (with the call's tag), each broadcasts the other group to its
//! own, then an agreement over the peer communicator decides, uniformly, whether the two
//! splits go ahead (so a rank that saw a failure never leaves the others waiting in a
//! creation). The runtime's creation is collective over every participant of its parent, so
//! the peer communicator's participants (the OK ranks of its G) must be exactly the two groups
//! (the usual case: `MPI_COMM_WORLD` split in two); otherwise `MPI_ERR_ARG` at every rank.

use std::os::raw::c_int;
use std::sync::Arc;

use runthrough::{Comm, Error, Rank, RankState, Source, Tag};

use crate::constants::*;
use crate::errors::{boundary, out, Failure};
use crate::runtime::{agreement_comm_of, with_runtime, CommBox, CommEntry};

/// What an intercommunicator's table entry holds besides the communicator it sends on.
#[derive(Debug)]
pub(crate) struct Inter {
    /// The communicator this rank receives on (the remote group numbered first).
    pub(crate) receive: Arc<CommBox>,
    /// World ranks of the local group's members, in local rank order.
    pub(crate) local: Vec<u32>,
    /// World ranks of the remote group's members, in remote rank order.
    pub(crate) remote: Vec<u32>,
    /// This rank's rank in the local group.
    pub(crate) rank: Rank,
    /// Whether the local group is A (numbered first by the communicator that `MPI_Intercomm_merge`
    /// runs on).
    local_first: bool,
}

impl Inter {
    /// An intercommunicator's groups and the communicator it receives on (see the module's
    /// design): `local_first` when the local group is A.
    pub(crate) fn new(
        receive: Arc<CommBox>,
        local: Vec<u32>,
        remote: Vec<u32>,
        rank: Rank,
        local_first: bool,
    ) -> Self {
        Inter {
            receive,
            local,
            remote,
            rank,
            local_first,
        }
    }

    /// Whether the local group is A: then the communicator it sends on numbers A first (the
    /// one both groups run their collectives on), else the one it receives on does.
    pub(crate) fn local_first(&self) -> bool {
        self.local_first
    }
}

/// The communicators that carry `handle`'s traffic: its own for an intracommunicator; the one
/// it sends on and the one it receives on for an intercommunicator.
///
/// # Errors
/// `MPI_ERR_COMM` for an invalid or freed handle.
pub(crate) fn backing(handle: c_int) -> Result<Vec<Arc<CommBox>>, Failure> {
    with_runtime(|runtime| {
        let entry = runtime.comm(handle)?;
        let mut comms = vec![Arc::clone(&entry.comm)];
        if let Some(inter) = &entry.inter {
            comms.push(Arc::clone(&inter.receive));
        }
        Ok(comms)
    })
}

/// Whether this process ever made an intercommunicator: until it does, the calls that take
/// either kind ([`crate::inter_collectives::Sides::of`]) skip the table lookup.
static ANY_INTERCOMM: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes `entry` an intercommunicator with `inter`.
pub(crate) fn install(entry: &mut CommEntry, inter: Inter) {
    ANY_INTERCOMM.store(true, std::sync::atomic::Ordering::Release);
    entry.inter = Some(Arc::new(inter));
}

/// Whether this process ever made an intercommunicator (a handle it was given before then is
/// an intracommunicator or invalid).
pub(crate) fn any_intercommunicator() -> bool {
    ANY_INTERCOMM.load(std::sync::atomic::Ordering::Acquire)
}

/// The intercommunicator part of `handle`'s entry: `None` for an intracommunicator.
///
/// # Errors
/// `MPI_ERR_COMM` for an invalid or freed handle.
pub(crate) fn inter_of(handle: c_int) -> Result<Option<Arc<Inter>>, Failure> {
    with_runtime(|runtime| Ok(runtime.comm(handle)?.inter.clone()))
}

/// `MPI_ERR_RANK` unless `rank` names a member of a remote group of `size` (or is one of the
/// `special` values, passed through).
fn remote_rank(rank: c_int, size: usize, special: &[c_int]) -> Result<c_int, Failure> {
    if special.contains(&rank) || usize::try_from(rank).is_ok_and(|r| r < size) {
        return Ok(rank);
    }
    Err(Failure::new(
        MPI_ERR_RANK,
        format!("rank {rank} is not in the remote group of the intercommunicator (size {size})"),
    ))
}

/// The communicator a send to `dest` on `handle` goes over, and `dest` in its numbering:
/// `handle`'s own for an intracommunicator; for an intercommunicator the one that numbers the
/// local group first (`dest` names a member of the remote group).
///
/// # Errors
/// `MPI_ERR_COMM` for an invalid or freed handle; `MPI_ERR_RANK` for a rank outside the remote
/// group of an intercommunicator; `MPI_ERR_REVOKED` for `MPI_PROC_NULL` on a revoked one.
pub(crate) fn send_side(handle: c_int, dest: c_int) -> Result<(Arc<CommBox>, c_int), Failure> {
    let (comm, dest) = send_side_of(handle, dest)?;
    null_peer_on_revoked(&comm, dest)?;
    Ok((comm, dest))
}

/// `MPI_PROC_NULL` as the peer of a point-to-point call on a revoked communicator: the call
/// fails with `MPI_ERR_REVOKED`, as every non-local call there does (ULFM, MPI-5), instead of
/// completing at once as it does elsewhere.
fn null_peer_on_revoked(comm: &CommBox, peer: c_int) -> Result<(), Failure> {
    if peer == MPI_PROC_NULL && comm.get().is_revoked() {
        return Err(runthrough::Error::Revoked.into());
    }
    Ok(())
}

fn send_side_of(handle: c_int, dest: c_int) -> Result<(Arc<CommBox>, c_int), Failure> {
    with_runtime(|runtime| {
        let entry: &CommEntry = runtime.comm(handle)?;
        let comm = Arc::clone(&entry.comm);
        let Some(inter) = &entry.inter else {
            return Ok((comm, dest));
        };
        let dest = remote_rank(dest, inter.remote.len(), &[MPI_PROC_NULL])?;
        let shifted = if dest == MPI_PROC_NULL {
            dest
        } else {
            dest + inter.local.len() as c_int
        };
        Ok((comm, shifted))
    })
}

/// The communicator a receive from `source` on `handle` is posted on (its numbering of the
/// remote group is the remote group's own, so `source` and the statuses need no translation).
///
/// # Errors
/// As [`send_side`].
pub(crate) fn receive_side(handle: c_int, source: c_int) -> Result<Arc<CommBox>, Failure> {
    let comm = receive_side_of(handle, source)?;
    null_peer_on_revoked(&comm, source)?;
    Ok(comm)
}

fn receive_side_of(handle: c_int, source: c_int) -> Result<Arc<CommBox>, Failure> {
    with_runtime(|runtime| {
        let entry: &CommEntry = runtime.comm(handle)?;
        match &entry.inter {
            None => Ok(Arc::clone(&entry.comm)),
            Some(inter) => {
                remote_rank(source, inter.remote.len(), &[MPI_PROC_NULL, MPI_ANY_SOURCE])?;
                Ok(Arc::clone(&inter.receive))
            }
        }
    })
}

/// The world ranks of `comm`'s members, in rank order.
fn world_ranks(comm: &Comm) -> Vec<u32> {
    comm.group().world_ranks().to_vec()
}

/// The leaders' exchange: the remote group's world ranks, from `remote_leader` of `peer`.
fn exchange(
    peer: &Comm,
    local: &[u32],
    remote_leader: Rank,
    tag: c_int,
) -> Result<Vec<u32>, Error> {
    peer.send(local, remote_leader, tag)?;
    let (remote, _) = peer.recv_vec::<u32>(Source::Rank(remote_leader), Tag::Value(tag))?;
    Ok(remote)
}

/// Whether the participants of `peer` (the OK ranks of its G) are exactly the world ranks of
/// `union`.
fn participants_are(peer: &Comm, union: &[u32]) -> Result<bool, Error> {
    let global = peer.global_view()?;
    let members = world_ranks(peer);
    let participants: Vec<u32> = (0..peer.size())
        .filter(|&r| global.state_of(r) == Some(RankState::OK))
        .map(|r| members[r as usize])
        .collect();
    let mut sorted_union = union.to_vec();
    sorted_union.sort_unstable();
    let mut sorted = participants;
    sorted.sort_unstable();
    Ok(sorted == sorted_union)
}

/// What a leader tells its group in the first broadcast.
const FINE: u32 = 0;
const LEADERS_FAILED: u32 = 1;
const NOT_THE_PARTICIPANTS: u32 = 2;
const LEADER_REFUSED: u32 = 3;

/// Whether `handle` is a valid intracommunicator.
fn valid(handle: c_int) -> bool {
    with_runtime(|runtime| Ok(runtime.comm(handle)?.inter.is_none())).unwrap_or(false)
}

/// The position of world rank `me` in `order` (as a split key).
fn key_of(order: &[u32], me: u32) -> i32 {
    order.iter().position(|&w| w == me).unwrap_or(0) as i32
}

/// `MPI_Intercomm_create` (MPI-4.0 §7.6.2): collective over the members of `local_comm` in
/// both groups; `local_leader` is a rank of `local_comm`, `remote_leader` the other leader's
/// rank in `peer_comm`, `tag` the tag of the leaders' exchange on `peer_comm`. See the module
/// documentation for how it is built.
///
/// `peer_comm` is used at every rank (MPI reads it only at the leaders): when the leaders'
/// `peer_comm` is `MPI_COMM_WORLD`, every rank uses `MPI_COMM_WORLD` whatever it passed;
/// otherwise every rank must pass the same communicator as its leader.
///
/// # Errors
/// `MPI_ERR_COMM` for an invalid, freed or inter- `local_comm` (or `peer_comm` at a rank that
/// needs it); `MPI_ERR_RANK` for a leader out of range; `MPI_ERR_TAG` for a negative tag;
/// `MPI_ERR_ARG` for a NULL `newintercomm`, and at every rank when the participants of
/// `peer_comm` are not exactly the two groups; `MPIX_ERR_PROC_FAILED` at every rank when a
/// leader or a member failed before the intercommunicator was agreed on (a creation the
/// runtime refuses), `MPIX_ERR_REVOKED` on a revoked communicator.
///
/// # Safety
/// `newintercomm` is NULL or points at a writable `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Intercomm_create(
    local_comm: c_int,
    local_leader: c_int,
    peer_comm: c_int,
    remote_leader: c_int,
    tag: c_int,
    newintercomm: *mut c_int,
) -> c_int {
    boundary(local_comm, || {
        // SAFETY: checked for NULL by `out`.
        let newintercomm = unsafe { out(newintercomm, "newintercomm")? };
        if tag < 0 {
            return Err(Failure::new(MPI_ERR_TAG, format!("invalid tag {tag}")));
        }
        let local_box = agreement_comm_of(local_comm)?;
        let local = local_box.get();
        let leader = Rank::try_from(local_leader)
            .ok()
            .filter(|&r| r < local.size())
            .ok_or_else(|| {
                Failure::new(
                    MPI_ERR_RANK,
                    format!("local_leader {local_leader} is not a rank of local_comm"),
                )
            })?;
        let local_world = world_ranks(local);
        let me = local_world[local.rank() as usize];

        // The leaders exchange their groups; each tells its group the outcome and the other
        // group: [verdict, whether peer_comm is MPI_COMM_WORLD, remote size], then the ranks.
        let mut head = [LEADERS_FAILED, 0, 0];
        let mut remote_world = Vec::new();
        // A leader whose own arguments are wrong tells its group so before it returns (its
        // group would otherwise wait in the broadcast).
        let mut refused = None;
        if local.rank() == leader {
            let checked = agreement_comm_of(peer_comm).and_then(|peer_box| {
                Rank::try_from(remote_leader)
                    .ok()
                    .filter(|&r| r < peer_box.get().size())
                    .map(|r| (peer_box, r))
                    .ok_or_else(|| {
                        Failure::new(
                            MPI_ERR_RANK,
                            format!("remote_leader {remote_leader} is not a rank of peer_comm"),
                        )
                    })
            });
            match checked {
                Err(failure) => {
                    head[0] = LEADER_REFUSED;
                    refused = Some(failure);
                }
                Ok((peer_box, remote_leader)) => {
                    let peer = peer_box.get();
                    head[1] = u32::from(peer_comm == MPI_COMM_WORLD);
                    if let Ok(remote) = exchange(peer, &local_world, remote_leader, tag) {
                        let union: Vec<u32> = local_world.iter().chain(&remote).copied().collect();
                        head[0] = match participants_are(peer, &union) {
                            Ok(true) => FINE,
                            Ok(false) => NOT_THE_PARTICIPANTS,
                            Err(_) => LEADERS_FAILED,
                        };
                        head[2] = remote.len() as u32;
                        remote_world = remote;
                    }
                }
            }
        }
        let told = local.broadcast(&mut head, leader).and_then(|()| {
            if head[0] == FINE {
                remote_world.resize(head[2] as usize, 0);
                local.broadcast(&mut remote_world, leader)
            } else {
                Ok(())
            }
        });
        if let Some(failure) = refused {
            return Err(failure);
        }
        if told.is_ok() && head[0] == LEADER_REFUSED {
            return Err(Failure::new(
                MPI_ERR_ARG,
                "MPI_Intercomm_create: the local leader refused its arguments (peer_comm or \
                 remote_leader)",
            ));
        }
        if told.is_ok() && head[0] == NOT_THE_PARTICIPANTS {
            return Err(Failure::new(
                MPI_ERR_ARG,
                "MPI_Intercomm_create: the participants of peer_comm are not exactly the two \
                 groups (the runtime creates communicators over every participant of a parent)",
            ));
        }
        // Without word from the leader (it failed), a rank that passed no valid peer_comm
        // takes MPI_COMM_WORLD, the usual one.
        let peer_handle = if head[1] == 1 || (told.is_err() && !valid(peer_comm)) {
            MPI_COMM_WORLD
        } else {
            peer_comm
        };
        let peer_box = agreement_comm_of(peer_handle)?;
        let peer = peer_box.get();
        // Everyone agrees whether both groups know each other; only then the creations.
        let fine = told.is_ok() && head[0] == FINE;
        match peer.agree(u32::from(fine)) {
            Ok(1) => {}
            Ok(_) | Err(Error::AgreeProcFailed { .. }) => {
                return Err(Failure::new(
                    MPIX_ERR_PROC_FAILED,
                    "MPI_Intercomm_create: a leader or a member failed before the groups were \
                     exchanged",
                ))
            }
            Err(error) => return Err(error.into()),
        }
        let local_first = local_world[0] < remote_world[0];
        let (a, b) = if local_first {
            (&local_world, &remote_world)
        } else {
            (&remote_world, &local_world)
        };
        let a_first: Vec<u32> = a.iter().chain(b.iter()).copied().collect();
        let b_first: Vec<u32> = b.iter().chain(a.iter()).copied().collect();
        let x = peer.split(Some(0), key_of(&a_first, me))?;
        let y = peer.split(Some(0), key_of(&b_first, me))?;
        let (Some(x), Some(y)) = (x, y) else {
            return Err(Failure::new(
                MPI_ERR_INTERN,
                "MPI_Intercomm_create: a split gave no communicator",
            ));
        };
        let (send, receive) = if local_first { (x, y) } else { (y, x) };
        let inter = Inter {
            receive: Arc::new(CommBox::Owned(receive)),
            local: local_world.clone(),
            remote: remote_world,
            rank: local.rank(),
            local_first,
        };
        let handle = with_runtime(|runtime| {
            let handle = runtime.add_comm(send, local_comm);
            install(runtime.comm_mut(handle)?, inter);
            Ok(handle)
        })?;
        newintercomm.write(handle);
        Ok(())
    })
}

/// `MPI_Intercomm_merge` (MPI-4.0 §7.6.2): an intracommunicator of both groups, the group
/// whose members pass `high` = false first (when both pass the same, the group whose first
/// member has the lower world rank first), each in its own order. Collective over both
/// groups: an agreement on the two groups' `high` over the communicator that spans them, then
/// a split of it (the runtime's fault-tolerant creation), so every rank gets the same
/// communicator or the same error.
///
/// # Errors
/// `MPI_ERR_COMM` for an invalid or freed handle or an intracommunicator; `MPI_ERR_ARG` for a
/// NULL `newintracomm`; `MPIX_ERR_PROC_FAILED` at every rank when a member failed (and the
/// failure is not acknowledged by every member); `MPIX_ERR_REVOKED` on a revoked communicator.
///
/// # Safety
/// `newintracomm` is NULL or points at a writable `MPI_Comm`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Intercomm_merge(
    intercomm: c_int,
    high: c_int,
    newintracomm: *mut c_int,
) -> c_int {
    boundary(intercomm, || {
        // SAFETY: checked for NULL by `out`.
        let newintracomm = unsafe { out(newintracomm, "newintracomm")? };
        let (send, inter) = with_runtime(|runtime| {
            let entry = runtime.comm(intercomm)?;
            match &entry.inter {
                Some(inter) => Ok((Arc::clone(&entry.comm), Arc::clone(inter))),
                None => Err(Failure::new(
                    MPI_ERR_COMM,
                    format!("communicator {intercomm} is not an intercommunicator"),
                )),
            }
        })?;
        // The communicator that numbers A first: both groups call the collectives on it.
        let spanning = if inter.local_first {
            send
        } else {
            Arc::clone(&inter.receive)
        };
        let comm = spanning.get();
        // Bit 0: A's high, bit 1: B's (each group ANDs its own bit, the other passes 1).
        let high = u32::from(high != 0);
        let mine = if inter.local_first {
            high | 0b10
        } else {
            0b01 | (high << 1)
        };
        let agreed = comm.agree(mine)?;
        let (high_a, high_b) = (agreed & 1 == 1, agreed & 2 == 2);
        let a_size = if inter.local_first {
            inter.local.len()
        } else {
            inter.remote.len()
        } as i32;
        let b_size = comm.size() as i32 - a_size;
        let rank = comm.rank() as i32;
        let key = if high_a && !high_b {
            // B first.
            if rank >= a_size {
                rank - a_size
            } else {
                rank + b_size
            }
        } else {
            rank
        };
        let made = comm.split(Some(0), key)?;
        let handle = match made {
            Some(made) => with_runtime(|runtime| Ok(runtime.add_comm(made, intercomm)))?,
            None => MPI_COMM_NULL,
        };
        newintracomm.write(handle);
        Ok(())
    })
}

/// The intercommunicator part of `handle`, or `MPI_ERR_COMM` for an intracommunicator.
fn required(handle: c_int) -> Result<Arc<Inter>, Failure> {
    inter_of(handle)?.ok_or_else(|| {
        Failure::new(
            MPI_ERR_COMM,
            format!("communicator {handle} is not an intercommunicator"),
        )
    })
}

/// `MPIX_Comm_agree` on an intercommunicator, as ULFM defines it: `mine` is this rank's
/// contribution and the result the bitwise AND over the *remote* group's contributions. Two
/// agreements over the communicator that spans both groups (numbering A first), in which one
/// group contributes its flags and the other all ones; every member of both groups calls both
/// whatever the first gave, so the outcome is uniform. `AgreeProcFailed` (with the agreed
/// flag) when either reports a failure that not every contributor acknowledged.
///
/// # Errors
/// The outer error: `MPI_ERR_COMM` for an invalid handle or an intracommunicator; the inner
/// one: the agreement's.
pub(crate) fn agree(handle: c_int, mine: u32) -> Result<Result<u32, Error>, Failure> {
    let (send, inter) = with_runtime(|runtime| {
        let entry = runtime.comm(handle)?;
        Ok((
            Arc::clone(&entry.comm),
            entry
                .inter
                .clone()
                .ok_or_else(|| Failure::new(MPI_ERR_COMM, "not an intercommunicator"))?,
        ))
    })?;
    let spanning = if inter.local_first {
        send
    } else {
        Arc::clone(&inter.receive)
    };
    let comm = spanning.get();
    let (for_a, for_b) = if inter.local_first {
        (mine, u32::MAX)
    } else {
        (u32::MAX, mine)
    };
    let a = comm.agree(for_a);
    let b = comm.agree(for_b);
    let (remote, local) = if inter.local_first { (b, a) } else { (a, b) };
    Ok(match (remote, local) {
        (Ok(flag), Ok(_)) => Ok(flag),
        (Err(Error::AgreeProcFailed { flag }), _)
        | (Ok(flag), Err(Error::AgreeProcFailed { .. })) => Err(Error::AgreeProcFailed { flag }),
        (Err(error), _) | (_, Err(error)) => Err(error),
    })
}

/// `MPI_Comm_remote_size`: the size of the remote group (failed members included).
///
/// # Errors
/// `MPI_ERR_COMM` for an invalid or freed handle or an intracommunicator; `MPI_ERR_ARG` for a
/// NULL `size`.
///
/// # Safety
/// `size` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_remote_size(comm: c_int, size: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let size = unsafe { out(size, "size")? };
        size.write(required(comm)?.remote.len() as c_int);
        Ok(())
    })
}

/// `MPI_Comm_remote_group`: a new group of the remote group's members, in their order.
///
/// # Errors
/// As `MPI_Comm_remote_size`.
///
/// # Safety
/// `group` is NULL or points at a writable `MPI_Group`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Comm_remote_group(comm: c_int, group: *mut c_int) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let group = unsafe { out(group, "group")? };
        let inter = required(comm)?;
        let handle = with_runtime(|runtime| world_group(runtime, &inter.remote))?;
        group.write(handle);
        Ok(())
    })
}

/// Registers the group of world ranks `members` (in that order) and returns its handle.
pub(crate) fn world_group(
    runtime: &mut crate::runtime::Runtime,
    members: &[u32],
) -> Result<c_int, Failure> {
    let made = runtime.universe.world().group().incl(members)?;
    Ok(runtime.add_group(made))
}

/// `MPI_Comm_compare` of two handles of which at least one is an intercommunicator:
/// `MPI_IDENT` for the same handle, `MPI_CONGRUENT` for two intercommunicators with the same
/// local and remote groups in the same order, `MPI_SIMILAR` for the same groups in another
/// order, `MPI_UNEQUAL` otherwise (an intercommunicator and an intracommunicator).
pub(crate) fn compare(first: &Inter, second: Option<&Inter>) -> c_int {
    let Some(second) = second else {
        return MPI_UNEQUAL;
    };
    if first.local == second.local && first.remote == second.remote {
        return MPI_CONGRUENT;
    }
    let sorted = |v: &[u32]| {
        let mut v = v.to_vec();
        v.sort_unstable();
        v
    };
    if sorted(&first.local) == sorted(&second.local)
        && sorted(&first.remote) == sorted(&second.remote)
    {
        MPI_SIMILAR
    } else {
        MPI_UNEQUAL
    }
}

/// The communicator of intercommunicator `handle` that spans both groups numbering A first
/// (the one both groups run their collectives on).
///
/// # Errors
/// `MPI_ERR_COMM` for an invalid handle or an intracommunicator.
pub(crate) fn spanning(handle: c_int) -> Result<Arc<CommBox>, Failure> {
    let inter = required(handle)?;
    let send = with_runtime(|runtime| Ok(Arc::clone(&runtime.comm(handle)?.comm)))?;
    Ok(if inter.local_first {
        send
    } else {
        Arc::clone(&inter.receive)
    })
}

/// `MPI_Comm_split` on an intercommunicator (MPI-4.0 §7.4.2): each group splits its own
/// members by `color` (`None`: `MPI_UNDEFINED`), ordered by `key`, then by rank in the group;
/// the new intercommunicator of a color joins the local group's members of that color with the
/// remote group's. A rank whose color the other group does not have gets `MPI_COMM_NULL` (the
/// handle returned). `MPI_Comm_create` on an intercommunicator is this with one color for the
/// members of the local group argument, keyed by their place in it.
///
/// How: an all-gather of every member's color and key over the communicator that spans both
/// groups numbering A first, an agreement there on whether it reached every rank (so every rank
/// goes on, or every rank returns `MPIX_ERR_PROC_FAILED`), then the fault-tolerant split of
/// each of the two communicators that carry its traffic, with keys that number the new members
/// of each group in order, the group it sends from first: every rank gets the same
/// intercommunicator, or the same error.
///
/// `refused`: this rank's own error with its arguments; it still takes part, and every other
/// rank returns `MPI_ERR_ARG`.
///
/// # Errors
/// `MPI_ERR_COMM` for an invalid handle or an intracommunicator; `MPIX_ERR_PROC_FAILED` at
/// every rank when a member failed before the colors were exchanged; the creations' errors.
pub(crate) fn split(
    handle: c_int,
    color: Option<u32>,
    key: i32,
    refused: Option<Failure>,
) -> Result<c_int, Failure> {
    let inter = required(handle)?;
    let send = with_runtime(|runtime| Ok(Arc::clone(&runtime.comm(handle)?.comm)))?;
    let (spanning, other) = if inter.local_first {
        (send, Arc::clone(&inter.receive))
    } else {
        (Arc::clone(&inter.receive), send)
    };
    let comm = spanning.get();
    let mine = [u32::from(color.is_some()), color.unwrap_or(0), key as u32];
    let mut table = vec![0u32; 3 * comm.size() as usize];
    // Bit 0: the exchange reached this rank; bit 1: this rank's arguments were fine.
    let gathered = comm.all_gather(&mine, &mut table).is_ok();
    let flag = u32::from(gathered) | (u32::from(refused.is_none()) << 1);
    match comm.agree(flag) {
        Ok(0b11) => {}
        Ok(flag) if flag & 0b10 == 0 => {
            return Err(refused.unwrap_or_else(|| {
                Failure::new(
                    MPI_ERR_ARG,
                    "a member of the intercommunicator refused its arguments",
                )
            }))
        }
        Ok(_) | Err(Error::AgreeProcFailed { .. }) => {
            return Err(Failure::new(
                MPIX_ERR_PROC_FAILED,
                "MPI_Comm_split on an intercommunicator: a member failed before the colors \
                 were exchanged",
            ))
        }
        Err(error) => return Err(error.into()),
    }
    let a_size = if inter.local_first {
        inter.local.len()
    } else {
        inter.remote.len()
    };
    // The members of this rank's color in A and in B, each in its new order (spanning ranks).
    let me = comm.rank() as usize;
    let members = |range: std::ops::Range<usize>| -> Vec<usize> {
        let mut of_color: Vec<usize> = range
            .filter(|&r| table[3 * r] == 1 && Some(table[3 * r + 1]) == color)
            .collect();
        of_color.sort_by_key(|&r| (table[3 * r + 2] as i32, r));
        of_color
    };
    let (in_a, in_b) = (members(0..a_size), members(a_size..table.len() / 3));
    let new_color = color.filter(|_| !in_a.is_empty() && !in_b.is_empty());
    let place = |list: &[usize]| list.iter().position(|&r| r == me).unwrap_or(0) as i32;
    // Keys: A first in the spanning communicator's split, B first in the other's.
    let (key_a_first, key_b_first) = if me < a_size {
        (place(&in_a), (in_b.len() as i32) + place(&in_a))
    } else {
        ((in_a.len() as i32) + place(&in_b), place(&in_b))
    };
    let x = comm.split(new_color, key_a_first)?;
    let y = other.get().split(new_color, key_b_first)?;
    let (Some(x), Some(y)) = (x, y) else {
        return Ok(MPI_COMM_NULL);
    };
    let world_of = |list: &[usize]| -> Vec<u32> {
        let a = if inter.local_first {
            &inter.local
        } else {
            &inter.remote
        };
        let b = if inter.local_first {
            &inter.remote
        } else {
            &inter.local
        };
        list.iter()
            .map(|&r| if r < a_size { a[r] } else { b[r - a_size] })
            .collect()
    };
    let (a_world, b_world) = (world_of(&in_a), world_of(&in_b));
    let (send, receive, local, remote, rank) = if inter.local_first {
        (x, y, a_world, b_world, place(&in_a))
    } else {
        (y, x, b_world, a_world, place(&in_b))
    };
    let inter = Inter::new(
        Arc::new(CommBox::Owned(receive)),
        local,
        remote,
        rank as Rank,
        inter.local_first,
    );
    with_runtime(|runtime| {
        let made = runtime.add_comm(send, handle);
        install(runtime.comm_mut(made)?, inter);
        Ok(made)
    })
}

// The `PMPI_` names of this module's functions.
profiling_names!("intercomm.rs");
