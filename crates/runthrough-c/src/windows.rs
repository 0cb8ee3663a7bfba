// SPDX-License-Identifier: MIT OR Apache-2.0
//! One-sided communication for C (`MPI_Win_*`, `MPI_Put`, `MPI_Get`, the accumulates;
//! semantics §3.6) over the runtime's `runthrough::RawWindow`: the program's memory is the
//! window's part at this rank, read and written by the engine when other ranks' operations
//! arrive. `MPI_Alloc_mem` / `MPI_Free_mem` hand out memory the library allocates.
//!
//! Operations pack the origin's data with its datatype and name the target's bytes as the runs
//! of the target datatype from `base + disp · disp_unit` (the target's unit, learned at
//! creation). An accumulate names its basic type and operation in the code the target's memory
//! understands; `MPI_REPLACE` and `MPI_NO_OP` included. A get (and every fetching call) waits
//! for its data, so its origin buffer is filled when the call returns; puts and accumulates
//! complete at the call that ends their epoch, as MPI says.
//!
//! Errors go through the error handler of the communicator the window was made on.

use std::alloc::Layout as AllocLayout;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_void};
use std::os::raw::c_int;
use std::sync::{Arc, Mutex};

use runthrough::{Rank, RawWindow, RmaBlock, WindowMemory};

use crate::attributes::{CopyFn, DeleteFn, Kind};
use crate::constants::*;
use crate::datatypes::{op_of, Element};
use crate::derived::{layout_of, Data, MPI_Aint};
use crate::errors::{
    boundary, caught, out, report_to, write_string, Failure, Handler, UserHandler,
};
use crate::runtime::{comm_of, lock, with_runtime};

/// One window handle.
struct Entry {
    raw: Arc<RawWindow>,
    /// The communicator it was made on: its error handler reports the window's errors.
    comm: c_int,
    base: usize,
    size: usize,
    unit: c_int,
    flavor: c_int,
    /// Memory the library allocated for it (`MPI_Win_allocate`), freed with it.
    allocated: Option<AllocLayout>,
    /// A dynamic window's attached regions (`MPI_Win_attach`).
    regions: Option<Regions>,
    name: Mutex<String>,
    /// Its own error handler (`MPI_Win_set_errhandler`); until one is set, the communicator's
    /// reports its errors.
    errhandler: Mutex<Option<(c_int, Handler)>>,
}

struct Windows {
    next: c_int,
    by_handle: BTreeMap<c_int, Arc<Entry>>,
}

static WINDOWS: Mutex<Windows> = Mutex::new(Windows {
    next: 1,
    by_handle: BTreeMap::new(),
});

/// What `MPI_Alloc_mem` handed out, by address.
static ALLOCATIONS: Mutex<BTreeMap<usize, AllocLayout>> = Mutex::new(BTreeMap::new());

fn entry_of(win: c_int) -> Result<Arc<Entry>, Failure> {
    lock(&WINDOWS)
        .by_handle
        .get(&win)
        .cloned()
        .ok_or_else(|| Failure::new(MPI_ERR_WIN, format!("{win} is not a window")))
}

/// The communicator whose handler reports errors of `win` (`MPI_COMM_WORLD` for an unknown
/// window).
fn handler_of(win: c_int) -> c_int {
    entry_of(win).map_or(MPI_COMM_WORLD, |entry| entry.comm)
}

/// Runs `body` on window `win`, errors reported through the window's error handler, or its
/// communicator's while it has none of its own.
fn on_window(win: c_int, body: impl FnOnce(&Entry) -> Result<(), Failure>) -> c_int {
    let own = entry_of(win)
        .ok()
        .and_then(|entry| *lock(&entry.errhandler));
    match own {
        None => boundary(handler_of(win), || body(&*entry_of(win)?)),
        Some((_, handler)) => match caught(|| body(&*entry_of(win)?)) {
            Ok(()) => MPI_SUCCESS,
            Err(failure) => {
                let rank = with_runtime(|runtime| Ok(runtime.world_rank)).ok();
                report_to(handler, win, rank, failure)
            }
        },
    }
}

/// Zeroed memory of `size` bytes, aligned for any basic type.
fn allocate(size: usize) -> Result<(usize, Option<AllocLayout>), Failure> {
    if size == 0 {
        return Ok((0, None));
    }
    let layout = AllocLayout::from_size_align(size, 16)
        .map_err(|_| Failure::new(MPI_ERR_ARG, format!("{size} bytes cannot be allocated")))?;
    // SAFETY: the layout's size is not zero.
    let pointer = unsafe { std::alloc::alloc_zeroed(layout) };
    if pointer.is_null() {
        return Err(Failure::new(
            MPI_ERR_NO_MEM,
            format!("{size} bytes could not be allocated"),
        ));
    }
    Ok((pointer as usize, Some(layout)))
}

/// The accumulate code of basic datatype `datatype` and operation `op`.
fn code_of(datatype: c_int, op: c_int) -> u64 {
    (u64::from(datatype as u32) << 32) | u64::from(op as u32)
}

/// A rank's window memory: the program's bytes from `base`.
#[derive(Debug)]
struct Memory {
    base: usize,
    len: usize,
    /// A dynamic window's attached regions (address to length); its displacements are
    /// addresses, and only bytes of a region may be reached.
    regions: Option<Regions>,
}

/// The regions attached to a dynamic window, by address.
type Regions = Arc<Mutex<BTreeMap<usize, usize>>>;

// SAFETY: the memory is the program's (or the library's, for `MPI_Win_allocate`) from window
// creation to `MPI_Win_free`, which removes it from the engine first; MPI gives the library the
// right to read and write it from any thread during that time.
unsafe impl Send for Memory {}

impl Memory {
    /// The address of byte `at` (inside the memory: the engine checks ranges first).
    fn bytes(&self, at: usize) -> *mut u8 {
        (self.base + at) as *mut u8
    }
}

impl WindowMemory for Memory {
    fn len(&self) -> usize {
        self.len
    }

