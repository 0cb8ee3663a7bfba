// SPDX-License-Identifier: MIT OR Apache-2.0
//! Collectives on intercommunicators (MPI-4.0 §6.2.2): data goes from one group to the other.
//!
//! In a rooted call (`MPI_Bcast`, `MPI_Reduce`, `MPI_Gather(v)`, `MPI_Scatter(v)`) the root
//! passes `MPI_ROOT`, the other members of its group `MPI_PROC_NULL`, and the members of the
//! other group the root's rank in the root's group. In the all-to-all calls
//! (`MPI_Allgather(v)`, `MPI_Alltoall(v/w)`, `MPI_Allreduce`) each group receives what the
//! other group sent (an all-reduce: the reduction of the other group's contributions).
//!
//! How: each call is one or two of the runtime's collectives over the communicator that spans
//! both groups numbering group A first (the one the intercommunicator's barrier runs on), with
//! blocks of zero bytes where no data goes, on the data packed as `MPI_Pack` packs it: no
//! algorithm of its own. A rooted call first finds the root with an all-reduce of two words
//! (the root group's other members know neither the root nor, in a broadcast, the length). A reduction gathers the contributions and combines them where the
//! result goes, in rank order (`MPI_Reduce_local`'s code: user operations and every datatype
//! the local reduction takes), so its cost grows with the group's size: fine for the control
//! traffic intercommunicators usually carry, not for large vectors.
//!
//! Failures: a member that failed makes the underlying collective fail with
//! `MPIX_ERR_PROC_FAILED` at the ranks that depended on it, as on an intracommunicator.

use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::Arc;

use runthrough::{Op, Partition, PartitionMut, Rank};

use crate::constants::*;
use crate::datatypes::IN_PLACE;
use crate::derived::{layout_of, Data};
use crate::errors::Failure;
use crate::runtime::CommBox;

/// An intercommunicator seen from this rank: the spanning communicator and where each group
/// sits in it.
pub(crate) struct Sides {
    spanning: Arc<CommBox>,
    local: usize,
    remote: usize,
    local_first: bool,
}

/// What this rank is in a rooted call.
enum Role {
    /// `MPI_ROOT`: the root.
    Root,
    /// `MPI_PROC_NULL`: another member of the root's group (no data).
    Idle,
    /// A member of the other group, the root being this rank of the root's group.
    Leaf(usize),
}

impl Sides {
    /// `handle`'s sides if it is an intercommunicator; `None` for an intracommunicator.
    ///
    /// # Errors
    /// `MPI_ERR_COMM` for an invalid handle.
    pub(crate) fn of(handle: c_int) -> Result<Option<Sides>, Failure> {
        // No lookup (a lock of the library's table) per collective in a process that never
        // made an intercommunicator: the call's own lookup then checks the handle.
        if !crate::intercomm::any_intercommunicator() {
            return Ok(None);
        }
        let Some(inter) = crate::intercomm::inter_of(handle)? else {
            return Ok(None);
        };
        Ok(Some(Sides {
            spanning: crate::intercomm::spanning(handle)?,
            local: inter.local.len(),
            remote: inter.remote.len(),
            local_first: inter.local_first(),
        }))
    }

    /// The remote group's size.
    pub(crate) fn remote_size(&self) -> usize {
        self.remote
    }

    /// The rank in the spanning communicator of rank `r` of the remote group.
    fn remote_at(&self, r: usize) -> usize {
        if self.local_first {
            self.local + r
        } else {
            r
        }
    }

    /// Where the remote group's ranks start in the spanning communicator.
    fn remote_start(&self) -> usize {
        self.remote_at(0)
    }

