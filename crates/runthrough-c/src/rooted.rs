// SPDX-License-Identifier: MIT OR Apache-2.0
//! The gathers, scatters and all-to-alls (`MPI_Gather(v)`, `MPI_Scatter(v)`,
//! `MPI_Allgather(v)`, `MPI_Alltoall(v)`) with derived or pair datatypes: every block is packed
//! into one contiguous buffer of the runtime's gather, scatter, all-gather or all-to-all and
//! unpacked where it lands. A root's block r of `counts[r]` elements lies at
//! `displs[r]` extents of its type (`r · count` for the fixed-count forms), as in MPI; the
//! runtime's failure rules hold (the blocks of ranks recognized as failed are left untouched).

use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::Arc;

use runthrough::{Comm, Partition, PartitionMut, Rank};

use crate::collectives::Scheduled;
use crate::constants::*;
use crate::datatypes::{output, zeroed, Element, IN_PLACE};
use crate::derived::{layout_of, Data, Layout, MPI_Aint, Raw, Target, Unpack, Window};
use crate::errors::Failure;
use crate::runtime::Scratch;

/// Whether `datatype` is a basic type (which the plain paths handle).
pub(crate) fn basic(datatype: c_int) -> bool {
    Element::of(datatype).is_ok()
}

/// The blocks, one per rank, of a buffer of any datatype: where each lies in the C buffer and
/// in the packed one.
pub(crate) struct Blocks {
    /// The type of each rank's block (one type for all but in `MPI_Alltoallw`).
    layouts: Vec<Arc<Layout>>,
    /// Elements of each rank's block.
    counts: Vec<usize>,
    /// The byte offset of each block from the C buffer pointer (negative when the type's
    /// extent is), and the window of it its data touches.
    at: Vec<(isize, Window)>,
    /// Packed bytes of each block, and their offsets in the packed buffer.
    pub(crate) packed: Vec<usize>,
    pub(crate) packed_at: Vec<usize>,
    /// The bytes of the C buffer that the blocks touch: `[low, end)` from its pointer (`low`
    /// negative for data before it, an address when the buffer is `MPI_BOTTOM`).
    low: isize,
    end: isize,
    /// The packed total.
    total: usize,
}

fn too_large() -> Failure {
    Failure::new(MPI_ERR_COUNT, "count too large")
}

impl Blocks {
    /// `counts[r]` elements of `datatype` at `displs[r]` extents, for each rank r (of either
    /// sign: a block may lie before the buffer pointer, as MPI allows).
    pub(crate) fn new(
        counts: &[c_int],
        displs: &[c_int],
        datatype: c_int,
    ) -> Result<Blocks, Failure> {
        let layout = layout_of(datatype, true)?;
        let offsets = displs
            .iter()
            .map(|&displ| {
                (displ as isize)
                    .checked_mul(layout.extent)
                    .ok_or_else(too_large)
            })
            .collect::<Result<Vec<_>, Failure>>()?;
        Blocks::of(counts, &offsets, &vec![layout; counts.len()])
    }

    /// `count` elements of `datatype` for each of `n` ranks, one block after the other (the
    /// fixed-count forms), the displacements computed in full width (`r · count` may pass
    /// `c_int` where the elements are small).
    pub(crate) fn regular(count: c_int, n: usize, datatype: c_int) -> Result<Blocks, Failure> {
        let layout = layout_of(datatype, true)?;
        let offsets = (0..n)
            .map(|r| {
                isize::try_from(r)
                    .ok()?
                    .checked_mul(count as isize)?
                    .checked_mul(layout.extent)
            })
            .collect::<Option<Vec<isize>>>()
            .ok_or_else(too_large)?;
        Blocks::of(&vec![count; n], &offsets, &vec![layout; n])
    }

    /// `counts[r]` elements of `types[r]` at byte displacement `displs[r]` (of either sign),
    /// for each rank r (`MPI_Alltoallw`).
    pub(crate) fn typed(
        counts: &[c_int],
        displs: &[c_int],
        types: &[c_int],
    ) -> Result<Blocks, Failure> {
        let offsets: Vec<isize> = displs.iter().map(|&displ| displ as isize).collect();
        let layouts = types
            .iter()
            .map(|&datatype| layout_of(datatype, true))
            .collect::<Result<Vec<_>, Failure>>()?;
        Blocks::of(counts, &offsets, &layouts)
    }