    fn covers(&self, at: usize, len: usize) -> bool {
        let Some(regions) = &self.regions else {
            return true;
        };
        let Some(end) = at.checked_add(len) else {
            return false;
        };
        // The bytes lie in one region, or in regions attached end to end.
        let regions = lock(regions);
        let Some((&start, &n)) = regions.range(..=at).next_back() else {
            return false;
        };
        let mut reached = start + n;
        if reached <= at {
            return false;
        }
        for (&next, &m) in regions.range(reached..) {
            if reached >= end || next != reached {
                break;
            }
            reached = next + m;
        }
        reached >= end
    }

    fn read(&self, at: usize, into: &mut [u8]) {
        // SAFETY: `at..at + into.len()` is inside the window's memory (checked by the engine),
        // which is valid for reads until the window is freed (see `Send`).
        unsafe { std::ptr::copy_nonoverlapping(self.bytes(at), into.as_mut_ptr(), into.len()) };
    }

    fn write(&mut self, at: usize, bytes: &[u8]) {
        // SAFETY: as `read`, for writes; `bytes` is the engine's own buffer.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.bytes(at), bytes.len()) };
    }

    fn check_accumulate(&self, _at: usize, code: u64, len: usize) -> Result<(), String> {
        let (datatype, op) = ((code >> 32) as u32 as c_int, code as u32 as c_int);
        let size = element_size(datatype).map_err(|f| f.message)?;
        if size == 0 || !len.is_multiple_of(size) {
            return Err("not a whole number of the accumulate's elements".into());
        }
        if op == MPI_REPLACE || op == MPI_NO_OP {
            return Ok(());
        }
        if crate::pairs::is_pair(datatype) {
            return match op {
                MPI_MINLOC | MPI_MAXLOC => Ok(()),
                _ => Err("a pair type accumulates with MPI_MINLOC or MPI_MAXLOC only".into()),
            };
        }
        if let Some(wide) = crate::wide::Wide::of(datatype) {
            return wide.packed_op(op).map(drop).map_err(|f| f.message);
        }
        let element = Element::of(datatype).map_err(|f| f.message)?;
        let op = op_of(op).map_err(|f| f.message)?;
        if matches!(
            op,
            runthrough::Op::BitAnd | runthrough::Op::BitOr | runthrough::Op::BitXor
        ) && matches!(element, Element::F32 | Element::F64)
        {
            return Err("a bitwise operation on a floating-point type".into());
        }
        Ok(())
    }

    fn accumulate(&mut self, at: usize, code: u64, bytes: &[u8]) {
        let (datatype, op) = ((code >> 32) as u32 as c_int, code as u32 as c_int);
        match op {
            MPI_NO_OP => {}
            MPI_REPLACE => self.write(at, bytes),
            _ if crate::pairs::is_pair(datatype) || crate::wide::Wide::of(datatype).is_some() => {
                let mut target = vec![0u8; bytes.len()];
                self.read(at, &mut target);
                let combined = match crate::wide::Wide::of(datatype) {
                    Some(wide) => wide.combine(op, bytes, &mut target).is_ok(),
                    None => crate::pairs::combine_pairs(datatype, op, bytes, &mut target),
                };
                if combined {
                    self.write(at, &target);
                }
            }
            _ => {
                let Ok(element) = Element::of(datatype) else {
                    return;
                };
                let count = (bytes.len() / element.size()) as c_int;
                // SAFETY: both buffers hold `count` elements of `datatype` (checked by
                // `check_accumulate` and the engine's range check); the target bytes are the
                // window's, valid until it is freed.
                let _ = unsafe {
                    crate::collectives::reduce_local(
                        bytes.as_ptr().cast(),
                        self.bytes(at).cast(),
                        count,
                        datatype,
                        op,
                    )
                };
            }
        }
    }
}

/// The size of one element an accumulate combines: a basic type's, a pair type's (value and
/// index), a `long double`'s or a complex type's.
fn element_size(datatype: c_int) -> Result<usize, Failure> {
    if let Some(wide) = crate::wide::Wide::of(datatype) {
        return Ok(wide.size());
    }
    if let Some(layout) = crate::derived::pair_layout(datatype) {
        return Ok(layout.size);
    }
    Ok(Element::of(datatype)?.size())
}

/// Makes a window over `base..base + size` at this rank; returns its handle.
fn create(
    base: usize,
    size: MPI_Aint,
    unit: c_int,
    comm: c_int,
    flavor: c_int,
    allocated: Option<AllocLayout>,
) -> Result<c_int, Failure> {
    let size = usize::try_from(size)
        .map_err(|_| Failure::new(MPI_ERR_SIZE, format!("negative window size {size}")))?;
    if unit <= 0 {
        return Err(Failure::new(
            MPI_ERR_ARG,
            format!("displacement unit {unit} is not positive"),
        ));
    }
    if size > 0 && base == 0 {
        return Err(Failure::new(
            MPI_ERR_ARG,
            "a NULL base with a non-zero size",
        ));
    }
    let regions = (flavor == MPI_WIN_FLAVOR_DYNAMIC).then(Regions::default);
    // A dynamic window's displacements are addresses: its memory is the address space, of
    // which only the attached regions may be reached.
    let len = if regions.is_some() {
        isize::MAX as usize
    } else {
        size
    };
    let memory = Box::new(Memory {
        base,
        len,
        regions: regions.clone(),
    });
    let raw = comm_of(comm)?.get().raw_window(memory, unit as u64)?;
    let mut windows = lock(&WINDOWS);
    let handle = windows.next;
    windows.next += 1;
    windows.by_handle.insert(
        handle,
        Arc::new(Entry {
            raw: Arc::new(raw),
            comm,
            base,
            size,
            unit,
            flavor,
            allocated,
            regions,
            name: Mutex::new(String::new()),
            errhandler: Mutex::new(None),
        }),
    );
    Ok(handle)
}