    /// The role a rooted call's `root` argument gives this rank.
    fn role(&self, root: c_int) -> Result<Role, Failure> {
        match root {
            MPI_ROOT => Ok(Role::Root),
            MPI_PROC_NULL => Ok(Role::Idle),
            r if usize::try_from(r).is_ok_and(|r| r < self.remote) => Ok(Role::Leaf(r as usize)),
            r => Err(Failure::new(
                MPI_ERR_ROOT,
                format!(
                    "root {r} on an intercommunicator: MPI_ROOT at the root, MPI_PROC_NULL at the \
                     other members of its group, the root's rank (below {}) in the other group",
                    self.remote
                ),
            )),
        }
    }

    /// The spanning communicator's rank of the root, which the root's group's other members
    /// do not know (they pass `MPI_PROC_NULL`), and the root's `extra` (a length the others
    /// need): one all-reduce of two words (the largest of each) over the spanning
    /// communicator.
    fn find_root(&self, role: &Role, extra: u64) -> Result<(Rank, u64), Failure> {
        let comm = self.spanning.get();
        let marker = match role {
            Role::Root => u64::from(comm.rank()) + 1,
            Role::Idle => 0,
            Role::Leaf(r) => self.remote_at(*r) as u64 + 1,
        };
        let mut found = [0u64; 2];
        comm.all_reduce(&[marker, extra], &mut found, Op::Max)?;
        Ok(((found[0] - 1) as Rank, found[1]))
    }
}

impl Sides {
    /// At the root (spanning rank `from`, this rank): block r, of `bytes[r]` bytes, from rank
    /// r of the other group, over the spanning communicator (this rank's group sends nothing);
    /// the gathered bytes and each block's range in them, in the other group's rank order.
    fn gather_remote(
        &self,
        bytes: &[usize],
        from: Rank,
    ) -> Result<(Vec<u8>, Vec<std::ops::Range<usize>>), Failure> {
        let comm = self.spanning.get();
        let mut all = vec![0; comm.size() as usize];
        for (r, &n) in bytes.iter().enumerate() {
            all[self.remote_at(r)] = n;
        }
        let (offsets, total) = displacements(&all);
        let mut gathered = vec![0u8; total];
        comm.gather_varcount(
            &[] as &[u8],
            Some(PartitionMut::new(&mut gathered, &all, &offsets)),
            from,
        )?;
        let ranges = (0..bytes.len())
            .map(|r| {
                let s = self.remote_at(r);
                offsets[s]..offsets[s] + all[s]
            })
            .collect();
        Ok((gathered, ranges))
    }
}

/// The counts and displacements of a `v` call, one of each per rank of the other group.
pub(crate) type Arrays = (Vec<c_int>, Vec<c_int>);

/// Offsets of consecutive blocks of `counts`.
fn displacements(counts: &[usize]) -> (Vec<usize>, usize) {
    let mut at = 0;
    let displs = counts
        .iter()
        .map(|&n| {
            let d = at;
            at += n;
            d
        })
        .collect();
    (displs, at)
}

/// The packed bytes of `count` elements of `datatype` at `buffer`.
///
/// # Safety
/// `buffer` points at them, readable (or is NULL with no data).
unsafe fn packed(buffer: *const c_void, count: c_int, datatype: c_int) -> Result<Vec<u8>, Failure> {
    if buffer == IN_PLACE {
        return Err(Failure::new(
            MPI_ERR_BUFFER,
            "MPI_IN_PLACE on an intercommunicator (MPI allows it only on intracommunicators)",
        ));
    }
    // SAFETY: forwarded contract.
    Ok(unsafe { Data::of(count, datatype)?.read(buffer)? }.into_owned())
}

/// The packed bytes of one element of `datatype`.
fn element_bytes(datatype: c_int) -> Result<usize, Failure> {
    Ok(layout_of(datatype, true)?.size)
}