    fn of(counts: &[c_int], offsets: &[isize], layouts: &[Arc<Layout>]) -> Result<Blocks, Failure> {
        let mut blocks = Blocks {
            counts: Vec::with_capacity(counts.len()),
            at: Vec::with_capacity(counts.len()),
            packed: Vec::with_capacity(counts.len()),
            packed_at: Vec::with_capacity(counts.len()),
            low: isize::MAX,
            end: isize::MIN,
            total: 0,
            layouts: layouts.to_vec(),
        };
        for ((&count, &at), layout) in counts.iter().zip(offsets).zip(layouts) {
            let count = usize::try_from(count)
                .map_err(|_| Failure::new(MPI_ERR_COUNT, format!("negative count {count}")))?;
            let window = layout.window(count)?;
            let packed = count.checked_mul(layout.size).ok_or_else(too_large)?;
            if window.len > 0 {
                let first = at.checked_add(window.low).ok_or_else(too_large)?;
                let end = isize::try_from(window.len)
                    .ok()
                    .and_then(|len| first.checked_add(len))
                    .ok_or_else(too_large)?;
                blocks.low = blocks.low.min(first);
                blocks.end = blocks.end.max(end);
            }
            blocks.counts.push(count);
            blocks.at.push((at, window));
            blocks.packed_at.push(blocks.total);
            blocks.packed.push(packed);
            blocks.total = blocks.total.checked_add(packed).ok_or_else(too_large)?;
        }
        if blocks.end < blocks.low {
            // No data at all.
            (blocks.low, blocks.end) = (0, 0);
        }
        if blocks.end.checked_sub(blocks.low).is_none() || blocks.total > isize::MAX as usize {
            return Err(too_large());
        }
        Ok(blocks)
    }

    /// The bytes of C buffer `buffer` that the blocks touch, to read run by run.
    ///
    /// # Safety
    /// The bytes of the blocks' data in `buffer` are readable and unchanged while the result is
    /// used (`buffer` may be `MPI_BOTTOM`, NULL, when the blocks' displacements and types place
    /// them at addresses).
    ///
    /// # Errors
    /// `MPI_ERR_BUFFER` for a NULL (or `MPI_IN_PLACE`) start with data.
    pub(crate) unsafe fn read(&self, buffer: *const c_void) -> Result<Raw, Failure> {
        let window = Window {
            low: self.low,
            len: (self.end - self.low) as usize,
        };
        // SAFETY: forwarded contract.
        unsafe { window.read(buffer) }
    }

    /// [`Blocks::read`], to write.
    ///
    /// # Safety
    /// The bytes of the blocks' data in `buffer` are writable and used by nothing else while
    /// the result is used.
    ///
    /// # Errors
    /// As [`Blocks::read`].
    pub(crate) unsafe fn write(&self, buffer: *mut c_void) -> Result<Raw, Failure> {
        // SAFETY: forwarded contract.
        unsafe { self.read(buffer) }
    }

    /// Block r's bytes within what [`Blocks::read`] returns, and their origin.
    fn place(&self, buffer: Raw, r: usize) -> (Raw, isize) {
        let (at, window) = self.at[r];
        if window.len == 0 {
            return (buffer.sub(0, 0), window.low);
        }
        // Within [low, end), as `of` checked.
        let from = (at + window.low - self.low) as usize;
        (buffer.sub(from, window.len), window.low)
    }

    /// The blocks of `buffer` (what [`Blocks::read`] gave), packed.
    pub(crate) fn pack(&self, buffer: Raw) -> Result<Vec<u8>, Failure> {
        let mut packed = zeroed(self.total)?;
        for r in 0..self.counts.len() {
            let (block, origin) = self.place(buffer, r);
            let block = self.layouts[r].pack_at(self.counts[r], block, origin)?;
            packed[self.packed_at[r]..self.packed_at[r] + self.packed[r]].copy_from_slice(&block);
        }
        Ok(packed)
    }

    /// When every block's data is one run in packed order (basic types, dense derived ones)
    /// and the blocks with data tile one run of the C buffer with no gap, at a displacement of
    /// 0 or more: that run (`start..end` bytes from the buffer pointer) and each block's offset
    /// in it (0 for a block without data, whose displacement MPI does not look at). The blocks
    /// can then be written in the C buffer itself, by a call that holds exactly the bytes it
    /// writes (a gap may be the program's, or another pending call's).
    pub(crate) fn direct(&self) -> Option<(usize, usize, Vec<usize>)> {
        if !self.layouts.iter().all(|layout| layout.is_dense()) {
            return None;
        }
        let mut spans = Vec::with_capacity(self.at.len());
        for (&(at, _), &len) in self.at.iter().zip(&self.packed) {
            if len > 0 {
                let at = usize::try_from(at).ok()?;
                spans.push((at, at.checked_add(len)?));
            }
        }
        spans.sort_unstable();
        let (start, mut end) = spans.first().copied().unwrap_or((0, 0));
        for &(at, block_end) in &spans[1.min(spans.len())..] {
            if at != end {
                // A gap (or overlapping blocks, which MPI does not allow).
                return None;
            }
            end = block_end;
        }
        let offsets = self
            .at
            .iter()
            .zip(&self.packed)
            .map(|(&(at, _), &len)| if len > 0 { at as usize - start } else { 0 })
            .collect();
        Some((start, end, offsets))
    }