/// `MPI_Win_create`: a window over the program's `size` bytes at `base` (displacements in
/// units of `disp_unit` bytes). Collective over `comm`.
///
/// # Safety
/// `base` points at `size` bytes readable and writable until `MPI_Win_free`; `win` is NULL or
/// points at a writable `MPI_Win`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_create(
    base: *mut c_void,
    size: MPI_Aint,
    disp_unit: c_int,
    _info: c_int,
    comm: c_int,
    win: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(win, "win")? };
        slot.write(create(
            base as usize,
            size,
            disp_unit,
            comm,
            MPI_WIN_FLAVOR_CREATE,
            None,
        )?);
        Ok(())
    })
}

/// `MPI_Win_create_dynamic`: a window without memory, to which each rank attaches regions of
/// its own (`MPI_Win_attach`); displacements are addresses (`MPI_Get_address` at the target),
/// and an operation on bytes outside the target's attached regions is `MPI_ERR_RMA_RANGE`.
/// Collective over `comm`.
///
/// # Safety
/// `win` is NULL or points at a writable `MPI_Win`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_create_dynamic(
    _info: c_int,
    comm: c_int,
    win: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(win, "win")? };
        slot.write(create(0, 0, 1, comm, MPI_WIN_FLAVOR_DYNAMIC, None)?);
        Ok(())
    })
}

/// `MPI_Win_attach`: the `size` bytes at `base` join this rank's part of a dynamic window
/// (`MPI_ERR_ARG` on another flavor of window or for a region that overlaps one attached).
///
/// # Safety
/// `base` points at `size` bytes readable and writable until they are detached.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_attach(win: c_int, base: *mut c_void, size: MPI_Aint) -> c_int {
    on_window(win, |entry| {
        let regions = entry.regions.as_ref().ok_or_else(|| {
            Failure::new(
                MPI_ERR_ARG,
                "MPI_Win_attach on a window that is not dynamic",
            )
        })?;
        let size = usize::try_from(size)
            .map_err(|_| Failure::new(MPI_ERR_SIZE, format!("negative size {size}")))?;
        let start = base as usize;
        if size > 0 && start == 0 {
            return Err(Failure::null("base"));
        }
        let mut regions = lock(regions);
        let overlaps = regions
            .range(..start.saturating_add(size.max(1)))
            .next_back()
            .is_some_and(|(&at, &n)| at + n > start);
        if overlaps {
            return Err(Failure::new(
                MPI_ERR_ARG,
                "the region overlaps one attached already",
            ));
        }
        if size > 0 {
            regions.insert(start, size);
        }
        Ok(())
    })
}

/// `MPI_Win_detach`: the region attached at `base` leaves this rank's part of a dynamic window.
///
/// # Safety
/// None beyond the handle: `base` is only compared.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_detach(win: c_int, base: *const c_void) -> c_int {
    on_window(win, |entry| {
        let regions = entry.regions.as_ref().ok_or_else(|| {
            Failure::new(
                MPI_ERR_ARG,
                "MPI_Win_detach on a window that is not dynamic",
            )
        })?;
        lock(regions)
            .remove(&(base as usize))
            .map(drop)
            .ok_or_else(|| Failure::new(MPI_ERR_ARG, "no region is attached at that address"))
    })
}

/// `MPI_Win_allocate`: a window over `size` zeroed bytes the library allocates, their address
/// written to `*(void **)baseptr`. Collective over `comm`.
///
/// # Safety
/// `baseptr` is NULL or points at a writable `void *`; `win` NULL or a writable `MPI_Win`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_allocate(
    size: MPI_Aint,
    disp_unit: c_int,
    _info: c_int,
    comm: c_int,
    baseptr: *mut c_void,
    win: *mut c_int,
) -> c_int {
    boundary(comm, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(win, "win")? };
        if baseptr.is_null() {
            return Err(Failure::null("baseptr"));
        }
        let bytes = usize::try_from(size)
            .map_err(|_| Failure::new(MPI_ERR_SIZE, format!("negative window size {size}")))?;
        let (base, layout) = allocate(bytes)?;
        match create(base, size, disp_unit, comm, MPI_WIN_FLAVOR_ALLOCATE, layout) {
            Ok(handle) => {
                // SAFETY: not NULL; a writable `void *` by the contract.
                unsafe { baseptr.cast::<*mut c_void>().write(base as *mut c_void) };
                slot.write(handle);
                Ok(())
            }
            Err(failure) => {
                if let Some(layout) = layout {
                    // SAFETY: allocated just above with this layout; nothing else has it.
                    unsafe { std::alloc::dealloc(base as *mut u8, layout) };
                }
                Err(failure)
            }
        }
    })
}

/// `MPI_Win_free`: collective; completes this rank's operations, then ends the window
/// (`MPI_WIN_NULL` written back). Memory of `MPI_Win_allocate` is freed.
///
/// # Safety
/// `win` is NULL or points at a readable and writable `MPI_Win`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_free(win: *mut c_int) -> c_int {
    // SAFETY: NULL checked below; a readable int by the contract.
    let handle = if win.is_null() { 0 } else { unsafe { *win } };
    boundary(handler_of(handle), || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(win, "win")? };
        let entry = lock(&WINDOWS)
            .by_handle
            .remove(&handle)
            .ok_or_else(|| Failure::new(MPI_ERR_WIN, format!("{handle} is not a window")))?;
        crate::attributes::delete_all((Kind::Win, handle))?;
        let entry = Arc::try_unwrap(entry)
            .map_err(|_| Failure::new(MPI_ERR_WIN, "the window is in use by another thread"))?;
        let raw = Arc::try_unwrap(entry.raw)
            .map_err(|_| Failure::new(MPI_ERR_WIN, "the window is in use by another thread"))?;
        let outcome = raw.free();
        if let Some(layout) = entry.allocated {
            // SAFETY: allocated by `MPI_Win_allocate` with this layout; the window, the only
            // other user, is gone.
            unsafe { std::alloc::dealloc(entry.base as *mut u8, layout) };
        }
        slot.write(MPI_WIN_NULL);
        Ok(outcome?)
    })
}