/// Unpacks `bytes` into `count` elements of `datatype` at `buffer`.
///
/// # Errors
/// `MPI_ERR_TRUNCATE` when `bytes` holds more than they take.
///
/// # Safety
/// `buffer` points at them, writable (or is NULL with no data).
unsafe fn unpack(
    bytes: &[u8],
    buffer: *mut c_void,
    count: c_int,
    datatype: c_int,
) -> Result<(), Failure> {
    let data = Data::of(count, datatype)?;
    // SAFETY: forwarded contract.
    let mut target = unsafe { data.target(buffer)? };
    let room = target.receive_buffer();
    if bytes.len() > room.len() {
        return Err(Failure::new(
            MPI_ERR_TRUNCATE,
            format!(
                "{} bytes came for a receive buffer of {} bytes",
                bytes.len(),
                room.len()
            ),
        ));
    }
    room[..bytes.len()].copy_from_slice(bytes);
    target.finish(bytes.len());
    Ok(())
}

/// `buffer` moved `displacement` elements of `datatype` on.
fn at(buffer: *const c_void, displacement: c_int, datatype: c_int) -> Result<*mut c_void, Failure> {
    let extent = layout_of(datatype, true)?.extent;
    Ok(crate::datatypes::offset_by(buffer, extent * displacement as isize).cast_mut())
}

/// Reads `n` ints of array argument `name`.
///
/// # Safety
/// `pointer` is NULL or points at `n` readable ints.
unsafe fn ints(pointer: *const c_int, n: usize, name: &str) -> Result<Vec<c_int>, Failure> {
    // SAFETY: forwarded contract.
    Ok(unsafe { crate::point_to_point::array(pointer.cast_mut(), n as c_int, name) }?.to_vec())
}

fn non_negative(values: &[c_int], name: &str) -> Result<(), Failure> {
    match values.iter().find(|&&v| v < 0) {
        Some(v) => Err(Failure::new(
            MPI_ERR_COUNT,
            format!("{name} holds the negative count {v}"),
        )),
        None => Ok(()),
    }
}

/// `MPI_Bcast` on an intercommunicator: the root's data to every member of the other group.
///
/// # Safety
/// As `MPI_Bcast`.
pub(crate) unsafe fn bcast(
    sides: &Sides,
    buffer: *mut c_void,
    count: c_int,
    datatype: c_int,
    root: c_int,
) -> Result<(), Failure> {
    let role = sides.role(root)?;
    let comm = sides.spanning.get();
    let mut data = match role {
        // SAFETY: forwarded contract.
        Role::Root => unsafe { packed(buffer, count, datatype)? },
        _ => Vec::new(),
    };
    let (from, len) = sides.find_root(&role, data.len() as u64)?;
    data.resize(len as usize, 0);
    comm.broadcast(&mut data, from)?;
    if let Role::Leaf(_) = role {
        // SAFETY: forwarded contract.
        unsafe { unpack(&data, buffer, count, datatype)? };
    }
    Ok(())
}

/// `MPI_Gather` / `MPI_Gatherv` on an intercommunicator: every member of the other group's
/// block to the root, block r at `displs[r]` (elements of `recvtype`) with `counts[r]`
/// elements, at the root (`None` elsewhere).
///
/// # Safety
/// As `MPI_Gatherv`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gather(
    sides: &Sides,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    blocks: Option<Arrays>,
    recvtype: c_int,
    root: c_int,
) -> Result<(), Failure> {
    let role = sides.role(root)?;
    let comm = sides.spanning.get();
    let (from, _) = sides.find_root(&role, 0)?;
    match role {
        Role::Root => {
            let (counts, displs) = blocks.expect("the root has its blocks");
            non_negative(&counts, "recvcounts")?;
            let one = element_bytes(recvtype)?;
            let bytes: Vec<usize> = counts.iter().map(|&n| n as usize * one).collect();
            let (gathered, ranges) = sides.gather_remote(&bytes, from)?;
            for ((&n, &d), range) in counts.iter().zip(&displs).zip(ranges) {
                // SAFETY: forwarded contract: the root's blocks are writable.
                unsafe { unpack(&gathered[range], at(recvbuf, d, recvtype)?, n, recvtype)? };
            }
        }
        Role::Idle => comm.gather_varcount(&[] as &[u8], None, from)?,
        Role::Leaf(_) => {
            // SAFETY: forwarded contract.
            let data = unsafe { packed(sendbuf, sendcount, sendtype)? };
            comm.gather_varcount(&data, None, from)?;
        }
    }
    Ok(())
}