    /// Unpacks every block of `packed` into `buffer` (what [`Blocks::write`] gave).
    pub(crate) fn unpack(&self, packed: &[u8], buffer: Raw) {
        for r in 0..self.counts.len() {
            let (block, origin) = self.place(buffer, r);
            let from = &packed[self.packed_at[r]..self.packed_at[r] + self.packed[r]];
            self.layouts[r].unpack_at(self.counts[r], from, block, origin);
        }
    }
}

/// `MPI_Gather` / `MPI_Gatherv` with a derived or pair type on either side: `counts` and
/// `displs` are the root's (`None` elsewhere); `sendbuf` may be `MPI_IN_PLACE` at the root.
/// Non-roots pass `varcount` as the root does, so every rank runs the same runtime call.
///
/// # Safety
/// As `MPI_Gatherv`, the buffers described by the given counts and types.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    layout: Option<(&[c_int], &[c_int])>,
    recvtype: c_int,
    root: Rank,
    comm: &Comm,
    varcount: bool,
) -> Result<(), Failure> {
    let blocks = match layout {
        Some((counts, displs)) => Some(Blocks::new(counts, displs, recvtype)?),
        None => None,
    };
    let mut root_side = match &blocks {
        Some(blocks) => {
            // SAFETY: forwarded contract; used only during this call.
            let recv = unsafe { blocks.write(recvbuf)? };
            // The buffer's own contents first: blocks left untouched (of failed ranks, or
            // this rank's in place) are written back unchanged.
            let packed = blocks.pack(recv)?;
            Some((blocks, recv, packed))
        }
        None => None,
    };
    let me = comm.rank() as usize;
    let send: Vec<u8> = match &root_side {
        Some((blocks, _, packed)) if sendbuf == IN_PLACE => {
            packed[blocks.packed_at[me]..blocks.packed_at[me] + blocks.packed[me]].to_vec()
        }
        // SAFETY: forwarded contract; used only during this call.
        _ => unsafe { Data::of(sendcount, sendtype)?.read(sendbuf)? }.into_owned(),
    };
    match (&mut root_side, varcount) {
        (Some((blocks, _, packed)), true) => {
            let partition = PartitionMut::new(&mut packed[..], &blocks.packed, &blocks.packed_at);
            comm.gather_varcount(&send, Some(partition), root)?;
        }
        (Some((_, _, packed)), false) => comm.gather(&send, Some(&mut packed[..]), root)?,
        (None, true) => comm.gather_varcount(&send, None, root)?,
        (None, false) => comm.gather(&send, None, root)?,
    }
    if let Some((blocks, recv, packed)) = root_side {
        blocks.unpack(&packed, recv);
    }
    Ok(())
}

/// `MPI_Scatter` / `MPI_Scatterv` with a derived or pair type on either side: `counts` and
/// `displs` are the root's (`None` elsewhere); `recvbuf` may be `MPI_IN_PLACE` at the root.
///
/// # Safety
/// As `MPI_Scatterv`, the buffers described by the given counts and types.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn scatter(
    sendbuf: *const c_void,
    layout: Option<(&[c_int], &[c_int])>,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: Rank,
    comm: &Comm,
    varcount: bool,
) -> Result<(), Failure> {
    let root_side = match layout {
        Some((counts, displs)) => {
            let blocks = Blocks::new(counts, displs, sendtype)?;
            // SAFETY: forwarded contract; used only during this call.
            let packed = blocks.pack(unsafe { blocks.read(sendbuf)? })?;
            Some((blocks, packed))
        }
        None => None,
    };
    let me = comm.rank() as usize;
    let mut scratch;
    let mut target = match &root_side {
        // In place: the root's own block stays where it is; it receives into a scratch buffer.
        Some((blocks, _)) if recvbuf.cast_const() == IN_PLACE => {
            scratch = zeroed(blocks.packed[me])?;
            Target::Direct(&mut scratch)
        }
        // SAFETY: forwarded contract; used only during this call.
        _ => unsafe { Data::of(recvcount, recvtype)?.target(recvbuf)? },
    };
    let buffer = target.receive_buffer();
    let len = buffer.len();
    match (&root_side, varcount) {
        (Some((blocks, packed)), true) => comm.scatter_varcount(
            Some(Partition::new(packed, &blocks.packed, &blocks.packed_at)),
            buffer,
            root,
        )?,
        (Some((_, packed)), false) => comm.scatter(Some(packed), buffer, root)?,
        (None, true) => comm.scatter_varcount(None, buffer, root)?,
        (None, false) => comm.scatter(None, buffer, root)?,
    }
    target.finish(len);
    Ok(())
}