/// The target blocks of `count` elements of `datatype` from `disp` units of `target`'s part.
fn target_blocks(
    raw: &RawWindow,
    target: c_int,
    disp: MPI_Aint,
    count: c_int,
    datatype: c_int,
) -> Result<(Rank, Vec<RmaBlock>), Failure> {
    let rank = Rank::try_from(target)
        .map_err(|_| Failure::new(MPI_ERR_RANK, format!("invalid target rank {target}")))?;
    let unit = raw.unit_of(rank)? as i128;
    let origin = i128::from(disp as i64) * unit;
    let count = usize::try_from(count)
        .map_err(|_| Failure::new(MPI_ERR_COUNT, format!("negative count {count}")))?;
    let runs = match Element::of(datatype) {
        Ok(element) => vec![(0isize, count * element.size())],
        Err(_) => layout_of(datatype, true)?.runs(count),
    };
    let mut blocks = Vec::with_capacity(runs.len());
    for (offset, len) in runs {
        let at = u64::try_from(origin + offset as i128).map_err(|_| {
            Failure::new(
                MPI_ERR_RMA_RANGE,
                format!("displacement {disp} reaches before rank {target}'s window"),
            )
        })?;
        if len > 0 {
            blocks.push(RmaBlock {
                at,
                len: len as u64,
            });
        }
    }
    Ok((rank, blocks))
}

/// The packed bytes of `count` elements of `datatype` at `buffer`.
///
/// # Safety
/// `buffer` points at them, readable.
unsafe fn packed(buffer: *const c_void, count: c_int, datatype: c_int) -> Result<Vec<u8>, Failure> {
    // SAFETY: forwarded contract.
    Ok(unsafe { Data::of(count, datatype)?.read(buffer)? }.into_owned())
}

/// Writes the packed `bytes` into `count` elements of `datatype` at `buffer`.
///
/// # Safety
/// `buffer` points at them, writable.
unsafe fn unpack(
    bytes: &[u8],
    buffer: *mut c_void,
    count: c_int,
    datatype: c_int,
) -> Result<(), Failure> {
    let data = Data::of(count, datatype)?;
    // SAFETY: forwarded contract.
    let mut target = unsafe { data.target(buffer)? };
    let into = target.receive_buffer();
    let n = bytes.len().min(into.len());
    into[..n].copy_from_slice(&bytes[..n]);
    target.finish(n);
    Ok(())
}

/// Checks that the origin's packed bytes match the target blocks.
fn same_length(data: &[u8], blocks: &[RmaBlock]) -> Result<(), Failure> {
    let total: u64 = blocks.iter().map(|b| b.len).sum();
    if total != data.len() as u64 {
        return Err(Failure::new(
            MPI_ERR_TYPE,
            format!(
                "the origin's data ({} bytes) and the target's datatype ({total} bytes) differ",
                data.len()
            ),
        ));
    }
    Ok(())
}

/// The basic datatype whose elements an accumulate combines (of a derived type: its one basic
/// type).
fn basic_of(datatype: c_int) -> Result<c_int, Failure> {
    if Element::of(datatype).is_ok()
        || crate::pairs::is_pair(datatype)
        || crate::wide::Wide::of(datatype).is_some()
    {
        return Ok(datatype);
    }
    let element = layout_of(datatype, true)?.element.ok_or_else(|| {
        Failure::new(
            MPI_ERR_TYPE,
            "an accumulate's datatype must be built from one basic type",
        )
    })?;
    Ok(element.datatype())
}

/// `MPI_Put`: writes `origin_count` elements of `origin_datatype` at `origin_addr` to
/// `target_count` elements of `target_datatype` from `target_disp` units of `target_rank`'s
/// window. Complete at the target when the epoch ends (or a flush returns).
///
/// # Safety
/// `origin_addr` points at the origin's elements, readable.
#[no_mangle]
pub unsafe extern "C" fn MPI_Put(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: c_int,
    win: c_int,
) -> c_int {
    on_window(win, |entry| {
        if target_rank == MPI_PROC_NULL {
            return Ok(());
        }
        // SAFETY: forwarded contract.
        let data = unsafe { packed(origin_addr, origin_count, origin_datatype)? };
        let (rank, blocks) = target_blocks(
            &entry.raw,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
        )?;
        same_length(&data, &blocks)?;
        Ok(entry.raw.put(rank, blocks, data)?)
    })
}

/// `MPI_Get`: reads `target_count` elements of `target_datatype` from `target_disp` units of
/// `target_rank`'s window into the origin buffer; the data is there when the call returns.
///
/// # Safety
/// `origin_addr` points at the origin's elements, writable.
#[no_mangle]
pub unsafe extern "C" fn MPI_Get(
    origin_addr: *mut c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: c_int,
    win: c_int,
) -> c_int {
    on_window(win, |entry| {
        if target_rank == MPI_PROC_NULL {
            return Ok(());
        }
        let (rank, blocks) = target_blocks(
            &entry.raw,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
        )?;
        let want = Data::of(origin_count, origin_datatype)?.packed_len()?;
        same_length(&vec![0; want], &blocks)?;
        let bytes = entry.raw.get(rank, blocks)?;
        // SAFETY: forwarded contract.
        unsafe { unpack(&bytes, origin_addr, origin_count, origin_datatype) }
    })
}

/// One accumulate, fetching or not; returns the old contents for a fetch.
#[allow(clippy::too_many_arguments)]
fn accumulate(
    entry: &Entry,
    data: Vec<u8>,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: c_int,
    op: c_int,
    fetch: bool,
) -> Result<Option<Vec<u8>>, Failure> {
    let special =
        crate::pairs::is_pair(target_datatype) || crate::wide::Wide::of(target_datatype).is_some();
    if op != MPI_REPLACE && op != MPI_NO_OP && !special {
        op_of(op)?;
    }
    let (rank, blocks) = target_blocks(
        &entry.raw,
        target_rank,
        target_disp,
        target_count,
        target_datatype,
    )?;
    if op != MPI_NO_OP {
        same_length(&data, &blocks)?;
    }
    let data = if op == MPI_NO_OP {
        vec![0; blocks.iter().map(|b| b.len as usize).sum()]
    } else {
        data
    };
    let code = code_of(basic_of(target_datatype)?, op);
    Ok(entry.raw.accumulate(rank, blocks, code, data, fetch)?)
}