/// `MPI_Scatter` / `MPI_Scatterv` on an intercommunicator: the root's block r (`counts[r]`
/// elements of `sendtype` at `displs[r]`) to rank r of the other group.
///
/// # Safety
/// As `MPI_Scatterv`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatter(
    sides: &Sides,
    sendbuf: *const c_void,
    blocks: Option<Arrays>,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
) -> Result<(), Failure> {
    let role = sides.role(root)?;
    let comm = sides.spanning.get();
    let (from, _) = sides.find_root(&role, 0)?;
    match role {
        Role::Root => {
            let (counts, displs) = blocks.expect("the root has its blocks");
            non_negative(&counts, "sendcounts")?;
            let mut bytes = vec![0; comm.size() as usize];
            let mut data = Vec::new();
            for (r, (&n, &d)) in counts.iter().zip(&displs).enumerate() {
                // SAFETY: forwarded contract: the root's blocks are readable.
                let block = unsafe { packed(at(sendbuf, d, sendtype)?, n, sendtype)? };
                bytes[sides.remote_at(r)] = block.len();
                data.extend_from_slice(&block);
            }
            let (offsets, _) = displacements(&bytes);
            let send = Partition::new(&data, &bytes, &offsets);
            comm.scatter_varcount(Some(send), &mut [] as &mut [u8], from)?;
        }
        Role::Idle => comm.scatter_varcount(None, &mut [] as &mut [u8], from)?,
        Role::Leaf(_) => {
            let mut block = vec![0u8; recvcount.max(0) as usize * element_bytes(recvtype)?];
            comm.scatter_varcount(None, &mut block, from)?;
            // SAFETY: forwarded contract.
            unsafe { unpack(&block, recvbuf, recvcount, recvtype)? };
        }
    }
    Ok(())
}

/// `MPI_Allgather` / `MPI_Allgatherv` on an intercommunicator: every member's block to every
/// member of the other group, rank r's at `displs[r]` with `counts[r]` elements of `recvtype`:
/// an all-to-all whose send blocks are all this rank's block (the receive counts say every
/// length, so no lengths are exchanged first).
///
/// # Safety
/// As `MPI_Allgatherv`.
pub(crate) unsafe fn all_gather(
    sides: &Sides,
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    (counts, displs): (&[c_int], &[c_int]),
    recvtype: c_int,
) -> Result<(), Failure> {
    let mine = Block {
        count: sendcount,
        offset: 0,
        datatype: sendtype,
    };
    let send = vec![mine; sides.remote];
    let recv = typed_blocks(counts, displs, recvtype)?;
    // SAFETY: forwarded contract.
    unsafe { all_to_all(sides, sendbuf, &send, recvbuf, &recv) }
}

/// One block of an all-to-all: `count` elements of `datatype`, `offset` bytes from the
/// buffer pointer.
#[derive(Clone, Copy)]
pub(crate) struct Block {
    count: c_int,
    offset: isize,
    datatype: c_int,
}

/// The blocks of `counts` and `displs` (in elements of `datatype`: `MPI_Alltoall(v)`).
pub(crate) fn typed_blocks(
    counts: &[c_int],
    displs: &[c_int],
    datatype: c_int,
) -> Result<Vec<Block>, Failure> {
    non_negative(counts, "the counts")?;
    let extent = layout_of(datatype, true)?.extent;
    Ok(counts
        .iter()
        .zip(displs)
        .map(|(&count, &d)| Block {
            count,
            offset: extent.wrapping_mul(d as isize),
            datatype,
        })
        .collect())
}