/// `MPI_Allgather` / `MPI_Allgatherv` with a derived or pair type on either side: `counts` and
/// `displs` (in elements of `recvtype`) describe every rank's block; `sendbuf` may be
/// `MPI_IN_PLACE`. The same runtime all-gather as the basic forms: blocks of one length
/// (`varcount`: padded to the largest).
///
/// # Safety
/// As `MPI_Allgatherv`, the buffers described by the given counts and types.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn all_gather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    counts: &[c_int],
    displs: &[c_int],
    recvtype: c_int,
    comm: &Comm,
    varcount: bool,
) -> Result<(), Failure> {
    let blocks = Blocks::new(counts, displs, recvtype)?;
    // SAFETY: forwarded contract; used only during this call.
    let recv = unsafe { blocks.write(recvbuf)? };
    // The buffer's own contents first: blocks left untouched (of failed ranks) are written
    // back unchanged.
    let mut packed = blocks.pack(recv)?;
    let me = comm.rank() as usize;
    let mine = blocks.packed_at[me]..blocks.packed_at[me] + blocks.packed[me];
    let mut send: Vec<u8> = if sendbuf == IN_PLACE {
        packed[mine].to_vec()
    } else {
        // SAFETY: forwarded contract; used only during this call.
        unsafe { Data::of(sendcount, sendtype)?.read(sendbuf)? }.into_owned()
    };
    if send.len() != blocks.packed[me] {
        return Err(Failure::new(
            MPI_ERR_COUNT,
            format!(
                "the send data has {} bytes and this rank's receive block {}",
                send.len(),
                blocks.packed[me]
            ),
        ));
    }
    if varcount {
        let block = blocks.packed.iter().copied().max().unwrap_or(0);
        let mut gathered = zeroed(block.checked_mul(counts.len()).ok_or_else(too_large)?)?;
        for r in 0..counts.len() {
            let from = &packed[blocks.packed_at[r]..blocks.packed_at[r] + blocks.packed[r]];
            gathered[r * block..r * block + blocks.packed[r]].copy_from_slice(from);
        }
        send.resize(block, 0);
        comm.all_gather(&send, &mut gathered)?;
        for r in 0..counts.len() {
            let to = blocks.packed_at[r]..blocks.packed_at[r] + blocks.packed[r];
            packed[to].copy_from_slice(&gathered[r * block..r * block + blocks.packed[r]]);
        }
    } else {
        comm.all_gather(&send, &mut packed)?;
    }
    blocks.unpack(&packed, recv);
    Ok(())
}

/// `MPI_Alltoall` with a derived or pair type on either side: block r of `sendcount` elements
/// of `sendtype` goes to rank r, the block from rank r lands at `r · recvcount` extents of
/// `recvtype`; `sendbuf` may be `MPI_IN_PLACE`. The same runtime all-to-all as the basic form.
///
/// # Safety
/// As `MPI_Alltoall`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn all_to_all(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    comm: &Comm,
) -> Result<(), Failure> {
    let n = comm.size() as usize;
    let receiving = Blocks::regular(recvcount, n, recvtype)?;
    // SAFETY: forwarded contract; used only during this call.
    let recv = unsafe { receiving.write(recvbuf)? };
    // The buffer's own contents first: blocks left untouched (from failed ranks) are written
    // back unchanged.
    let mut landing = receiving.pack(recv)?;
    let send = if sendbuf == IN_PLACE {
        landing.clone()
    } else {
        let sending = Blocks::regular(sendcount, n, sendtype)?;
        // SAFETY: forwarded contract; used only during this call.
        sending.pack(unsafe { sending.read(sendbuf)? })?
    };
    comm.all_to_all(&send, &mut landing)?;
    receiving.unpack(&landing, recv);
    Ok(())
}

/// The unpacking a non-blocking gather, all-gather or all-to-all of blocks with gaps does when
/// it succeeds: it owns the scratch buffer of packed blocks its request receives into, which
/// starts as the C buffer's own contents packed (so the blocks the call leaves untouched, of
/// ranks recognized as failed, are written back unchanged).
pub(crate) struct UnpackBlocks {
    /// From `Box::into_raw`; freed by `Drop`.
    scratch: *mut [u8],
    blocks: Blocks,
    /// The bytes of the C buffer the blocks touch.
    buffer: Raw,
}

impl std::fmt::Debug for UnpackBlocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnpackBlocks")
            .field("blocks", &self.blocks.packed.len())
            .field("bytes", &self.blocks.total)
            .finish()
    }
}

// SAFETY: `scratch` is owned by the `UnpackBlocks` (nothing else frees it), and `buffer` is the
// C caller's receive buffer, which MPI reserves to the request until it completes, from
// whatever thread completes it.
unsafe impl Send for UnpackBlocks {}

impl UnpackBlocks {
    /// An `UnpackBlocks` for `blocks` of C buffer `buffer`, and the scratch buffer of packed
    /// blocks (block r at `blocks.packed_at[r]`) the request receives into.
    ///
    /// # Safety
    /// The bytes of the blocks' data in `buffer` are readable and writable, and used by
    /// nothing else until the request completes; the returned slice must not be used after
    /// the `UnpackBlocks` is dropped or `apply`'d (the request that holds it is dropped
    /// first).
    ///
    /// # Errors
    /// As [`Blocks::write`] and [`Blocks::pack`].
    pub(crate) unsafe fn new(
        blocks: Blocks,
        buffer: *mut c_void,
    ) -> Result<(UnpackBlocks, &'static mut [u8]), Failure> {
        // SAFETY: forwarded contract; kept as a pointer until `apply`.
        let raw = unsafe { blocks.write(buffer)? };
        let packed = blocks.pack(raw)?;
        let scratch = Box::into_raw(packed.into_boxed_slice());
        let unpack = UnpackBlocks {
            scratch,
            blocks,
            buffer: raw,
        };
        // SAFETY: `scratch` is a live allocation that this `UnpackBlocks` frees only in `drop`,
        // and by the contract the slice is not used after that.
        let receive = unsafe { &mut *scratch };
        Ok((unpack, receive))
    }