/// `MPI_Accumulate`: combines the origin's elements into the target's with `op` (a predefined
/// operation or `MPI_REPLACE`), element by element, atomically with respect to other
/// accumulates on that target.
///
/// # Safety
/// `origin_addr` points at the origin's elements, readable.
#[no_mangle]
pub unsafe extern "C" fn MPI_Accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: c_int,
    op: c_int,
    win: c_int,
) -> c_int {
    on_window(win, |entry| {
        if target_rank == MPI_PROC_NULL {
            return Ok(());
        }
        // SAFETY: forwarded contract.
        let data = unsafe { packed(origin_addr, origin_count, origin_datatype)? };
        accumulate(
            entry,
            data,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            op,
            false,
        )
        .map(drop)
    })
}

/// `MPI_Get_accumulate`: `MPI_Accumulate` that also returns the target's elements from before
/// (with `MPI_NO_OP`, an atomic read; the origin buffer is then not read).
///
/// # Safety
/// `origin_addr` points at the origin's elements, readable (unless `op` is `MPI_NO_OP`);
/// `result_addr` at the result's elements, writable.
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    result_addr: *mut c_void,
    result_count: c_int,
    result_datatype: c_int,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: c_int,
    op: c_int,
    win: c_int,
) -> c_int {
    on_window(win, |entry| {
        if target_rank == MPI_PROC_NULL {
            return Ok(());
        }
        let data = if op == MPI_NO_OP {
            Vec::new()
        } else {
            // SAFETY: forwarded contract.
            unsafe { packed(origin_addr, origin_count, origin_datatype)? }
        };
        let old = accumulate(
            entry,
            data,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            op,
            true,
        )?
        .unwrap_or_default();
        // SAFETY: forwarded contract.
        unsafe { unpack(&old, result_addr, result_count, result_datatype) }
    })
}

/// `MPI_Fetch_and_op`: one element's `MPI_Get_accumulate`.
///
/// # Safety
/// `origin_addr` points at one readable element (unless `op` is `MPI_NO_OP`), `result_addr` at
/// one writable element, of `datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Fetch_and_op(
    origin_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: c_int,
    target_rank: c_int,
    target_disp: MPI_Aint,
    op: c_int,
    win: c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        MPI_Get_accumulate(
            origin_addr,
            1,
            datatype,
            result_addr,
            1,
            datatype,
            target_rank,
            target_disp,
            1,
            datatype,
            op,
            win,
        )
    }
}

/// `MPI_Compare_and_swap`: where the target element equals `*compare_addr` it becomes
/// `*origin_addr`, atomically; the element from before is written to `*result_addr`.
///
/// # Safety
/// `origin_addr` and `compare_addr` point at one readable, `result_addr` at one writable
/// element of `datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Compare_and_swap(
    origin_addr: *const c_void,
    compare_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: c_int,
    target_rank: c_int,
    target_disp: MPI_Aint,
    win: c_int,
) -> c_int {
    on_window(win, |entry| {
        if target_rank == MPI_PROC_NULL {
            return Ok(());
        }
        let element = Element::of(datatype).map_err(|_| {
            Failure::new(MPI_ERR_TYPE, "MPI_Compare_and_swap takes a basic datatype")
        })?;
        let (rank, blocks) = target_blocks(&entry.raw, target_rank, target_disp, 1, datatype)?;
        let n = element.size();
        // SAFETY: forwarded contract: one element each.
        let (swap, compare) = unsafe {
            (
                crate::datatypes::input(origin_addr, n)?,
                crate::datatypes::input(compare_addr, n)?,
            )
        };
        let old = entry
            .raw
            .compare_and_swap(rank, blocks[0].at, compare, swap)?;
        // SAFETY: forwarded contract: one writable element.
        let result = unsafe { crate::datatypes::output(result_addr, n)? };
        result.copy_from_slice(&old[..n.min(old.len())]);
        Ok(())
    })
}

/// A request that is complete already, for `win`'s request-based operations (each completes
/// locally when its call returns: its origin data is copied, or its result written).
fn completed_request(win: c_int, request: *mut c_int, code: c_int) -> c_int {
    if code != MPI_SUCCESS {
        return code;
    }
    on_window(win, |entry| {
        // SAFETY: checked for NULL by `out`; the caller's contract.
        let slot = unsafe { out(request, "request")? };
        let status = crate::point_to_point::empty_status();
        let handle = with_runtime(|runtime| {
            Ok(runtime.add_request(crate::runtime::Operation::Complete(Ok(status)), entry.comm))
        })?;
        slot.write(handle);
        Ok(())
    })
}

/// `MPI_Rput`: `MPI_Put` with a request, complete when the call returns (the origin buffer
/// is free again; completion at the target still waits for the epoch's end or a flush).
///
/// # Safety
/// As `MPI_Put`; `request` is NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Rput(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: c_int,
    win: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    let code = unsafe {
        MPI_Put(
            origin_addr,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            win,
        )
    };
    completed_request(win, request, code)
}

/// `MPI_Rget`: `MPI_Get` with a request, complete when the call returns (the data is there).
///
/// # Safety
/// As `MPI_Get`; `request` is NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Rget(
    origin_addr: *mut c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: c_int,
    win: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    let code = unsafe {
        MPI_Get(
            origin_addr,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            win,
        )
    };
    completed_request(win, request, code)
}