/// The blocks of `MPI_Alltoallw`: byte displacements, a datatype each.
///
/// # Safety
/// The pointers are NULL or point at `n` readable ints.
pub(crate) unsafe fn byte_blocks(
    counts: *const c_int,
    displs: *const c_int,
    types: *const c_int,
    n: usize,
) -> Result<Vec<Block>, Failure> {
    // SAFETY: forwarded contract.
    let (counts, displs, types) = unsafe {
        (
            ints(counts, n, "the counts")?,
            ints(displs, n, "the displacements")?,
            ints(types, n, "the datatypes")?,
        )
    };
    non_negative(&counts, "the counts")?;
    Ok((0..n)
        .map(|r| Block {
            count: counts[r],
            offset: displs[r] as isize,
            datatype: types[r],
        })
        .collect())
}

/// `MPI_Alltoall` / `MPI_Alltoallv` / `MPI_Alltoallw` on an intercommunicator: send block r
/// to rank r of the other group, whose block lands at receive block r.
///
/// # Safety
/// As `MPI_Alltoallw`.
pub(crate) unsafe fn all_to_all(
    sides: &Sides,
    sendbuf: *const c_void,
    send: &[Block],
    recvbuf: *mut c_void,
    recv: &[Block],
) -> Result<(), Failure> {
    let comm = sides.spanning.get();
    let size = comm.size() as usize;
    let (mut send_bytes, mut recv_bytes) = (vec![0; size], vec![0; size]);
    let mut data = Vec::new();
    for (r, block) in send.iter().enumerate() {
        let from = crate::datatypes::offset_by(sendbuf, block.offset);
        // SAFETY: forwarded contract.
        let bytes = unsafe { packed(from, block.count, block.datatype)? };
        send_bytes[sides.remote_at(r)] = bytes.len();
        data.extend_from_slice(&bytes);
    }
    for (r, block) in recv.iter().enumerate() {
        recv_bytes[sides.remote_at(r)] = block.count as usize * element_bytes(block.datatype)?;
    }
    let (send_offsets, _) = displacements(&send_bytes);
    let (recv_offsets, total) = displacements(&recv_bytes);
    let mut received = vec![0u8; total];
    comm.ialltoall_varcount(
        Partition::new(&data, &send_bytes, &send_offsets),
        PartitionMut::new(&mut received, &recv_bytes, &recv_offsets),
    )?
    .wait()?;
    for (r, block) in recv.iter().enumerate() {
        let s = sides.remote_at(r);
        let bytes = &received[recv_offsets[s]..recv_offsets[s] + recv_bytes[s]];
        let to = crate::datatypes::offset_by(recvbuf, block.offset).cast_mut();
        // SAFETY: forwarded contract.
        unsafe { unpack(bytes, to, block.count, block.datatype)? };
    }
    Ok(())
}

/// Combines `blocks` (the packed contributions of the other group, in its rank order) into
/// `count` elements of `datatype` at `recvbuf`: `b0 op b1 op ... op bn-1`, as
/// `MPI_Reduce_local` combines (`inout = in op inout`, from the last block back).
///
/// # Safety
/// `recvbuf` points at `count` writable elements of `datatype`.
unsafe fn fold(
    blocks: &[&[u8]],
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
) -> Result<(), Failure> {
    let Some((last, rest)) = blocks.split_last() else {
        return Ok(());
    };
    // SAFETY: forwarded contract.
    unsafe { unpack(last, recvbuf, count, datatype)? };
    let layout = layout_of(datatype, true)?;
    let window = layout.window(count.max(0) as usize)?;
    let mut scratch = vec![0u8; window.len];
    // The scratch elements' origin: `low` bytes before the scratch's first byte.
    let origin = crate::datatypes::offset_by(scratch.as_mut_ptr().cast(), -window.low).cast_mut();
    for block in rest.iter().rev() {
        // SAFETY: `origin` is where `count` elements of `datatype` lie in `scratch`.
        unsafe { unpack(block, origin, count, datatype)? };
        // SAFETY: both buffers hold `count` elements of `datatype`.
        unsafe { crate::collectives::reduce_local(origin, recvbuf, count, datatype, op)? };
    }
    Ok(())
}