    /// The blocks it unpacks.
    pub(crate) fn blocks(&self) -> &Blocks {
        &self.blocks
    }

    /// Unpacks every block into the C buffer. Called once the request that received into the
    /// scratch buffer is dropped.
    pub(crate) fn apply(self) {
        // SAFETY: `scratch` is live (freed only by drop) and no request uses it any more;
        // `buffer`'s bytes are reserved to this call by the C caller until it completes.
        let packed = unsafe { &*self.scratch };
        self.blocks.unpack(packed, self.buffer);
    }
}

impl Drop for UnpackBlocks {
    fn drop(&mut self) {
        // SAFETY: from `Box::into_raw` in `new`, freed only here.
        drop(unsafe { Box::from_raw(self.scratch) });
    }
}

/// The counts and displacements of a call's blocks at one rank, as the C caller gave them: a
/// fixed count, the blocks one after the other (`MPI_Igather`, ...), or two arrays of one entry
/// per rank (`MPI_Igatherv`, ...).
#[derive(Clone, Copy)]
pub(crate) enum Counts {
    Regular(c_int),
    Arrays(*const c_int, *const c_int),
}

/// The datatype of a call's blocks: one for all (displacements in its extents), or an array of
/// one per rank (`MPI_Ialltoallw`: displacements in bytes).
#[derive(Clone, Copy)]
pub(crate) enum Types {
    One(c_int),
    PerRank(*const c_int),
}

/// Reads `n` ints at `pointer`, the array argument `name` (an error for NULL).
///
/// # Safety
/// `pointer` is NULL or points at `n` readable ints.
unsafe fn ints(pointer: *const c_int, n: usize, name: &str) -> Result<Vec<c_int>, Failure> {
    // SAFETY: forwarded contract.
    Ok(unsafe { crate::point_to_point::array(pointer.cast_mut(), n as c_int, name) }?.to_vec())
}

/// The blocks, one per rank of `n`, that `counts` and `types` describe; an error when they are
/// invalid.
///
/// # Safety
/// Each array of `counts` and `types` is NULL or points at `n` readable ints.
unsafe fn blocks_of(counts: Counts, types: Types, n: usize) -> Result<Blocks, Failure> {
    let (counts, displs) = match (counts, types) {
        (Counts::Regular(count), Types::One(datatype)) => {
            return Blocks::regular(count, n, datatype);
        }
        // (No call has a fixed count and a type per rank.)
        (Counts::Regular(_), Types::PerRank(_)) => {
            return Err(Failure::new(
                MPI_ERR_INTERN,
                "one count with a type per rank",
            ))
        }
        // SAFETY: forwarded contract.
        (Counts::Arrays(counts, displs), _) => unsafe {
            (ints(counts, n, "counts")?, ints(displs, n, "displs")?)
        },
    };
    match types {
        Types::One(datatype) => Blocks::new(&counts, &displs, datatype),
        // SAFETY: forwarded contract.
        Types::PerRank(types) => {
            Blocks::typed(&counts, &displs, &unsafe { ints(types, n, "types") }?)
        }
    }
}