/// `MPI_Raccumulate`: `MPI_Accumulate` with a request, complete when the call returns.
///
/// # Safety
/// As `MPI_Accumulate`; `request` is NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Raccumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: c_int,
    op: c_int,
    win: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    let code = unsafe {
        MPI_Accumulate(
            origin_addr,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            op,
            win,
        )
    };
    completed_request(win, request, code)
}

/// `MPI_Rget_accumulate`: `MPI_Get_accumulate` with a request, complete when the call returns
/// (the result is there).
///
/// # Safety
/// As `MPI_Get_accumulate`; `request` is NULL or points at a writable `MPI_Request`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Rget_accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: c_int,
    result_addr: *mut c_void,
    result_count: c_int,
    result_datatype: c_int,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: c_int,
    op: c_int,
    win: c_int,
    request: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    let code = unsafe {
        MPI_Get_accumulate(
            origin_addr,
            origin_count,
            origin_datatype,
            result_addr,
            result_count,
            result_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            op,
            win,
        )
    };
    completed_request(win, request, code)
}

/// `MPI_Win_fence`: ends the epoch and opens the next at every rank (collective); the
/// assertions are hints and ignored.
#[no_mangle]
pub extern "C" fn MPI_Win_fence(_assert: c_int, win: c_int) -> c_int {
    on_window(win, |entry| Ok(entry.raw.fence()?))
}

/// The window rank `rank` (`MPI_ERR_RANK` outside the group).
fn rank_of(entry: &Entry, rank: c_int) -> Result<Rank, Failure> {
    Rank::try_from(rank)
        .ok()
        .filter(|&r| r < entry.raw.comm().size())
        .ok_or_else(|| Failure::new(MPI_ERR_RANK, format!("invalid rank {rank}")))
}

/// `MPI_Win_lock`: takes `rank`'s lock (`MPI_LOCK_EXCLUSIVE` or `MPI_LOCK_SHARED`); returns
/// once granted.
#[no_mangle]
pub extern "C" fn MPI_Win_lock(lock_type: c_int, rank: c_int, _assert: c_int, win: c_int) -> c_int {
    on_window(win, |entry| {
        let exclusive = match lock_type {
            MPI_LOCK_EXCLUSIVE => true,
            MPI_LOCK_SHARED => false,
            other => {
                return Err(Failure::new(
                    MPI_ERR_ARG,
                    format!("lock type {other} is neither MPI_LOCK_EXCLUSIVE nor MPI_LOCK_SHARED"),
                ))
            }
        };
        if rank == MPI_PROC_NULL {
            return Ok(());
        }
        Ok(entry.raw.lock(rank_of(entry, rank)?, exclusive)?)
    })
}

/// `MPI_Win_unlock`: completes this rank's operations at `rank` and releases its lock there.
#[no_mangle]
pub extern "C" fn MPI_Win_unlock(rank: c_int, win: c_int) -> c_int {
    on_window(win, |entry| {
        if rank == MPI_PROC_NULL {
            return Ok(());
        }
        Ok(entry.raw.unlock(rank_of(entry, rank)?)?)
    })
}

/// `MPI_Win_lock_all`: a shared lock at every rank.
#[no_mangle]
pub extern "C" fn MPI_Win_lock_all(_assert: c_int, win: c_int) -> c_int {
    on_window(win, |entry| Ok(entry.raw.lock_all()?))
}

/// `MPI_Win_unlock_all`: releases `MPI_Win_lock_all`'s locks, completing this rank's
/// operations first.
#[no_mangle]
pub extern "C" fn MPI_Win_unlock_all(win: c_int) -> c_int {
    on_window(win, |entry| Ok(entry.raw.unlock_all()?))
}

/// `MPI_Win_flush`: completes this rank's operations to `rank` at `rank`.
#[no_mangle]
pub extern "C" fn MPI_Win_flush(rank: c_int, win: c_int) -> c_int {
    on_window(win, |entry| {
        if rank == MPI_PROC_NULL {
            return Ok(());
        }
        Ok(entry.raw.flush(rank_of(entry, rank)?)?)
    })
}

/// `MPI_Win_flush_all`: completes this rank's operations at every target.
#[no_mangle]
pub extern "C" fn MPI_Win_flush_all(win: c_int) -> c_int {
    on_window(win, |entry| Ok(entry.raw.flush_all()?))
}

/// `MPI_Win_flush_local`: as `MPI_Win_flush` (an operation's origin buffer is free once the
/// call that started it returns, so local completion is remote completion here).
#[no_mangle]
pub extern "C" fn MPI_Win_flush_local(rank: c_int, win: c_int) -> c_int {
    MPI_Win_flush(rank, win)
}

/// `MPI_Win_flush_local_all`: as `MPI_Win_flush_all`.
#[no_mangle]
pub extern "C" fn MPI_Win_flush_local_all(win: c_int) -> c_int {
    MPI_Win_flush_all(win)
}

/// `MPI_Win_sync`: nothing to do (the window's memory is the one copy: the unified model).
#[no_mangle]
pub extern "C" fn MPI_Win_sync(win: c_int) -> c_int {
    on_window(win, |_| Ok(()))
}

/// The window ranks of group `group`'s members (`MPI_ERR_GROUP` for one outside the window).
fn members(entry: &Entry, group: c_int) -> Result<Vec<Rank>, Failure> {
    with_runtime(|runtime| {
        let group = runtime.group(group)?;
        let all: Vec<Rank> = (0..group.size()).collect();
        group
            .translate_ranks(&all, &entry.raw.comm().group())
            .into_iter()
            .map(|r| {
                r.ok_or_else(|| {
                    Failure::new(MPI_ERR_GROUP, "a group member is not in the window's group")
                })
            })
            .collect()
    })
}

/// `MPI_Win_post`: exposes this rank's window to the members of `group`.
#[no_mangle]
pub extern "C" fn MPI_Win_post(group: c_int, _assert: c_int, win: c_int) -> c_int {
    on_window(win, |entry| {
        let ranks = members(entry, group)?;
        Ok(entry.raw.post(&ranks)?)
    })
}