/// `MPI_Reduce` on an intercommunicator: the other group's contributions combined at the
/// root.
///
/// # Safety
/// As `MPI_Reduce`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn reduce(
    sides: &Sides,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
    root: c_int,
) -> Result<(), Failure> {
    let role = sides.role(root)?;
    let comm = sides.spanning.get();
    let (from, _) = sides.find_root(&role, 0)?;
    match role {
        Role::Root => {
            let one = element_bytes(datatype)? * count.max(0) as usize;
            let (gathered, ranges) = sides.gather_remote(&vec![one; sides.remote], from)?;
            let blocks: Vec<&[u8]> = ranges.into_iter().map(|r| &gathered[r]).collect();
            // SAFETY: forwarded contract.
            unsafe { fold(&blocks, recvbuf, count, datatype, op) }
        }
        Role::Idle => Ok(comm.gather_varcount(&[] as &[u8], None, from)?),
        Role::Leaf(_) => {
            // SAFETY: forwarded contract.
            let data = unsafe { packed(sendbuf, count, datatype)? };
            Ok(comm.gather_varcount(&data, None, from)?)
        }
    }
}

/// `MPI_Allreduce` on an intercommunicator: each group gets the other group's contributions
/// combined.
///
/// # Safety
/// As `MPI_Allreduce`.
pub(crate) unsafe fn all_reduce(
    sides: &Sides,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: c_int,
    op: c_int,
) -> Result<(), Failure> {
    let comm = sides.spanning.get();
    // SAFETY: forwarded contract.
    let mine = unsafe { packed(sendbuf, count, datatype)? };
    let one = mine.len();
    let mut gathered = vec![0u8; one * comm.size() as usize];
    comm.all_gather(&mine, &mut gathered)?;
    let start = one * sides.remote_start();
    let blocks: Vec<&[u8]> = gathered[start..start + one * sides.remote]
        .chunks(one.max(1))
        .collect();
    // SAFETY: forwarded contract.
    unsafe { fold(&blocks, recvbuf, count, datatype, op) }
}

/// The count and displacement arrays of a `v` call on an intercommunicator: `n` (the remote
/// group's size) of each.
///
/// # Safety
/// The pointers are NULL or point at `n` readable ints.
pub(crate) unsafe fn arrays(
    counts: *const c_int,
    displs: *const c_int,
    n: usize,
    (counts_name, displs_name): (&str, &str),
) -> Result<Arrays, Failure> {
    // SAFETY: forwarded contract.
    unsafe { Ok((ints(counts, n, counts_name)?, ints(displs, n, displs_name)?)) }
}

/// The blocks of a rooted `v` call at the root (`MPI_ROOT`): [`arrays`]; `None` elsewhere,
/// where MPI reads no arrays.
///
/// # Safety
/// At the root, the pointers are NULL or point at `n` readable ints.
pub(crate) unsafe fn root_arrays(
    root: c_int,
    counts: *const c_int,
    displs: *const c_int,
    n: usize,
    names: (&str, &str),
) -> Result<Option<Arrays>, Failure> {
    if root != MPI_ROOT {
        return Ok(None);
    }
    // SAFETY: forwarded contract.
    unsafe { arrays(counts, displs, n, names) }.map(Some)
}

/// `n` blocks of `count` elements one after the other: counts and displacements.
pub(crate) fn uniform(count: c_int, n: usize) -> Arrays {
    (vec![count; n], (0..n as c_int).map(|r| r * count).collect())
}