/// Where a scheduled call puts the blocks it receives (a partition of the C buffer itself when
/// the blocks are dense, else of a scratch buffer unpacked when the call succeeds), and, for
/// `own` (`MPI_IN_PLACE`), this rank's block as the buffer holds it now.
type Landing = (PartitionMut<'static, u8>, Option<Scratch>, Vec<u8>);

/// The [`Landing`] of `blocks` of C buffer `buffer`.
///
/// # Safety
/// The blocks' bytes of `buffer` are readable and writable, and used by nothing else until the
/// request completes; the request that gets the partition is dropped before the scratch.
unsafe fn landing(
    blocks: Blocks,
    buffer: *mut c_void,
    own: Option<usize>,
) -> Result<Landing, Failure> {
    if !buffer.is_null() {
        if let Some((start, end, offsets)) = blocks.direct() {
            // SAFETY: forwarded contract: the blocks' data is exactly bytes `start..end` of
            // `buffer` (checked by `direct`), which the call holds until it completes.
            let bytes: &'static mut [u8] =
                unsafe { output(buffer.cast::<u8>().wrapping_add(start).cast(), end - start) }?;
            let mine = own.map_or_else(Vec::new, |r| {
                bytes[offsets[r]..offsets[r] + blocks.packed[r]].to_vec()
            });
            return Ok((
                PartitionMut::new(bytes, &blocks.packed, &offsets),
                None,
                mine,
            ));
        }
    }
    // SAFETY: forwarded contract.
    let (unpack, scratch) = unsafe { UnpackBlocks::new(blocks, buffer) }?;
    let packed = unpack.blocks();
    let mine = own.map_or_else(Vec::new, |r| {
        scratch[packed.packed_at[r]..packed.packed_at[r] + packed.packed[r]].to_vec()
    });
    let partition = PartitionMut::new(scratch, &packed.packed, &packed.packed_at);
    Ok((partition, Some(Scratch::Blocks(unpack)), mine))
}

/// Where a scheduled call's result, `data` in C buffer `buffer`, lands: the buffer itself for
/// contiguous data; else a scratch buffer of packed elements, unpacked into the buffer when
/// the call succeeds, which holds the buffer's own contents packed first when `own` (what an
/// exclusive scan leaves at the first participant, the data of `MPI_IN_PLACE`). An error for a
/// NULL buffer with data.
///
/// # Safety
/// `buffer`'s elements are readable and writable, and used by nothing else, until the request
/// completes; the request that gets the slice is dropped before the scratch
/// (`PendingCollective`'s field order).
pub(crate) unsafe fn receive_into(
    data: &Data,
    buffer: *mut c_void,
    own: bool,
) -> Result<(&'static mut [u8], Option<Scratch>), Failure> {
    match data {
        // SAFETY: forwarded contract.
        Data::Contiguous(len) => Ok((unsafe { output(buffer, *len) }?, None)),
        Data::Strided {
            layout,
            count,
            window,
        } => {
            // SAFETY: forwarded contract.
            let (unpack, scratch) = unsafe { Unpack::new(layout, *count, *window, buffer) }?;
            if own {
                // SAFETY: forwarded contract; only read, here.
                let current = unsafe { window.read(buffer) }?;
                scratch.copy_from_slice(&layout.pack_at(*count, current, window.low)?);
            }
            Ok((scratch, Some(Scratch::Unpack(unpack, true))))
        }
    }
}

/// `count` elements of `datatype` at `buffer`, packed.
///
/// # Safety
/// As [`Data::read`].
unsafe fn packed(buffer: *const c_void, count: c_int, datatype: c_int) -> Result<Vec<u8>, Failure> {
    // SAFETY: forwarded contract.
    Ok(unsafe { Data::of(count, datatype)?.read(buffer) }?.into_owned())
}

/// A root argument that names a rank of `comm`.
fn root_in(root: c_int, comm: &Comm) -> Result<Rank, Failure> {
    Rank::try_from(root)
        .ok()
        .filter(|&root| root < comm.size())
        .ok_or_else(|| {
            Failure::new(
                MPI_ERR_ROOT,
                format!(
                    "root {root} is not a rank of the communicator (size {})",
                    comm.size()
                ),
            )
        })
}

/// The schedule of `MPI_Igather` / `MPI_Igatherv` (any datatypes, `MPI_IN_PLACE` at the root):
/// each rank packs its block and sends it to the root, which receives the blocks into its
/// buffer (or a scratch buffer unpacked when the call succeeds). `counts` is read at the root
/// only. Invalid arguments are the request's error.
///
/// # Safety
/// As for `MPI_Igatherv`: the buffers stay valid, and the receive buffer untouched by the
/// program, until the request completes; the arrays are valid during this call.
pub(crate) unsafe fn scheduled_gather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    counts: Counts,
    recvtype: c_int,
    root: c_int,
) -> Scheduled {
    Box::new(move |comm: &'static Comm| {
        let (me, root) = (comm.rank(), root_in(root, comm)?);
        let in_place = me == root && sendbuf == IN_PLACE;
        let (partition, scratch, own) = if me == root {
            // SAFETY: forwarded contract.
            let blocks = unsafe { blocks_of(counts, Types::One(recvtype), comm.size() as usize) }?;
            // SAFETY: forwarded contract.
            let (partition, scratch, own) =
                unsafe { landing(blocks, recvbuf, in_place.then_some(me as usize)) }?;
            (Some(partition), scratch, own)
        } else {
            (None, None, Vec::new())
        };
        let send = if in_place {
            own
        } else {
            // SAFETY: forwarded contract; read at the start only.
            unsafe { packed(sendbuf, sendcount, sendtype) }?
        };
        let request = comm.igather_varcount(&send, partition, root)?;
        Ok((request, scratch))
    })
}