/// `MPI_Win_start`: opens an access epoch to the members of `group` once each has posted.
#[no_mangle]
pub extern "C" fn MPI_Win_start(group: c_int, _assert: c_int, win: c_int) -> c_int {
    on_window(win, |entry| {
        let ranks = members(entry, group)?;
        Ok(entry.raw.start(&ranks)?)
    })
}

/// `MPI_Win_complete`: completes this rank's operations of the access epoch and ends it.
#[no_mangle]
pub extern "C" fn MPI_Win_complete(win: c_int) -> c_int {
    on_window(win, |entry| Ok(entry.raw.complete()?))
}

/// `MPI_Win_wait`: waits until every origin the exposure named has completed.
#[no_mangle]
pub extern "C" fn MPI_Win_wait(win: c_int) -> c_int {
    on_window(win, |entry| Ok(entry.raw.wait()?))
}

/// `MPI_Win_test`: `MPI_Win_wait` without waiting; `*flag` says whether the exposure ended.
///
/// # Safety
/// `flag` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_test(win: c_int, flag: *mut c_int) -> c_int {
    on_window(win, |entry| {
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        flag.write(c_int::from(entry.raw.test()?));
        Ok(())
    })
}

/// `MPI_Win_get_group`: a new group of the window's ranks.
///
/// # Safety
/// `group` is NULL or points at a writable `MPI_Group`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_get_group(win: c_int, group: *mut c_int) -> c_int {
    on_window(win, |entry| {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(group, "group")? };
        let members = entry.raw.comm().group();
        slot.write(with_runtime(|runtime| Ok(runtime.add_group(members)))?);
        Ok(())
    })
}

/// `MPIX_Win_revoke`: every pending and later operation and synchronization on the window
/// returns `MPIX_ERR_REVOKED`, at every rank. Not collective.
#[no_mangle]
pub extern "C" fn MPIX_Win_revoke(win: c_int) -> c_int {
    on_window(win, |entry| Ok(entry.raw.revoke()?))
}

/// `MPIX_Win_get_failed`: a new group of the window's ranks this rank knows failed, in the
/// order it learned of them. Local; acknowledges nothing.
///
/// # Safety
/// `group` is NULL or points at a writable `MPI_Group`.
#[no_mangle]
pub unsafe extern "C" fn MPIX_Win_get_failed(win: c_int, group: *mut c_int) -> c_int {
    on_window(win, |entry| {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(group, "group")? };
        let failed = entry.raw.failed()?;
        let members = entry.raw.comm().group().incl(&failed)?;
        slot.write(with_runtime(|runtime| Ok(runtime.add_group(members)))?);
        Ok(())
    })
}

/// `MPI_Win_set_name`.
///
/// # Safety
/// `win_name` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_set_name(win: c_int, win_name: *const c_char) -> c_int {
    on_window(win, |entry| {
        if win_name.is_null() {
            return Err(Failure::null("win_name"));
        }
        // SAFETY: not NULL; NUL-terminated by the contract.
        let name = unsafe { std::ffi::CStr::from_ptr(win_name) }
            .to_string_lossy()
            .chars()
            .take(MPI_MAX_OBJECT_NAME as usize - 1)
            .collect::<String>();
        *lock(&entry.name) = name;
        Ok(())
    })
}

/// `MPI_Win_get_name`: the name `MPI_Win_set_name` gave (empty if none).
///
/// # Safety
/// `win_name` is NULL or points at `MPI_MAX_OBJECT_NAME` writable chars; `resultlen` NULL or a
/// writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_get_name(
    win: c_int,
    win_name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    on_window(win, |entry| {
        // SAFETY: forwarded contract.
        unsafe {
            write_string(
                win_name,
                MPI_MAX_OBJECT_NAME,
                &lock(&entry.name),
                resultlen,
                "win_name",
            )
        }
    })
}

/// `MPI_Win_create_keyval`: a key for windows; NULL callbacks act as the null functions.
///
/// # Safety
/// `win_keyval` is NULL or points at a writable int; the callbacks are NULL or functions of
/// the `MPI_Win_*_attr_function` types.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_create_keyval(
    win_copy_attr_fn: Option<CopyFn>,
    win_delete_attr_fn: Option<DeleteFn>,
    win_keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(win_keyval, "win_keyval")? };
        crate::attributes::create_keyval(
            Kind::Win,
            win_copy_attr_fn,
            win_delete_attr_fn,
            &slot,
            extra_state,
        )
    })
}

/// `MPI_Win_free_keyval`.
///
/// # Safety
/// `win_keyval` is NULL or points at a readable and writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_free_keyval(win_keyval: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(win_keyval, "win_keyval")? };
        crate::attributes::free_keyval(Kind::Win, &slot)
    })
}

/// `MPI_Win_set_attr`.
#[no_mangle]
pub extern "C" fn MPI_Win_set_attr(
    win: c_int,
    win_keyval: c_int,
    attribute_val: *mut c_void,
) -> c_int {
    on_window(win, |_| {
        crate::attributes::set_attr((Kind::Win, win), win_keyval, attribute_val as usize)
    })
}

/// `MPI_Win_delete_attr`.
#[no_mangle]
pub extern "C" fn MPI_Win_delete_attr(win: c_int, win_keyval: c_int) -> c_int {
    on_window(win, |_| {
        crate::attributes::delete_attr((Kind::Win, win), win_keyval)
    })
}

/// The values of the predefined window attributes (MPI keeps them as addresses: a pointer
/// to the value, or the base itself). Boxed once per window and leaked: a few words per
/// window made.
fn predefined(entry: &Entry, keyval: c_int) -> Option<usize> {
    let leak = |value: MPI_Aint| Box::into_raw(Box::new(value)) as usize;
    let leak_int = |value: c_int| Box::into_raw(Box::new(value)) as usize;
    Some(match keyval {
        MPI_WIN_BASE => entry.base,
        MPI_WIN_SIZE => leak(entry.size as MPI_Aint),
        MPI_WIN_DISP_UNIT => leak_int(entry.unit),
        MPI_WIN_CREATE_FLAVOR => leak_int(entry.flavor),
        MPI_WIN_MODEL => leak_int(MPI_WIN_UNIFIED),
        _ => return None,
    })
}