/// The schedule of `MPI_Iscatter` / `MPI_Iscatterv` (any datatypes, `MPI_IN_PLACE` at the
/// root): the root packs every block and sends each its own; a block of a strided type is
/// unpacked where it lands when the call succeeds. `counts` is read at the root only.
///
/// # Safety
/// As for `MPI_Iscatterv`, as [`scheduled_gather`].
pub(crate) unsafe fn scheduled_scatter(
    sendbuf: *const c_void,
    counts: Counts,
    sendtype: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: c_int,
    root: c_int,
) -> Scheduled {
    Box::new(move |comm: &'static Comm| {
        let (me, root) = (comm.rank(), root_in(root, comm)?);
        let send = if me == root {
            // SAFETY: forwarded contract.
            let blocks = unsafe { blocks_of(counts, Types::One(sendtype), comm.size() as usize) }?;
            // SAFETY: forwarded contract; read at the start only.
            let packed = blocks.pack(unsafe { blocks.read(sendbuf) }?)?;
            Some((packed, blocks))
        } else {
            None
        };
        let (recv, scratch) = if me == root && recvbuf.cast_const() == IN_PLACE {
            (None, None)
        } else {
            let data = Data::of(recvcount, recvtype)?;
            // SAFETY: forwarded contract.
            let (recv, scratch) = unsafe { receive_into(&data, recvbuf, false) }?;
            (Some(recv), scratch)
        };
        let partition = send
            .as_ref()
            .map(|(packed, blocks)| Partition::new(packed, &blocks.packed, &blocks.packed_at));
        let request = comm.iscatter_varcount(partition, recv, root)?;
        Ok((request, scratch))
    })
}

/// The schedule of `MPI_Iallgather` / `MPI_Iallgatherv` (any datatypes, `MPI_IN_PLACE`): each
/// rank sends its block to every other, and receives theirs into its buffer (or a scratch
/// buffer unpacked when the call succeeds).
///
/// # Safety
/// As for `MPI_Iallgatherv`, as [`scheduled_gather`].
pub(crate) unsafe fn scheduled_all_gather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: c_int,
    recvbuf: *mut c_void,
    counts: Counts,
    recvtype: c_int,
) -> Scheduled {
    Box::new(move |comm: &'static Comm| {
        let me = comm.rank() as usize;
        let in_place = sendbuf == IN_PLACE;
        // SAFETY: forwarded contract.
        let blocks = unsafe { blocks_of(counts, Types::One(recvtype), comm.size() as usize) }?;
        // SAFETY: forwarded contract.
        let (partition, scratch, own) =
            unsafe { landing(blocks, recvbuf, in_place.then_some(me)) }?;
        let send = if in_place {
            own
        } else {
            // SAFETY: forwarded contract; read at the start only.
            unsafe { packed(sendbuf, sendcount, sendtype) }?
        };
        let request = comm.iall_gather_varcount(&send, partition)?;
        Ok((request, scratch))
    })
}

/// The schedule of `MPI_Ialltoall`, `MPI_Ialltoallv` and `MPI_Ialltoallw` (any datatypes,
/// `MPI_IN_PLACE`: the blocks to send are the receive buffer's): each rank sends each other its
/// block and receives theirs into its buffer (or a scratch buffer unpacked when the call
/// succeeds).
///
/// # Safety
/// As for `MPI_Ialltoallw`, as [`scheduled_gather`].
pub(crate) unsafe fn scheduled_all_to_all(
    sendbuf: *const c_void,
    send: (Counts, Types),
    recvbuf: *mut c_void,
    recv: (Counts, Types),
) -> Scheduled {
    Box::new(move |comm: &'static Comm| {
        let n = comm.size() as usize;
        let (counts, types) = if sendbuf == IN_PLACE { recv } else { send };
        // SAFETY: forwarded contract.
        let sending = unsafe { blocks_of(counts, types, n) }?;
        let from = if sendbuf == IN_PLACE {
            recvbuf.cast_const()
        } else {
            sendbuf
        };
        // SAFETY: forwarded contract; read at the start only, before the landing below.
        let outgoing = sending.pack(unsafe { sending.read(from) }?)?;
        // SAFETY: forwarded contract.
        let receiving = unsafe { blocks_of(recv.0, recv.1, n) }?;
        // SAFETY: forwarded contract.
        let (partition, scratch, _) = unsafe { landing(receiving, recvbuf, None) }?;
        let outgoing = Partition::new(&outgoing, &sending.packed, &sending.packed_at);
        let request = comm.ialltoall_varcount(outgoing, partition)?;
        Ok((request, scratch))
    })
}

/// The blocks a neighbourhood call sends (one per destination) or receives (one per source).
#[derive(Clone, Copy)]
pub(crate) enum Edges {
    /// The same `count` elements of `datatype` at the buffer's start for every edge (what the
    /// neighbourhood all-gathers send).
    Same(c_int, c_int),
    /// Counts and displacements in extents of one type, or one after the other (`Regular`).
    Typed(Counts, c_int),
    /// Counts, byte displacements (`MPI_Aint`) and a type per edge (`MPI_Neighbor_alltoallw`).
    PerEdge(*const c_int, *const MPI_Aint, *const c_int),
}

/// The blocks `edges` describes for `n` edges.
///
/// # Safety
/// Each array of `edges` is NULL or points at `n` readable elements.
unsafe fn edge_blocks(edges: Edges, n: usize) -> Result<Blocks, Failure> {
    match edges {
        Edges::Same(count, datatype) => Blocks::new(&vec![count; n], &vec![0; n], datatype),
        // SAFETY: forwarded contract.
        Edges::Typed(counts, datatype) => unsafe { blocks_of(counts, Types::One(datatype), n) },
        Edges::PerEdge(counts, displs, types) => {
            // SAFETY: forwarded contract.
            let (counts, types) = unsafe { (ints(counts, n, "counts")?, ints(types, n, "types")?) };
            if n > 0 && displs.is_null() {
                return Err(Failure::new(MPI_ERR_ARG, "displs is NULL"));
            }
            // SAFETY: forwarded contract: `n` readable `MPI_Aint`s.
            let displs = (0..n)
                .map(|i| unsafe { *displs.add(i) })
                .collect::<Vec<_>>();
            let layouts = types
                .iter()
                .map(|&datatype| layout_of(datatype, true))
                .collect::<Result<Vec<_>, Failure>>()?;
            Blocks::of(&counts, &displs, &layouts)
        }
    }
}

impl Blocks {
    /// The same blocks but only those at positions `keep` (in that order).
    fn keep(&self, keep: &[usize]) -> Result<Blocks, Failure> {
        let counts = keep
            .iter()
            .map(|&i| c_int::try_from(self.counts[i]).map_err(|_| too_large()))
            .collect::<Result<Vec<_>, Failure>>()?;
        let offsets: Vec<isize> = keep.iter().map(|&i| self.at[i].0).collect();
        let layouts: Vec<Arc<Layout>> =
            keep.iter().map(|&i| Arc::clone(&self.layouts[i])).collect();
        Blocks::of(&counts, &offsets, &layouts)
    }
}

/// A neighbourhood collective (`MPI_Ineighbor_*`) over this rank's `sources` and
/// `destinations` (its topology's lists; `order`: the order in which the receive blocks pair
/// with a repeated neighbour's blocks): the blocks for the destinations packed, exchanged
/// with the runtime's neighbourhood exchange (one message per edge), and unpacked where they
/// belong; edges to or from `MPI_PROC_NULL` move nothing (those receive blocks are left as
/// they were).
///
/// # Safety
/// As for `MPI_Ineighbor_alltoallw`: the buffers and arrays stay valid until the request
/// completes (the arrays are read at the start).
pub(crate) unsafe fn scheduled_neighbor_exchange(
    (sources, destinations, order): crate::topology::Neighbors,
    sendbuf: *const c_void,
    send: Edges,
    recvbuf: *mut c_void,
    recv: Edges,
) -> Scheduled {
    Box::new(move |comm: &'static Comm| {
        if sendbuf == IN_PLACE {
            return Err(Failure::new(
                MPI_ERR_ARG,
                "MPI_IN_PLACE is not allowed in a neighbourhood collective",
            ));
        }
        let to: Vec<usize> = (0..destinations.len())
            .filter(|&i| destinations[i] != MPI_PROC_NULL)
            .collect();
        // The receive blocks in the order they pair with a repeated neighbour's blocks.
        let from: Vec<usize> = order
            .iter()
            .copied()
            .filter(|&j| sources[j] != MPI_PROC_NULL)
            .collect();
        // SAFETY: forwarded contract.
        let sending = unsafe { edge_blocks(send, destinations.len()) }?.keep(&to)?;
        // SAFETY: forwarded contract; read at the start only.
        let outgoing = sending.pack(unsafe { sending.read(sendbuf) }?)?;
        // SAFETY: forwarded contract.
        let receiving = unsafe { edge_blocks(recv, sources.len()) }?.keep(&from)?;
        // SAFETY: forwarded contract.
        let (partition, scratch, _) = unsafe { landing(receiving, recvbuf, None) }?;
        let outgoing = Partition::new(&outgoing, &sending.packed, &sending.packed_at);
        let ranks = |list: &[c_int], keep: &[usize]| -> Vec<Rank> {
            keep.iter().map(|&i| list[i] as Rank).collect()
        };
        let request = comm.ineighbor_alltoall_varcount(
            &ranks(&destinations, &to),
            outgoing,
            &ranks(&sources, &from),
            partition,
        )?;
        Ok((request, scratch))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixed-count forms' displacements in full width: rank 3's block of 2^30 chars lies
    /// at 3 · 2^30 bytes, past `c_int` (where `r · count` in `c_int` made one rank decline a
    /// schedule that its peers, with larger elements, started).
    #[test]
    fn regular_blocks_take_displacements_past_c_int() {
        let blocks = Blocks::regular(1 << 30, 4, MPI_CHAR).unwrap();
        assert_eq!(blocks.packed_at[3], 3 << 30);
        assert_eq!(blocks.at[3].0, 3 << 30);
        let (start, end, offsets) = blocks.direct().expect("dense blocks one after the other");
        assert_eq!((start, end), (0, 4 << 30));
        assert_eq!(offsets[3], 3 << 30);
        assert!(Blocks::regular(-1, 4, MPI_CHAR).is_err());
    }
}