/// `MPI_Win_get_attr`: the value of a user key, or of `MPI_WIN_BASE`, `MPI_WIN_SIZE`,
/// `MPI_WIN_DISP_UNIT`, `MPI_WIN_CREATE_FLAVOR`, `MPI_WIN_MODEL`.
///
/// # Safety
/// `attribute_val` is NULL or points at a writable `void *`; `flag` NULL or a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_get_attr(
    win: c_int,
    win_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    on_window(win, |entry| {
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        if attribute_val.is_null() {
            return Err(Failure::null("attribute_val"));
        }
        let value = match predefined(entry, win_keyval) {
            Some(value) => Some(value),
            None => crate::attributes::get((Kind::Win, win), win_keyval)?,
        };
        match value {
            Some(value) => {
                // SAFETY: not NULL; a writable `void *` by the contract.
                unsafe {
                    attribute_val
                        .cast::<*mut c_void>()
                        .write(value as *mut c_void)
                };
                flag.write(1);
            }
            None => flag.write(0),
        }
        Ok(())
    })
}

/// `MPI_Win_create_errhandler`: a handler for windows (called with the window's handle and the
/// error code; shares the handle space and `MPI_Errhandler_free` of the communicators' ones).
///
/// # Safety
/// `function` is NULL or an `MPI_Win_errhandler_function`; `errhandler` NULL or a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_create_errhandler(
    function: Option<UserHandler>,
    errhandler: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract: the same shapes as the communicators' handlers.
    unsafe { crate::errors::MPI_Comm_create_errhandler(function, errhandler) }
}

/// `MPI_Win_set_errhandler`: the window's errors go through `errhandler` from now on.
#[no_mangle]
pub extern "C" fn MPI_Win_set_errhandler(win: c_int, errhandler: c_int) -> c_int {
    on_window(win, |entry| {
        let handler = with_runtime(|runtime| {
            runtime
                .errhandlers
                .get(&errhandler)
                .copied()
                .ok_or_else(|| {
                    Failure::new(
                        MPI_ERR_ARG,
                        format!("invalid or freed error handler {errhandler}"),
                    )
                })
        })?;
        *lock(&entry.errhandler) = Some((errhandler, handler));
        Ok(())
    })
}

/// `MPI_Win_get_errhandler`: the window's error handler (its communicator's while it has none
/// of its own).
///
/// # Safety
/// `errhandler` is NULL or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Win_get_errhandler(win: c_int, errhandler: *mut c_int) -> c_int {
    let own = entry_of(win)
        .ok()
        .and_then(|entry| *lock(&entry.errhandler));
    match own {
        Some((handle, handler)) => on_window(win, |_| {
            // SAFETY: checked for NULL by `out`.
            let slot = unsafe { out(errhandler, "errhandler")? };
            with_runtime(|runtime| {
                crate::errors::reference_errhandler(runtime, handle, handler);
                Ok(())
            })?;
            slot.write(handle);
            Ok(())
        }),
        // SAFETY: forwarded contract.
        None => match entry_of(win) {
            Ok(entry) => unsafe { crate::errors::MPI_Comm_get_errhandler(entry.comm, errhandler) },
            Err(failure) => crate::errors::raise(MPI_COMM_WORLD, failure),
        },
    }
}

/// `MPI_Win_call_errhandler`: reports `errorcode` through the window's error handler.
#[no_mangle]
pub extern "C" fn MPI_Win_call_errhandler(win: c_int, errorcode: c_int) -> c_int {
    if let Err(failure) = entry_of(win) {
        return crate::errors::raise(MPI_COMM_WORLD, failure);
    }
    on_window(win, |_| {
        let mut failure = Failure::new(errorcode, "MPI_Win_call_errhandler");
        failure.handler_code = Some(errorcode);
        Err(failure)
    });
    MPI_SUCCESS
}

/// `MPI_Alloc_mem`: `size` bytes of zeroed memory, aligned for any basic type, their address
/// written to `*(void **)baseptr`; `MPI_Free_mem` frees them.
///
/// # Safety
/// `baseptr` is NULL or points at a writable `void *`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Alloc_mem(
    size: MPI_Aint,
    _info: c_int,
    baseptr: *mut c_void,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        if baseptr.is_null() {
            return Err(Failure::null("baseptr"));
        }
        let bytes = usize::try_from(size)
            .map_err(|_| Failure::new(MPI_ERR_SIZE, format!("negative size {size}")))?;
        // One byte at least, so that every allocation has an address of its own.
        let (base, layout) = allocate(bytes.max(1))?;
        if let Some(layout) = layout {
            lock(&ALLOCATIONS).insert(base, layout);
        }
        // SAFETY: not NULL; a writable `void *` by the contract.
        unsafe { baseptr.cast::<*mut c_void>().write(base as *mut c_void) };
        Ok(())
    })
}

/// `MPI_Free_mem`: frees memory of `MPI_Alloc_mem` (`MPI_ERR_BASE` for any other address).
///
/// # Safety
/// `base` is memory of `MPI_Alloc_mem` not freed yet, and no window uses it any more.
#[no_mangle]
pub unsafe extern "C" fn MPI_Free_mem(base: *mut c_void) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        let layout = lock(&ALLOCATIONS)
            .remove(&(base as usize))
            .ok_or_else(|| Failure::new(MPI_ERR_BASE, "not memory of MPI_Alloc_mem"))?;
        // SAFETY: allocated by `MPI_Alloc_mem` with this layout and removed from the table
        // just now, so freed once.
        unsafe { std::alloc::dealloc(base.cast(), layout) };
        Ok(())
    })
}

// The `PMPI_` names of this module's functions.
profiling_names!("windows.rs");
