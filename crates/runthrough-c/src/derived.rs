// SPDX-License-Identifier: MIT OR Apache-2.0
//! Derived datatypes (MPI-4.0 chapter 5, in part): `MPI_Type_contiguous`, `MPI_Type_vector`,
//! `MPI_Type_create_hvector`, `MPI_Type_indexed`, `MPI_Type_create_hindexed`,
//! `MPI_Type_create_indexed_block`, `MPI_Type_create_struct` (and MPI-1's `MPI_Type_struct`),
//! `MPI_Type_create_subarray`, `MPI_Type_create_resized`, `MPI_Type_commit`, `MPI_Type_free`,
//! `MPI_Type_get_extent(_x)`, `MPI_Type_get_true_extent(_x)`, `MPI_Get_address`, and
//! the pair types of `MPI_MINLOC` / `MPI_MAXLOC` (`MPI_FLOAT_INT`, `MPI_DOUBLE_INT`,
//! `MPI_LONG_INT`, `MPI_2INT`, `MPI_SHORT_INT`).
//!
//! A datatype is a [`Layout`]: where the bytes of one element lie (a tree of the constructors
//! that made it, walked when data moves), its size (the bytes of data), its lower bound and its
//! extent (the stride of consecutive elements). Calls that take derived types
//! ([`Data`]) pack the data into a contiguous buffer before it is sent and unpack what is
//! received; a type whose data is one contiguous run (dense) moves without a copy, as the basic
//! types do.
//!
//! As in MPI-4.0 §5.1, offsets are signed: strides and displacements may be negative, the lower
//! bound may be negative, and a resized type's extent too (its upper bound `lb + extent` below
//! its lower bound). A buffer pointer points at the origin (offset 0) of its first element;
//! element k's origin is `k · extent` from it, so data may lie before the pointer. The bytes
//! `count` elements touch are their [`Window`], from the least true lower bound of an element
//! to the greatest true upper bound, possibly starting below the pointer (or, with
//! `MPI_BOTTOM`, at an address); a C buffer is reached through it run by run ([`Raw`]), never
//! as one slice. Bounds are computed as MPI-4.0 §5.1.7 says: the least lower bound and the
//! greatest upper bound of the copies of the old types (the markers of a resized type carry
//! into the types made from it); sizes and bounds that overflow an `MPI_Aint` are
//! `MPI_ERR_COUNT`.

use std::ffi::c_void;
use std::os::raw::c_int;
use std::sync::Arc;

use crate::constants::*;
use crate::datatypes::{input, offset_by, output, zeroed, Element, IN_PLACE};
use crate::errors::{boundary, out, Failure};
use crate::external32::External;
use crate::point_to_point::array;
use crate::runtime::with_runtime;
use crate::typeinfo::Envelope;

/// `MPI_Aint`.
#[allow(non_camel_case_types)]
pub(crate) type MPI_Aint = isize;

/// Handles of derived datatypes start here, above every predefined one.
pub(crate) const DERIVED_BASE: c_int = 1 << 20;

/// How the bytes of one element of a datatype lie. Offsets and strides are bytes from the
/// element's origin (where a buffer pointer points), and may be negative.
#[derive(Debug)]
enum Shape {
    /// One basic element, aligned on `align` bytes (a complex number on its part's alignment,
    /// anything else on the largest power of two that divides its size, at most 16), written
    /// in the external32 representation as `external` says.
    Basic { align: usize, external: External },
    /// A pair type: a value of `value` bytes at offset 0 (`external`: its external32 form) and
    /// a C `int` at `index_at`.
    Pair {
        value: usize,
        index_at: usize,
        external: External,
    },
    /// `count` elements of `child`, one extent apart.
    Contiguous { count: usize, child: Arc<Layout> },
    /// `count` blocks of `blocklen` elements of `child`, `stride` bytes apart.
    Vector {
        count: usize,
        blocklen: usize,
        stride: isize,
        child: Arc<Layout>,
    },
    /// One element of `child` at `offset`, with the bounds the layout gives (a resized type, a
    /// subarray).
    Placed { offset: isize, child: Arc<Layout> },
    /// Blocks of elements of `child`: `(byte offset, elements)` each, in typemap order.
    Indexed {
        blocks: Vec<(isize, usize)>,
        child: Arc<Layout>,
    },
    /// Blocks of elements of their own types (`MPI_Type_create_struct`): `(byte offset,
    /// elements, type)` each, in typemap order.
    Struct {
        blocks: Vec<(isize, usize, Arc<Layout>)>,
    },
}

/// The layout of a datatype's element.
#[derive(Debug)]
pub(crate) struct Layout {
    shape: Shape,
    /// Bytes of data in one element (`MPI_Type_size`).
    pub(crate) size: usize,
    /// The lower bound (`MPI_Type_get_extent`), a byte offset from the element's origin; may be
    /// negative.
    pub(crate) lb: isize,
    /// The distance between consecutive elements (`MPI_Type_get_extent`): upper bound minus
    /// lower bound, negative when a resized type says so. Element k lies at `k · extent` from
    /// the buffer pointer.
    pub(crate) extent: isize,
    /// The bytes the data of one element occupies, `[true lb, true ub)` from its origin
    /// (`MPI_Type_get_true_extent`); `None` for a type without data.
    data: Option<(isize, isize)>,
    /// The bounds are markers set by `MPI_Type_create_resized` (or a subarray), carried into
    /// the types made from it: MPI-4.0 §5.1.7 takes a struct's bounds from its members'
    /// markers alone when some have them, and pads its extent for alignment only when none do.
    marked: bool,
    /// The data of one element is exactly the bytes `[0, size)` and `extent == size`.
    dense: bool,
    /// The basic type that all the data is made of, if there is one (what a reduction
    /// combines).
    pub(crate) element: Option<Element>,
}

fn too_large() -> Failure {
    Failure::new(MPI_ERR_COUNT, "the datatype is too large")
}

/// The largest byte length the library handles.
const MAX_LEN: usize = isize::MAX as usize;

fn mul(a: usize, b: usize) -> Result<usize, Failure> {
    a.checked_mul(b)
        .filter(|&n| n <= MAX_LEN)
        .ok_or_else(too_large)
}

fn add(a: usize, b: usize) -> Result<usize, Failure> {
    a.checked_add(b)
        .filter(|&n| n <= MAX_LEN)
        .ok_or_else(too_large)
}

/// A count or length as a signed byte quantity.
fn signed(n: usize) -> Result<isize, Failure> {
    isize::try_from(n).map_err(|_| too_large())
}

fn imul(a: isize, b: isize) -> Result<isize, Failure> {
    a.checked_mul(b).ok_or_else(too_large)
}

fn iadd(a: isize, b: isize) -> Result<isize, Failure> {
    a.checked_add(b).ok_or_else(too_large)
}

/// The byte range `[lo, hi)` covered by `n >= 1` copies, `step` bytes apart (`step` of either
/// sign), of something covering `[lo, hi)` at the first: the least start and the greatest end
/// of the copies, as MPI computes bounds (each copy's markers, or its data).
fn repeated((lo, hi): (isize, isize), n: usize, step: isize) -> Result<(isize, isize), Failure> {
    let last = imul(signed(n.saturating_sub(1))?, step)?;
    Ok((iadd(lo, last.min(0))?, iadd(hi, last.max(0))?))
}

/// `[lo, hi)` moved `by` bytes.
fn shifted((lo, hi): (isize, isize), by: isize) -> Result<(isize, isize), Failure> {
    Ok((iadd(lo, by)?, iadd(hi, by)?))
}

/// The smallest range covering both (either may be absent).
fn union(a: Option<(isize, isize)>, b: Option<(isize, isize)>) -> Option<(isize, isize)> {
    match (a, b) {
        (Some((alo, ahi)), Some((blo, bhi))) => Some((alo.min(blo), ahi.max(bhi))),
        (a, None) => a,
        (None, b) => b,
    }
}

impl Layout {
    fn basic(size: usize) -> Layout {
        Layout {
            shape: Shape::Basic {
                align: 1 << size.trailing_zeros().min(4),
                external: External::bytes(size),
            },
            size,
            lb: 0,
            extent: size as isize,
            data: (size > 0).then_some((0, size as isize)),
            marked: false,
            dense: true,
            element: None,
        }
    }

    /// The layout of basic type `element`.
    fn of_element(element: Element) -> Layout {
        let mut layout = Layout {
            element: Some(element),
            ..Layout::basic(element.size())
        };
        if let Shape::Basic { external, .. } = &mut layout.shape {
            *external = External::of_element(element);
        }
        layout
    }

    /// A pair type of a `value`-byte value and an int, laid out as C lays out
    /// `struct { value; int; }`.
    fn pair(value: usize) -> Layout {
        let int = std::mem::size_of::<c_int>();
        let align = value.max(int);
        let index_at = value.next_multiple_of(int);
        let reach = index_at + int;
        let extent = reach.next_multiple_of(align);
        let size = value + int;
        Layout {
            shape: Shape::Pair {
                value,
                index_at,
                external: External::bytes(value),
            },
            size,
            lb: 0,
            extent: extent as isize,
            data: Some((0, reach as isize)),
            marked: false,
            dense: index_at == value && extent == size,
            element: None,
        }
    }

    /// The upper bound: the lower bound plus the extent.
    fn ub(&self) -> isize {
        // Never overflows: every constructor checks that lb, ub and their difference fit.
        self.lb + self.extent
    }

    /// The layout of a type with no typemap entries (bounds 0, no data).
    fn empty(shape: Shape, element: Option<Element>) -> Layout {
        Layout {
            shape,
            size: 0,
            lb: 0,
            extent: 0,
            data: None,
            marked: false,
            dense: true,
            element,
        }
    }

    /// A layout with bounds `[lb, ub)` and data `data`, checking that the extent fits.
    #[allow(clippy::too_many_arguments)]
    fn bounded(
        shape: Shape,
        size: usize,
        (lb, ub): (isize, isize),
        data: Option<(isize, isize)>,
        marked: bool,
        dense: bool,
        element: Option<Element>,
    ) -> Result<Layout, Failure> {
        let extent = ub.checked_sub(lb).ok_or_else(too_large)?;
        if let Some((lo, hi)) = data {
            hi.checked_sub(lo).ok_or_else(too_large)?;
        }
        Ok(Layout {
            shape,
            size,
            lb,
            extent,
            data,
            marked,
            dense: dense && lb == 0 && extent == size as isize,
            element,
        })
    }

    /// The bounds of `n >= 1` elements one extent apart from `origin`: `(bounds, data)`.
    #[allow(clippy::type_complexity)]
    fn run_of(
        &self,
        origin: isize,
        n: usize,
    ) -> Result<((isize, isize), Option<(isize, isize)>), Failure> {
        let bounds = shifted(repeated((self.lb, self.ub()), n, self.extent)?, origin)?;
        let data = match self.data {
            Some(d) => Some(shifted(repeated(d, n, self.extent)?, origin)?),
            None => None,
        };
        Ok((bounds, data))
    }

    fn contiguous(count: usize, child: Arc<Layout>) -> Result<Layout, Failure> {
        let size = mul(count, child.size)?;
        if count == 0 {
            return Ok(Layout::empty(Shape::Contiguous { count, child }, None));
        }
        let (bounds, data) = child.run_of(0, count)?;
        let (marked, dense, element) = (child.marked, child.dense, child.element);
        Layout::bounded(
            Shape::Contiguous { count, child },
            size,
            bounds,
            data,
            marked,
            dense,
            element,
        )
    }

    /// A vector of `count` blocks of `blocklen` elements, `stride` bytes apart (`stride` of
    /// either sign).
    fn vector(
        count: usize,
        blocklen: usize,
        stride: isize,
        child: Arc<Layout>,
    ) -> Result<Layout, Failure> {
        let size = mul(mul(count, blocklen)?, child.size)?;
        let shape = |child| Shape::Vector {
            count,
            blocklen,
            stride,
            child,
        };
        if count == 0 || blocklen == 0 {
            let element = child.element;
            return Ok(Layout::empty(shape(child), element));
        }
        let (block, block_data) = child.run_of(0, blocklen)?;
        let bounds = repeated(block, count, stride)?;
        let data = match block_data {
            Some(d) => Some(repeated(d, count, stride)?),
            None => None,
        };
        let block_extent = imul(signed(blocklen)?, child.extent)?;
        let dense = child.dense && (count == 1 || stride == block_extent);
        let (marked, element) = (child.marked, child.element);
        Layout::bounded(shape(child), size, bounds, data, marked, dense, element)
    }

    /// One element of `child` at `offset`, with lower bound `lb` and extent `extent` (either
    /// may be negative; the upper bound `lb + extent` must fit).
    fn placed(
        offset: isize,
        lb: isize,
        extent: isize,
        child: Arc<Layout>,
    ) -> Result<Layout, Failure> {
        let ub = iadd(lb, extent)?;
        let data = match child.data {
            Some(d) => Some(shifted(d, offset)?),
            None => None,
        };
        let dense = offset == 0 && child.dense;
        let (size, element) = (child.size, child.element);
        Layout::bounded(
            Shape::Placed { offset, child },
            size,
            (lb, ub),
            data,
            true,
            dense,
            element,
        )
    }

    /// Blocks of `child` elements, `(byte offset, elements)` each (the indexed types). The lower
    /// bound is the least start of a block, the upper bound the greatest end, as MPI computes
    /// them.
    fn indexed(blocks: Vec<(isize, usize)>, child: Arc<Layout>) -> Result<Layout, Failure> {
        let mut size = 0usize;
        let mut bounds = None;
        let mut data = None;
        let mut dense = child.dense;
        let mut next = 0isize;
        for &(offset, blocklen) in &blocks {
            size = add(size, mul(blocklen, child.size)?)?;
            if blocklen == 0 {
                continue;
            }
            let (b, d) = child.run_of(offset, blocklen)?;
            bounds = union(bounds, Some(b));
            data = union(data, d);
            dense &= offset == next;
            next = iadd(offset, imul(signed(blocklen)?, child.extent)?)?;
        }
        let (marked, element) = (child.marked, child.element);
        match bounds {
            None => Ok(Layout::empty(Shape::Indexed { blocks, child }, element)),
            Some(bounds) => Layout::bounded(
                Shape::Indexed { blocks, child },
                size,
                bounds,
                data,
                marked,
                dense,
                element,
            ),
        }
    }

    /// The alignment of the type: that of its most aligned basic type (a basic type of n bytes
    /// is aligned on the largest power of two that divides n, at most 16), as a C compiler
    /// aligns the struct that holds it.
    fn align(&self) -> usize {
        match &self.shape {
            Shape::Basic { align, .. } => *align,
            Shape::Pair { value, .. } => (*value).max(std::mem::size_of::<c_int>()),
            Shape::Contiguous { child, .. }
            | Shape::Vector { child, .. }
            | Shape::Placed { child, .. }
            | Shape::Indexed { child, .. } => child.align(),
            Shape::Struct { blocks } => blocks
                .iter()
                .filter(|(_, count, _)| *count > 0)
                .map(|(_, _, child)| child.align())
                .max()
                .unwrap_or(1),
        }
    }

    /// A struct type (`MPI_Type_create_struct`): blocks of `(byte offset, elements, type)`. The
    /// bounds are the indexed types' (the least start of a block, the greatest end), and, as
    /// MPI says for struct types, the extent is rounded up to a multiple of the most aligned
    /// member's alignment, so that the extent of a type that describes a C struct is `sizeof`
    /// the struct (its trailing padding included). When members carry bounds set by
    /// `MPI_Type_create_resized`, those markers alone give the bounds, unrounded (MPI-4.0
    /// §5.1.7: the lower bound is the least lb marker if there is one, the upper bound the
    /// greatest ub marker). MPICH 4.0.2 differs when only some members have markers: it takes
    /// every member's bounds and pads (a resized int of lb -2, extent 6 at 0 and a double at 8:
    /// extent 6 here, 24 there).
    fn structure(blocks: Vec<(isize, usize, Arc<Layout>)>) -> Result<Layout, Failure> {
        let mut size = 0usize;
        let mut natural = None;
        let mut markers = None;
        let mut data = None;
        let mut dense = true;
        let mut next = 0isize;
        let mut element: Option<Option<Element>> = None;
        let mut align = 1usize;
        for (offset, count, child) in &blocks {
            let (offset, count) = (*offset, *count);
            size = add(size, mul(count, child.size)?)?;
            if count == 0 {
                continue;
            }
            align = align.max(child.align());
            element = match element {
                None => Some(child.element),
                Some(e) if e == child.element => Some(e),
                Some(_) => Some(None),
            };
            let (b, d) = child.run_of(offset, count)?;
            if child.marked {
                markers = union(markers, Some(b));
            } else {
                natural = union(natural, Some(b));
            }
            data = union(data, d);
            dense &= child.dense && offset == next;
            next = iadd(offset, imul(signed(count)?, child.extent)?)?;
        }
        let element = element.flatten();
        let shape = Shape::Struct { blocks };
        match (markers, natural) {
            (Some(bounds), _) => Layout::bounded(shape, size, bounds, data, true, dense, element),
            (None, Some((lb, ub))) => {
                // Unmarked members have ub >= lb.
                let extent = usize::try_from(ub - lb)
                    .ok()
                    .and_then(|e| e.checked_next_multiple_of(align))
                    .and_then(|e| isize::try_from(e).ok())
                    .ok_or_else(too_large)?;
                let ub = iadd(lb, extent)?;
                Layout::bounded(shape, size, (lb, ub), data, false, dense, element)
            }
            (None, None) => Ok(Layout::empty(shape, element)),
        }
    }

    /// A vector of `count` blocks of `blocklen` ints, `stride` ints apart (for other modules'
    /// tests).
    #[cfg(test)]
    pub(crate) fn test_vector_of_ints(count: usize, blocklen: usize, stride: isize) -> Arc<Layout> {
        let int = Arc::new(Layout::of_element(Element::I32));
        Arc::new(Layout::vector(count, blocklen, stride * 4, int).unwrap())
    }

    /// Whether the data of one element is exactly its first `size` bytes and the extent is the
    /// size: `count` elements in a C buffer are then their packed data.
    pub(crate) fn is_dense(&self) -> bool {
        self.dense
    }

    /// The number of basic elements in `bytes` of packed data of this type (`MPI_Get_elements`):
    /// whole elements times the basic elements of one, plus those of the last, partial one;
    /// `None` when the data ends inside a basic element.
    pub(crate) fn basic_elements_in(&self, bytes: usize) -> Option<usize> {
        if self.size == 0 {
            return (bytes == 0).then_some(0);
        }
        let whole = (bytes / self.size).checked_mul(self.basic_count())?;
        let mut left = bytes % self.size;
        let mut partial = 0usize;
        self.each_basic(&mut |basic| {
            let len = basic.native();
            if left == 0 || len > left {
                return false;
            }
            left -= len;
            partial += 1;
            true
        });
        (left == 0).then(|| whole.checked_add(partial)).flatten()
    }

    /// The number of basic elements in one element of this type.
    fn basic_count(&self) -> usize {
        match &self.shape {
            Shape::Basic { .. } => 1,
            Shape::Pair { .. } => 2,
            Shape::Contiguous { count, child } => count.saturating_mul(child.basic_count()),
            Shape::Vector {
                count,
                blocklen,
                child,
                ..
            } => count
                .saturating_mul(*blocklen)
                .saturating_mul(child.basic_count()),
            Shape::Placed { child, .. } => child.basic_count(),
            Shape::Indexed { blocks, child } => blocks
                .iter()
                .map(|&(_, n)| n.saturating_mul(child.basic_count()))
                .fold(0, usize::saturating_add),
            Shape::Struct { blocks } => blocks
                .iter()
                .map(|(_, n, child)| n.saturating_mul(child.basic_count()))
                .fold(0, usize::saturating_add),
        }
    }

    /// Calls `f(kind)` for every basic element of one element (its size here is
    /// `kind.native()`), in typemap order, while it returns true; returns false once it has
    /// returned false.
    pub(crate) fn each_basic(&self, f: &mut dyn FnMut(External) -> bool) -> bool {
        let repeat = |n: usize, child: &Layout, f: &mut dyn FnMut(External) -> bool| {
            (0..n).all(|_| child.each_basic(f))
        };
        match &self.shape {
            Shape::Basic { external, .. } => f(*external),
            Shape::Pair { external, .. } => {
                f(*external) && f(External::bytes(std::mem::size_of::<c_int>()))
            }
            Shape::Contiguous { count, child } => repeat(*count, child, f),
            Shape::Vector {
                count,
                blocklen,
                child,
                ..
            } => (0..*count).all(|_| repeat(*blocklen, child, f)),
            Shape::Placed { child, .. } => child.each_basic(f),
            Shape::Indexed { blocks, child } => blocks.iter().all(|&(_, n)| repeat(n, child, f)),
            Shape::Struct { blocks } => blocks.iter().all(|(_, n, child)| repeat(*n, child, f)),
        }
    }

    /// The true lower bound and true extent (`MPI_Type_get_true_extent`): the first byte and
    /// the span of the data of one element, whatever its lower bound and extent say (0, 0
    /// for a type without data).
    fn true_extent(&self) -> (isize, isize) {
        // `hi - lo` was checked when the layout was made.
        self.data.map_or((0, 0), |(lo, hi)| (lo, hi - lo))
    }

    /// Calls `f(offset, len)` for every run of data bytes of the element whose origin is at
    /// `base`, in typemap order.
    ///
    /// Offsets are computed with wrapping arithmetic: the origins of inner elements need not
    /// fit in an `isize` on their own (a block far below 0 of a child whose data lies far above
    /// its origin), but every run's offset does (it lies within the bounds checked when the
    /// layout and the [`Window`] were made), and wrapping arithmetic gives it exactly.
    fn walk(&self, base: isize, f: &mut dyn FnMut(isize, usize)) {
        let at = |i: usize, step: isize| (i as isize).wrapping_mul(step);
        if self.dense {
            if self.size > 0 {
                f(base, self.size);
            }
            return;
        }
        match &self.shape {
            Shape::Basic { .. } => f(base, self.size),
            Shape::Pair {
                value, index_at, ..
            } => {
                f(base, *value);
                f(
                    base.wrapping_add(*index_at as isize),
                    std::mem::size_of::<c_int>(),
                );
            }
            Shape::Contiguous { count, child } => {
                for i in 0..*count {
                    child.walk(base.wrapping_add(at(i, child.extent)), f);
                }
            }
            Shape::Vector {
                count,
                blocklen,
                stride,
                child,
            } => {
                for i in 0..*count {
                    child.walk_block(base.wrapping_add(at(i, *stride)), *blocklen, f);
                }
            }
            Shape::Placed { offset, child } => child.walk(base.wrapping_add(*offset), f),
            Shape::Indexed { blocks, child } => {
                for &(offset, blocklen) in blocks {
                    child.walk_block(base.wrapping_add(offset), blocklen, f);
                }
            }
            Shape::Struct { blocks } => {
                for (offset, count, child) in blocks {
                    child.walk_block(base.wrapping_add(*offset), *count, f);
                }
            }
        }
    }

    /// The runs of data bytes of `count` elements whose first origin is at offset 0, in
    /// typemap order, adjacent runs joined (the target bytes of a one-sided operation).
    pub(crate) fn runs(&self, count: usize) -> Vec<(isize, usize)> {
        let mut runs: Vec<(isize, usize)> = Vec::new();
        self.walk_block(0, count, &mut |offset, len| match runs.last_mut() {
            Some((at, n)) if at.wrapping_add(*n as isize) == offset => *n += len,
            _ => runs.push((offset, len)),
        });
        runs
    }

    /// [`Layout::walk`] over `n` elements one extent apart from `base` (a block of a vector,
    /// an indexed or a struct type): one run when the elements are dense.
    fn walk_block(&self, base: isize, n: usize, f: &mut dyn FnMut(isize, usize)) {
        if self.dense {
            if n * self.size > 0 {
                f(base, n * self.size);
            }
        } else {
            for j in 0..n {
                self.walk(base.wrapping_add((j as isize).wrapping_mul(self.extent)), f);
            }
        }
    }

    /// Where the data of `count` elements lies relative to a buffer pointer: `len` bytes from
    /// `low`, the first byte any element touches (element k's origin is at `k · extent`, and
    /// its data at its true bounds from there). `low` may be negative (data before the pointer:
    /// a negative lower bound, displacement or stride, or a negative extent), or far above it
    /// (a struct type whose displacements are absolute addresses, used with `MPI_BOTTOM`, has
    /// the address of its first block as `low`). An empty window for no data.
    ///
    /// # Errors
    /// `MPI_ERR_COUNT` when the window does not fit in the address space.
    pub(crate) fn window(&self, count: usize) -> Result<Window, Failure> {
        match (count, self.data) {
            (0, _) | (_, None) => Ok(Window { low: 0, len: 0 }),
            (n, Some(data)) => {
                let (low, high) = repeated(data, n, self.extent)?;
                let len = high
                    .checked_sub(low)
                    .and_then(|len| usize::try_from(len).ok())
                    .ok_or_else(too_large)?;
                Ok(Window { low, len })
            }
        }
    }

    /// The data of `count` elements of `buffer`, packed (the elements start at the slice's
    /// start, and lie within it).
    ///
    /// # Errors
    /// `MPI_ERR_INTERN` when the packed buffer cannot be allocated.
    #[cfg(test)]
    fn pack(&self, count: usize, buffer: &[u8]) -> Result<Vec<u8>, Failure> {
        self.pack_at(count, Raw::of(buffer), 0)
    }

    /// The data of `count` elements packed from the bytes of a C buffer (a [`Window`] of it,
    /// or a slice) that start `origin` bytes from the buffer pointer (negative: before it).
    ///
    /// # Errors
    /// `MPI_ERR_INTERN` when the packed buffer cannot be allocated, `MPI_ERR_COUNT` when it is
    /// too large.
    pub(crate) fn pack_at(
        &self,
        count: usize,
        buffer: Raw,
        origin: isize,
    ) -> Result<Vec<u8>, Failure> {
        let mut packed = zeroed(mul(self.size, count)?)?;
        let mut to = 0;
        for k in 0..count {
            let base = (k as isize).wrapping_mul(self.extent);
            self.walk(base, &mut |at, len| {
                packed[to..to + len]
                    .copy_from_slice(buffer.run(at.wrapping_sub(origin) as usize, len));
                to += len;
            });
        }
        Ok(packed)
    }

    /// Unpacks `packed` (the data of at most `count` elements: a short message fills a prefix)
    /// into `buffer` (the elements start at the slice's start, and lie within it).
    #[cfg(test)]
    fn unpack(&self, count: usize, packed: &[u8], buffer: &mut [u8]) {
        self.unpack_at(count, packed, Raw::of_mut(buffer), 0);
    }

    /// Unpacks `packed` (the data of at most `count` elements: a short message fills a prefix)
    /// into the bytes of a C buffer that start `origin` bytes from the buffer pointer (its
    /// [`Window`]).
    pub(crate) fn unpack_at(&self, count: usize, packed: &[u8], buffer: Raw, origin: isize) {
        let mut from = 0;
        for k in 0..count {
            if from >= packed.len() {
                return;
            }
            let base = (k as isize).wrapping_mul(self.extent);
            self.walk(base, &mut |at, len| {
                let len = len.min(packed.len() - from);
                buffer
                    .run_mut(at.wrapping_sub(origin) as usize, len)
                    .copy_from_slice(&packed[from..from + len]);
                from += len;
            });
        }
    }
}

/// Some bytes of a C buffer (a [`Window`], or a Rust slice), reached one run of a type's data
/// at a time, never as one slice: with `MPI_BOTTOM` a type's data may lie in several objects,
/// with unrelated (even unmapped) memory between them, and a send's runs may interleave with
/// a receive's (MPI forbids only overlapping the bytes themselves).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Raw {
    start: *mut u8,
    len: usize,
    /// `start` came from an address (`MPI_BOTTOM` plus a displacement): each run's pointer is
    /// made from its own address, with the provenance `MPI_Get_address` exposed.
    exposed: bool,
}

impl Raw {
    /// The bytes of `bytes`, to read.
    pub(crate) fn of(bytes: &[u8]) -> Raw {
        Raw {
            start: bytes.as_ptr().cast_mut(),
            len: bytes.len(),
            exposed: false,
        }
    }

    /// The bytes of `bytes`, to read or write.
    pub(crate) fn of_mut(bytes: &mut [u8]) -> Raw {
        Raw {
            start: bytes.as_mut_ptr(),
            len: bytes.len(),
            exposed: false,
        }
    }

    /// The `len` bytes from `at` within these bytes.
    pub(crate) fn sub(self, at: usize, len: usize) -> Raw {
        assert!(at.checked_add(len).is_some_and(|end| end <= self.len));
        Raw {
            start: self.start.wrapping_add(at),
            len,
            exposed: self.exposed,
        }
    }

    fn run_pointer(&self, at: usize, len: usize) -> *mut u8 {
        assert!(
            at.checked_add(len).is_some_and(|end| end <= self.len),
            "a run of {len} bytes at {at} outside a window of {}",
            self.len
        );
        if self.exposed {
            std::ptr::with_exposed_provenance_mut(self.start.addr() + at)
        } else {
            self.start.wrapping_add(at)
        }
    }

    /// The run of `len` bytes at `at`, to read.
    fn run(&self, at: usize, len: usize) -> &[u8] {
        if len == 0 {
            return &[];
        }
        // SAFETY: by the contract under which this `Raw` was made (a live slice, or a window
        // of a C buffer whose data is readable while it is used), the bytes of every run of
        // the type's data are readable, and each run lies within one object.
        unsafe { std::slice::from_raw_parts(self.run_pointer(at, len), len) }
    }

    /// The run of `len` bytes at `at`, to write.
    #[allow(clippy::mut_from_ref)]
    fn run_mut(&self, at: usize, len: usize) -> &mut [u8] {
        if len == 0 {
            return &mut [];
        }
        // SAFETY: as `run`, writable and used by nothing else while the run is written (a
        // receive's runs do not overlap, and each is written once at a time).
        unsafe { std::slice::from_raw_parts_mut(self.run_pointer(at, len), len) }
    }
}

/// The bytes of a C buffer that `count` elements of a type touch: `len` bytes from `low`
/// bytes after the buffer pointer (before it when `low` is negative; [`Layout::window`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    pub(crate) low: isize,
    pub(crate) len: usize,
}

impl Window {
    /// These bytes of C buffer `buffer`, to read run by run (they may start before `buffer`).
    ///
    /// # Safety
    /// The bytes of the type's data in `buffer` (at the type's offsets from `buffer`, negative
    /// ones included) are readable and unchanged while the result is used (`buffer` may be
    /// `MPI_BOTTOM`, NULL, when `low` is an address).
    ///
    /// # Errors
    /// `MPI_ERR_BUFFER` for a NULL (or `MPI_IN_PLACE`) start with data (from `MPI_BOTTOM`,
    /// data at an offset that is not an address, 0 or below).
    pub(crate) unsafe fn read(self, buffer: *const c_void) -> Result<Raw, Failure> {
        self.raw(buffer)
    }

    /// These bytes of C buffer `buffer`, to write run by run.
    ///
    /// # Safety
    /// The bytes of the type's data in `buffer` are writable and used by nothing else while
    /// the result is used.
    ///
    /// # Errors
    /// `MPI_ERR_BUFFER` for a NULL (or `MPI_IN_PLACE`) start with data.
    pub(crate) unsafe fn write(self, buffer: *mut c_void) -> Result<Raw, Failure> {
        self.raw(buffer)
    }

    fn raw(self, buffer: *const c_void) -> Result<Raw, Failure> {
        if self.len == 0 {
            return Ok(Raw::of(&[]));
        }
        let start = offset_by(buffer, self.low);
        if start.is_null() || start == IN_PLACE {
            return Err(Failure::new(MPI_ERR_BUFFER, "the buffer is NULL"));
        }
        Ok(Raw {
            start: start.cast::<u8>().cast_mut(),
            len: self.len,
            exposed: buffer.is_null(),
        })
    }
}

/// The layout of pair type `datatype`, if it is one.
pub(crate) fn pair_layout(datatype: c_int) -> Option<Layout> {
    let value = match datatype {
        MPI_FLOAT_INT => External::of_element(Element::F32),
        MPI_DOUBLE_INT => External::of_element(Element::F64),
        MPI_LONG_INT => External::of_element(Element::Long),
        MPI_2INT => External::of_element(Element::I32),
        MPI_SHORT_INT => External::of_element(Element::I16),
        MPI_LONG_DOUBLE_INT => External::of_wide(crate::wide::Wide::LongDouble),
        _ => return None,
    };
    let mut layout = Layout::pair(value.native());
    if let Shape::Pair { external, .. } = &mut layout.shape {
        *external = value;
    }
    Some(layout)
}

/// Whether `datatype` is predefined (a basic, pair, `long double` or complex type).
pub(crate) fn predefined(datatype: c_int) -> bool {
    Element::of(datatype).is_ok()
        || pair_layout(datatype).is_some()
        || crate::wide::Wide::of(datatype).is_some()
}

/// A derived datatype in the table.
#[derive(Debug, Clone)]
pub(crate) struct DerivedType {
    pub(crate) layout: Arc<Layout>,
    pub(crate) committed: bool,
    /// How it was made (`MPI_Type_get_envelope` / `_get_contents`).
    pub(crate) envelope: Arc<crate::typeinfo::Envelope>,
}

/// The layout of any datatype handle; a derived type must be committed when `committed`.
///
/// # Errors
/// `MPI_ERR_TYPE` for an invalid, freed or (when `committed`) uncommitted datatype.
pub(crate) fn layout_of(datatype: c_int, committed: bool) -> Result<Arc<Layout>, Failure> {
    if let Ok(element) = Element::of(datatype) {
        return Ok(Arc::new(Layout::of_element(element)));
    }
    if let Some(pair) = pair_layout(datatype) {
        return Ok(Arc::new(pair));
    }
    if let Some(wide) = crate::wide::Wide::of(datatype) {
        let mut layout = Layout::basic(wide.size());
        layout.shape = Shape::Basic {
            align: wide.align(),
            external: External::of_wide(wide),
        };
        return Ok(Arc::new(layout));
    }
    with_runtime(|runtime| {
        let found = runtime.datatypes.get(&datatype).ok_or_else(|| {
            Failure::new(
                MPI_ERR_TYPE,
                format!("invalid or freed datatype {datatype}"),
            )
        })?;
        if committed && !found.committed {
            return Err(Failure::new(
                MPI_ERR_TYPE,
                format!("datatype {datatype} is not committed (MPI_Type_commit)"),
            ));
        }
        Ok(Arc::clone(&found.layout))
    })
}

/// `count` elements of a datatype in a call that accepts derived types.
#[derive(Debug)]
pub(crate) enum Data {
    /// Data in one run of this many bytes (basic types, dense derived ones).
    Contiguous(usize),
    /// Data with gaps: packed before a send, unpacked after a receive.
    Strided {
        layout: Arc<Layout>,
        count: usize,
        /// The bytes the elements touch in the C buffer.
        window: Window,
    },
}

impl Data {
    /// `count` elements of `datatype` (basic, pair, or a committed derived type).
    ///
    /// # Errors
    /// `MPI_ERR_COUNT` for a negative count or an overflow, `MPI_ERR_TYPE` as [`layout_of`].
    pub(crate) fn of(count: c_int, datatype: c_int) -> Result<Data, Failure> {
        let count = usize::try_from(count)
            .map_err(|_| Failure::new(MPI_ERR_COUNT, format!("negative count {count}")))?;
        if let Ok(element) = Element::of(datatype) {
            return Ok(Data::Contiguous(mul(count, element.size())?));
        }
        // No data of no type: MPICH and Open MPI take it (programs pass it with
        // MPI_PROC_NULL), and it describes nothing to check.
        if count == 0 && datatype == MPI_DATATYPE_NULL {
            return Ok(Data::Contiguous(0));
        }
        let layout = layout_of(datatype, true)?;
        if layout.dense {
            return Ok(Data::Contiguous(mul(count, layout.size)?));
        }
        let window = layout.window(count)?;
        mul(count, layout.size)?;
        Ok(Data::Strided {
            layout,
            count,
            window,
        })
    }

    /// The data of C buffer `buffer`, packed (borrowed when it is contiguous already).
    ///
    /// # Safety
    /// `buffer` is NULL or points at the elements, readable, for `'a`.
    ///
    /// # Errors
    /// `MPI_ERR_BUFFER` for a NULL buffer with data.
    pub(crate) unsafe fn read<'a>(
        &self,
        buffer: *const c_void,
    ) -> Result<std::borrow::Cow<'a, [u8]>, Failure> {
        Ok(match self {
            // SAFETY: forwarded contract.
            Data::Contiguous(len) => unsafe { input(buffer, *len)? }.into(),
            Data::Strided {
                layout,
                count,
                window,
            } => {
                // SAFETY: forwarded contract: the elements touch the window's bytes.
                let source = unsafe { window.read(buffer)? };
                layout.pack_at(*count, source, window.low)?.into()
            }
        })
    }

    /// The bytes of this data packed.
    ///
    /// # Errors
    /// `MPI_ERR_COUNT` when they are too many to count.
    pub(crate) fn packed_len(&self) -> Result<usize, Failure> {
        match self {
            Data::Contiguous(len) => Ok(*len),
            Data::Strided { layout, count, .. } => mul(*count, layout.size),
        }
    }

    /// Where a receive of this data into C buffer `buffer` lands.
    ///
    /// # Safety
    /// `buffer` is NULL or points at the elements, writable and used by nothing else, for `'a`.
    ///
    /// # Errors
    /// `MPI_ERR_BUFFER` for a NULL buffer with data.
    pub(crate) unsafe fn target<'a>(&self, buffer: *mut c_void) -> Result<Target<'a>, Failure> {
        Ok(match self {
            // SAFETY: forwarded contract.
            Data::Contiguous(len) => Target::Direct(unsafe { output(buffer, *len)? }),
            Data::Strided {
                layout,
                count,
                window,
            } => Target::Strided {
                scratch: zeroed(layout.size * count)?,
                // SAFETY: forwarded contract: the elements touch the window's bytes.
                buffer: unsafe { window.write(buffer)? },
                layout: Arc::clone(layout),
                count: *count,
                origin: window.low,
                held: std::marker::PhantomData,
            },
        })
    }
}

/// Where a receive lands: the C buffer itself, or a scratch buffer unpacked into it afterwards.
pub(crate) enum Target<'a> {
    Direct(&'a mut [u8]),
    Strided {
        scratch: Vec<u8>,
        /// The window of the C buffer the elements touch, `origin` bytes from its pointer
        /// (reserved to the receive for `'a`).
        buffer: Raw,
        layout: Arc<Layout>,
        count: usize,
        origin: isize,
        held: std::marker::PhantomData<&'a mut [u8]>,
    },
}

impl Target<'_> {
    /// The contiguous buffer the message is received into.
    pub(crate) fn receive_buffer(&mut self) -> &mut [u8] {
        match self {
            Target::Direct(buffer) => buffer,
            Target::Strided { scratch, .. } => scratch,
        }
    }

    /// Puts the `received` bytes where they belong (unpacks them).
    pub(crate) fn finish(self, received: usize) {
        if let Target::Strided {
            scratch,
            buffer,
            layout,
            count,
            origin,
            ..
        } = self
        {
            let received = received.min(scratch.len());
            layout.unpack_at(count, &scratch[..received], buffer, origin);
        }
    }
}

/// The unpacking a non-blocking receive of a strided type does when it completes: it owns the
/// scratch buffer the runtime's request receives into.
#[derive(Debug)]
pub(crate) struct Unpack {
    /// From `Box::into_raw`; freed by `Drop`.
    scratch: *mut [u8],
    /// The window of the C buffer the elements touch, `origin` bytes from the buffer pointer.
    buffer: Raw,
    origin: isize,
    layout: Arc<Layout>,
    count: usize,
}

// SAFETY: `scratch` is owned by the `Unpack` (nothing else frees it), and `buffer` is the C
// caller's receive buffer, which MPI reserves to the request until it completes, from whatever
// thread completes it.
unsafe impl Send for Unpack {}

impl Unpack {
    /// An `Unpack` for data `data`, and the scratch buffer the request receives into.
    ///
    /// # Safety
    /// `buffer` is NULL or points at the elements, writable and used by nothing else until the
    /// request completes; the returned slice must not be used after the `Unpack` is dropped or
    /// `apply`'d (the request that holds it is dropped first).
    ///
    /// # Errors
    /// `MPI_ERR_BUFFER` for a NULL buffer with data.
    pub(crate) unsafe fn new(
        layout: &Arc<Layout>,
        count: usize,
        window: Window,
        buffer: *mut c_void,
    ) -> Result<(Unpack, &'static mut [u8]), Failure> {
        // SAFETY: forwarded contract; only checked here (kept as a pointer).
        let checked = unsafe { window.write(buffer)? };
        let scratch = Box::into_raw(zeroed(layout.size * count)?.into_boxed_slice());
        let unpack = Unpack {
            scratch,
            buffer: checked,
            origin: window.low,
            layout: Arc::clone(layout),
            count,
        };
        // SAFETY: `scratch` is a live allocation that this `Unpack` frees only in `drop`, and
        // by the contract the slice is not used after that.
        let receive = unsafe { &mut *scratch };
        Ok((unpack, receive))
    }

    /// Unpacks the `received` bytes into the C buffer. Called once the request that received
    /// into the scratch buffer is dropped.
    pub(crate) fn apply(self, received: usize) {
        // SAFETY: `scratch` is live (freed only by drop) and no request uses it any more;
        // `buffer`'s runs are reserved to this receive by the C caller until it completes.
        let scratch = unsafe { &*self.scratch };
        let received = received.min(scratch.len());
        self.layout
            .unpack_at(self.count, &scratch[..received], self.buffer, self.origin);
    }
}

impl Drop for Unpack {
    fn drop(&mut self) {
        // SAFETY: from `Box::into_raw` in `new`, freed only here.
        drop(unsafe { Box::from_raw(self.scratch) });
    }
}

/// The size in bytes of datatype `datatype` (any committed or not).
pub(crate) fn type_size(datatype: c_int) -> Result<usize, Failure> {
    match Element::of(datatype) {
        Ok(element) => Ok(element.size()),
        Err(_) => Ok(layout_of(datatype, false)?.size),
    }
}

/// Registers a new derived type made as `envelope` says and writes its handle.
fn register(
    layout: Layout,
    envelope: crate::typeinfo::Envelope,
    newtype: &crate::errors::Out<c_int>,
) -> Result<(), Failure> {
    let made = DerivedType {
        layout: Arc::new(layout),
        committed: false,
        envelope: Arc::new(envelope),
    };
    newtype.write(add_type(made)?);
    Ok(())
}

/// Adds `made` to the table; its new handle.
pub(crate) fn add_type(made: DerivedType) -> Result<c_int, Failure> {
    with_runtime(|runtime| {
        let handle = DERIVED_BASE
            .checked_add(runtime.next_handle())
            .ok_or_else(|| Failure::new(MPI_ERR_INTERN, "out of datatype handles"))?;
        runtime.datatypes.insert(handle, made);
        Ok(handle)
    })
}

fn non_negative(value: c_int, what: &str) -> Result<usize, Failure> {
    usize::try_from(value)
        .map_err(|_| Failure::new(MPI_ERR_COUNT, format!("{what} {value} is negative")))
}

/// `MPI_Type_contiguous` (MPI-4.0 §5.1.2): `count` elements of `oldtype` in a row.
///
/// # Errors
/// `MPI_ERR_COUNT` for a negative count, `MPI_ERR_TYPE` for an invalid or freed `oldtype`,
/// `MPI_ERR_ARG` for a NULL `newtype`.
///
/// # Safety
/// `newtype` is NULL or points at a writable `MPI_Datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_contiguous(
    count: c_int,
    oldtype: c_int,
    newtype: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let newtype = unsafe { out(newtype, "newtype")? };
        let envelope = Envelope::new(MPI_COMBINER_CONTIGUOUS, vec![count], vec![], &[oldtype])?;
        let count = non_negative(count, "count")?;
        let child = layout_of(oldtype, false)?;
        register(Layout::contiguous(count, child)?, envelope, &newtype)
    })
}

/// The vector constructors: `stride` in bytes, or in extents of `oldtype` when `!bytes`.
fn vector(
    count: c_int,
    blocklength: c_int,
    stride: isize,
    bytes: bool,
    oldtype: c_int,
    newtype: &crate::errors::Out<c_int>,
) -> Result<(), Failure> {
    let envelope = if bytes {
        Envelope::new(
            MPI_COMBINER_HVECTOR,
            vec![count, blocklength],
            vec![stride],
            &[oldtype],
        )
    } else {
        let ints = vec![count, blocklength, stride as c_int];
        Envelope::new(MPI_COMBINER_VECTOR, ints, vec![], &[oldtype])
    }?;
    let count = non_negative(count, "count")?;
    let blocklen = non_negative(blocklength, "blocklength")?;
    let child = layout_of(oldtype, false)?;
    let stride = if bytes {
        stride
    } else {
        imul(stride, child.extent)?
    };
    register(
        Layout::vector(count, blocklen, stride, child)?,
        envelope,
        newtype,
    )
}

/// `MPI_Type_vector` (MPI-4.0 §5.1.2): `count` blocks of `blocklength` elements of `oldtype`,
/// the starts of consecutive blocks `stride` extents of `oldtype` apart (a negative stride
/// puts each block before the previous one).
///
/// # Errors
/// `MPI_ERR_COUNT` for a negative count or block length or a type too large for the address
/// space, `MPI_ERR_ARG` for a NULL `newtype`, `MPI_ERR_TYPE` for an invalid or freed
/// `oldtype`.
///
/// # Safety
/// `newtype` is NULL or points at a writable `MPI_Datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_vector(
    count: c_int,
    blocklength: c_int,
    stride: c_int,
    oldtype: c_int,
    newtype: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let newtype = unsafe { out(newtype, "newtype")? };
        vector(
            count,
            blocklength,
            stride as isize,
            false,
            oldtype,
            &newtype,
        )
    })
}

/// `MPI_Type_create_hvector` (MPI-4.0 §5.1.2): as `MPI_Type_vector` with the stride in bytes.
///
/// # Errors
/// As `MPI_Type_vector`.
///
/// # Safety
/// `newtype` is NULL or points at a writable `MPI_Datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hvector(
    count: c_int,
    blocklength: c_int,
    stride: MPI_Aint,
    oldtype: c_int,
    newtype: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let newtype = unsafe { out(newtype, "newtype")? };
        vector(count, blocklength, stride, true, oldtype, &newtype)
    })
}

/// `MPI_Type_create_resized` (MPI-4.0 §5.1.7): `oldtype` with lower bound `lb` and extent
/// `extent` (upper bound `lb + extent`), either of which may be negative; the data stays where
/// `oldtype` has it.
///
/// # Errors
/// `MPI_ERR_COUNT` when `lb + extent` overflows, `MPI_ERR_ARG` for a NULL `newtype`;
/// `MPI_ERR_TYPE` for an invalid or freed `oldtype`.
///
/// # Safety
/// `newtype` is NULL or points at a writable `MPI_Datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_resized(
    oldtype: c_int,
    lb: MPI_Aint,
    extent: MPI_Aint,
    newtype: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let newtype = unsafe { out(newtype, "newtype")? };
        let envelope = Envelope::new(MPI_COMBINER_RESIZED, vec![], vec![lb, extent], &[oldtype])?;
        let child = layout_of(oldtype, false)?;
        register(Layout::placed(0, lb, extent, child)?, envelope, &newtype)
    })
}

/// The layout of an `MPI_Type_create_subarray` in C order (the last dimension varies fastest).
fn subarray(
    sizes: &[c_int],
    subsizes: &[c_int],
    starts: &[c_int],
    old: Arc<Layout>,
) -> Result<Layout, Failure> {
    let n = sizes.len();
    let bad = |what: String| Failure::new(MPI_ERR_ARG, what);
    for i in 0..n {
        let (size, sub, start) = (sizes[i], subsizes[i], starts[i]);
        if size < 1 || sub < 0 || sub > size || start < 0 || start > size - sub {
            return Err(bad(format!(
                "dimension {i}: size {size}, subsize {sub}, start {start} (need size >= 1, \
                 0 <= subsize <= size, 0 <= start <= size - subsize)"
            )));
        }
    }
    // Byte strides of the full array's dimensions.
    let mut strides = vec![0isize; n];
    let mut stride = old.extent;
    for i in (0..n).rev() {
        strides[i] = stride;
        stride = imul(stride, sizes[i] as isize)?;
    }
    let full = stride;
    let mut layout = Arc::new(Layout::contiguous(subsizes[n - 1] as usize, old)?);
    for i in (0..n - 1).rev() {
        layout = Arc::new(Layout::vector(subsizes[i] as usize, 1, strides[i], layout)?);
    }
    let mut offset = 0isize;
    for i in 0..n {
        offset = iadd(offset, imul(starts[i] as isize, strides[i])?)?;
    }
    Layout::placed(offset, 0, full, layout)
}

/// `MPI_Type_create_subarray` (MPI-4.0 §5.1.3): the block of `subsizes` at `starts` of an
/// `ndims`-dimensional array of `sizes` elements of `oldtype`, in C (`MPI_ORDER_C`) or Fortran
/// (`MPI_ORDER_FORTRAN`) order; its extent is the whole array's.
///
/// # Errors
/// `MPI_ERR_ARG` for `ndims < 1`, a NULL array or `newtype`, sizes, subsizes or starts that do
/// not fit, or another order; `MPI_ERR_TYPE` for an invalid or freed `oldtype`.
///
/// # Safety
/// `sizes`, `subsizes` and `starts` are NULL or point at `ndims` readable ints; `newtype` is
/// NULL or points at a writable `MPI_Datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_subarray(
    ndims: c_int,
    sizes: *const c_int,
    subsizes: *const c_int,
    starts: *const c_int,
    order: c_int,
    oldtype: c_int,
    newtype: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let newtype = unsafe { out(newtype, "newtype")? };
        if ndims < 1 {
            return Err(Failure::new(
                MPI_ERR_ARG,
                format!("ndims {ndims} is not positive"),
            ));
        }
        let read = |pointer: *const c_int, what: &str| {
            // SAFETY: forwarded contract; only read, during this call.
            unsafe { array(pointer.cast_mut(), ndims, what) }.map(|a| a.to_vec())
        };
        let (mut sizes, mut subsizes, mut starts) = (
            read(sizes, "sizes")?,
            read(subsizes, "subsizes")?,
            read(starts, "starts")?,
        );
        let ints = std::iter::once(ndims)
            .chain(sizes.iter().chain(&subsizes).chain(&starts).copied())
            .chain(std::iter::once(order))
            .collect();
        let envelope = Envelope::new(MPI_COMBINER_SUBARRAY, ints, vec![], &[oldtype])?;
        match order {
            MPI_ORDER_C => {}
            MPI_ORDER_FORTRAN => {
                sizes.reverse();
                subsizes.reverse();
                starts.reverse();
            }
            _ => {
                return Err(Failure::new(
                    MPI_ERR_ARG,
                    format!("order {order} is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN"),
                ))
            }
        }
        let old = layout_of(oldtype, false)?;
        register(
            subarray(&sizes, &subsizes, &starts, old)?,
            envelope,
            &newtype,
        )
    })
}

/// The indexed constructors: block i of `blocklens[i]` elements of `oldtype` at `displs[i]`,
/// in bytes or (when `!bytes`) in extents of `oldtype`.
fn indexed(
    blocklens: &[c_int],
    displs: &[isize],
    bytes: bool,
    oldtype: c_int,
    envelope: Envelope,
    newtype: &crate::errors::Out<c_int>,
) -> Result<(), Failure> {
    let child = layout_of(oldtype, false)?;
    let blocks = blocklens
        .iter()
        .zip(displs)
        .map(|(&blocklen, &displ)| {
            let blocklen = non_negative(blocklen, "blocklength")?;
            let offset = if bytes {
                displ
            } else {
                imul(displ, child.extent)?
            };
            Ok((offset, blocklen))
        })
        .collect::<Result<Vec<_>, Failure>>()?;
    register(Layout::indexed(blocks, child)?, envelope, newtype)
}

/// `MPI_Type_indexed` (MPI-4.0 §5.1.2): block i of `array_of_blocklengths[i]` elements of
/// `oldtype` at `array_of_displacements[i]` extents of it (negative displacements put blocks
/// before the buffer pointer).
///
/// # Errors
/// `MPI_ERR_COUNT` for a negative count or block length or a type too large for the address
/// space, `MPI_ERR_ARG` for a NULL pointer, `MPI_ERR_TYPE` for an invalid or freed `oldtype`.
///
/// # Safety
/// The arrays are NULL or point at `count` readable ints; `newtype` is NULL or points at a
/// writable `MPI_Datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_indexed(
    count: c_int,
    array_of_blocklengths: *const c_int,
    array_of_displacements: *const c_int,
    oldtype: c_int,
    newtype: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let newtype = unsafe { out(newtype, "newtype")? };
        // SAFETY: forwarded contract; only read, during this call.
        let blocklens = unsafe { array(array_of_blocklengths.cast_mut(), count, "blocklengths")? };
        // SAFETY: forwarded contract; only read, during this call.
        let displs = unsafe { array(array_of_displacements.cast_mut(), count, "displacements")? };
        let ints = std::iter::once(count)
            .chain(blocklens.iter().chain(displs.iter()).copied())
            .collect();
        let envelope = Envelope::new(MPI_COMBINER_INDEXED, ints, vec![], &[oldtype])?;
        let displs: Vec<isize> = displs.iter().map(|&d| d as isize).collect();
        indexed(blocklens, &displs, false, oldtype, envelope, &newtype)
    })
}

/// `MPI_Type_create_hindexed` (MPI-4.0 §5.1.2): as `MPI_Type_indexed` with the displacements
/// in bytes.
///
/// # Errors
/// As `MPI_Type_indexed`.
///
/// # Safety
/// `array_of_blocklengths` is NULL or points at `count` readable ints,
/// `array_of_displacements` at `count` readable `MPI_Aint`s; `newtype` is NULL or points at a
/// writable `MPI_Datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hindexed(
    count: c_int,
    array_of_blocklengths: *const c_int,
    array_of_displacements: *const MPI_Aint,
    oldtype: c_int,
    newtype: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let newtype = unsafe { out(newtype, "newtype")? };
        // SAFETY: forwarded contract; only read, during this call.
        let blocklens = unsafe { array(array_of_blocklengths.cast_mut(), count, "blocklengths")? };
        // SAFETY: forwarded contract; only read, during this call.
        let displs = unsafe { array(array_of_displacements.cast_mut(), count, "displacements")? };
        let ints = std::iter::once(count)
            .chain(blocklens.iter().copied())
            .collect();
        let envelope = Envelope::new(MPI_COMBINER_HINDEXED, ints, displs.to_vec(), &[oldtype])?;
        indexed(blocklens, displs, true, oldtype, envelope, &newtype)
    })
}

/// `MPI_Type_create_indexed_block` (MPI-4.0 §5.1.2): as `MPI_Type_indexed` with one block
/// length for every block.
///
/// # Errors
/// As `MPI_Type_indexed`.
///
/// # Safety
/// `array_of_displacements` is NULL or points at `count` readable ints; `newtype` is NULL or
/// points at a writable `MPI_Datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_indexed_block(
    count: c_int,
    blocklength: c_int,
    array_of_displacements: *const c_int,
    oldtype: c_int,
    newtype: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let newtype = unsafe { out(newtype, "newtype")? };
        // SAFETY: forwarded contract; only read, during this call.
        let displs = unsafe { array(array_of_displacements.cast_mut(), count, "displacements")? };
        let ints = [count, blocklength]
            .into_iter()
            .chain(displs.iter().copied())
            .collect();
        let envelope = Envelope::new(MPI_COMBINER_INDEXED_BLOCK, ints, vec![], &[oldtype])?;
        let displs: Vec<isize> = displs.iter().map(|&d| d as isize).collect();
        let blocklens = vec![blocklength; displs.len()];
        indexed(&blocklens, &displs, false, oldtype, envelope, &newtype)
    })
}

/// `MPI_Type_create_hindexed_block` (MPI-4.0 §5.1.2): as `MPI_Type_create_indexed_block`
/// with the displacements in bytes.
///
/// # Errors
/// As `MPI_Type_indexed`.
///
/// # Safety
/// `array_of_displacements` is NULL or points at `count` readable `MPI_Aint`s; `newtype` is
/// NULL or points at a writable `MPI_Datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_hindexed_block(
    count: c_int,
    blocklength: c_int,
    array_of_displacements: *const MPI_Aint,
    oldtype: c_int,
    newtype: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let newtype = unsafe { out(newtype, "newtype")? };
        // SAFETY: forwarded contract; only read, during this call.
        let displs = unsafe { array(array_of_displacements.cast_mut(), count, "displacements")? };
        let ints = vec![count, blocklength];
        let envelope = Envelope::new(
            MPI_COMBINER_HINDEXED_BLOCK,
            ints,
            displs.to_vec(),
            &[oldtype],
        )?;
        let blocklens = vec![blocklength; displs.len()];
        indexed(&blocklens, displs, true, oldtype, envelope, &newtype)
    })
}

/// `MPI_Type_create_struct` (MPI-4.0 §5.1.2): block i of `array_of_blocklengths[i]` elements
/// of `array_of_types[i]` at byte displacement `array_of_displacements[i]`. The extent is
/// rounded up to a multiple of the alignment of the most aligned basic type in it (so a type
/// that describes a C struct by `offsetof` has the struct's `sizeof` as its extent), unless
/// members carry bounds set by `MPI_Type_create_resized`: then their bounds alone are the
/// struct's (MPI-4.0 §5.1.7). Displacements may be negative.
///
/// # Errors
/// `MPI_ERR_COUNT` for a negative count or block length or a type too large for the address
/// space, `MPI_ERR_ARG` for a NULL array (with `count > 0`) or `newtype`, `MPI_ERR_TYPE` for
/// an invalid or freed type among `array_of_types`.
///
/// # Safety
/// `array_of_blocklengths` and `array_of_types` are NULL or point at `count` readable ints,
/// `array_of_displacements` at `count` readable `MPI_Aint`s; `newtype` is NULL or points at a
/// writable `MPI_Datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_struct(
    count: c_int,
    array_of_blocklengths: *const c_int,
    array_of_displacements: *const MPI_Aint,
    array_of_types: *const c_int,
    newtype: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let newtype = unsafe { out(newtype, "newtype")? };
        // SAFETY: forwarded contract; only read, during this call.
        let blocklens = unsafe { array(array_of_blocklengths.cast_mut(), count, "blocklengths")? };
        // SAFETY: forwarded contract; only read, during this call.
        let displs = unsafe { array(array_of_displacements.cast_mut(), count, "displacements")? };
        // SAFETY: forwarded contract; only read, during this call.
        let types = unsafe { array(array_of_types.cast_mut(), count, "types")? };
        let ints = std::iter::once(count)
            .chain(blocklens.iter().copied())
            .collect();
        let envelope = Envelope::new(MPI_COMBINER_STRUCT, ints, displs.to_vec(), types)?;
        let blocks = blocklens
            .iter()
            .zip(displs.iter())
            .zip(types.iter())
            .map(|((&blocklen, &displ), &datatype)| {
                let blocklen = non_negative(blocklen, "blocklength")?;
                Ok((displ, blocklen, layout_of(datatype, false)?))
            })
            .collect::<Result<Vec<_>, Failure>>()?;
        register(Layout::structure(blocks)?, envelope, &newtype)
    })
}

/// `MPI_Type_struct`: the name MPI-1 gave `MPI_Type_create_struct` (removed from MPI-3.0, still
/// used by old programs); the same call.
///
/// # Errors
/// As `MPI_Type_create_struct`.
///
/// # Safety
/// As `MPI_Type_create_struct`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_struct(
    count: c_int,
    array_of_blocklengths: *const c_int,
    array_of_displacements: *const MPI_Aint,
    array_of_types: *const c_int,
    newtype: *mut c_int,
) -> c_int {
    // SAFETY: forwarded contract.
    unsafe {
        MPI_Type_create_struct(
            count,
            array_of_blocklengths,
            array_of_displacements,
            array_of_types,
            newtype,
        )
    }
}

/// `MPI_Get_address` (MPI-4.0 §5.1.5): the address of `location` as an `MPI_Aint`, to compute
/// the displacements of a struct type (differences of addresses within one object).
///
/// # Errors
/// `MPI_ERR_ARG` for a NULL `address`.
///
/// # Safety
/// `address` is NULL or points at a writable `MPI_Aint`; `location` is not dereferenced.
#[no_mangle]
pub unsafe extern "C" fn MPI_Get_address(location: *const c_void, address: *mut MPI_Aint) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let address = unsafe { out(address, "address")? };
        // Exposed, so that the address can come back as a pointer (`MPI_BOTTOM` plus it).
        address.write(location.expose_provenance() as MPI_Aint);
        Ok(())
    })
}

/// `MPI_Type_commit`: a derived type must be committed before it is used in communication.
/// Committing a predefined type or a committed one does nothing.
///
/// # Errors
/// `MPI_ERR_TYPE` for an invalid or freed datatype, `MPI_ERR_ARG` for a NULL pointer.
///
/// # Safety
/// `datatype` is NULL or points at a readable `MPI_Datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_commit(datatype: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let handle = unsafe { out(datatype, "datatype")? }.read();
        if predefined(handle) {
            return Ok(());
        }
        with_runtime(|runtime| {
            let found = runtime.datatypes.get_mut(&handle).ok_or_else(|| {
                Failure::new(MPI_ERR_TYPE, format!("invalid or freed datatype {handle}"))
            })?;
            found.committed = true;
            Ok(())
        })
    })
}

/// `MPI_Type_free`: sets the handle to `MPI_DATATYPE_NULL`. Operations in progress with the
/// type, and types made from it, are not affected. Predefined types cannot be freed.
///
/// # Errors
/// `MPI_ERR_TYPE` for a predefined, invalid or freed datatype, `MPI_ERR_ARG` for a NULL pointer.
///
/// # Safety
/// `datatype` is NULL or points at a readable and writable `MPI_Datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_free(datatype: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(datatype, "datatype")? };
        let handle = slot.read();
        if predefined(handle) {
            return Err(Failure::new(
                MPI_ERR_TYPE,
                format!("predefined datatype {handle} cannot be freed"),
            ));
        }
        with_runtime(|runtime| {
            runtime.datatypes.remove(&handle).ok_or_else(|| {
                Failure::new(MPI_ERR_TYPE, format!("invalid or freed datatype {handle}"))
            })
        })?;
        slot.write(MPI_DATATYPE_NULL);
        crate::typeinfo::forget(handle)
    })
}

/// `MPI_Type_get_extent` (MPI-4.0 §5.1.7): the lower bound and the extent (either may be
/// negative).
///
/// # Errors
/// `MPI_ERR_TYPE` for an invalid or freed datatype, `MPI_ERR_ARG` for a NULL pointer.
///
/// # Safety
/// `lb` and `extent` are NULL or point at writable `MPI_Aint`s.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_extent(
    datatype: c_int,
    lb: *mut MPI_Aint,
    extent: *mut MPI_Aint,
) -> c_int {
    // SAFETY: as this function's contract says.
    unsafe { write_bounds(datatype, (lb, "lb"), (extent, "extent"), extent_of, |n| n) }
}

/// `MPI_Type_get_true_extent` (MPI-4.0 §5.1.8): the first byte of the data of one element and
/// the span of its data, whatever its lower bound and extent (as set by
/// `MPI_Type_create_resized`) say.
///
/// # Errors
/// `MPI_ERR_TYPE` for an invalid or freed datatype, `MPI_ERR_ARG` for a NULL pointer.
///
/// # Safety
/// `true_lb` and `true_extent` are NULL or point at writable `MPI_Aint`s.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_true_extent(
    datatype: c_int,
    true_lb: *mut MPI_Aint,
    true_extent: *mut MPI_Aint,
) -> c_int {
    // SAFETY: as this function's contract says.
    unsafe {
        write_bounds(
            datatype,
            (true_lb, "true_lb"),
            (true_extent, "true_extent"),
            Layout::true_extent,
            |n| n,
        )
    }
}

/// `MPI_Type_get_extent_x` (MPI-4.0 §5.1.7): `MPI_Type_get_extent` with `MPI_Count` results.
///
/// # Errors
/// As `MPI_Type_get_extent`.
///
/// # Safety
/// `lb` and `extent` are NULL or point at writable `MPI_Count`s.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_extent_x(
    datatype: c_int,
    lb: *mut i64,
    extent: *mut i64,
) -> c_int {
    // SAFETY: as this function's contract says.
    unsafe {
        write_bounds(datatype, (lb, "lb"), (extent, "extent"), extent_of, |n| {
            n as i64
        })
    }
}

/// `MPI_Type_get_true_extent_x` (MPI-4.0 §5.1.8): `MPI_Type_get_true_extent` with `MPI_Count`
/// results.
///
/// # Errors
/// As `MPI_Type_get_true_extent`.
///
/// # Safety
/// `true_lb` and `true_extent` are NULL or point at writable `MPI_Count`s.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_true_extent_x(
    datatype: c_int,
    true_lb: *mut i64,
    true_extent: *mut i64,
) -> c_int {
    // SAFETY: as this function's contract says.
    unsafe {
        write_bounds(
            datatype,
            (true_lb, "true_lb"),
            (true_extent, "true_extent"),
            Layout::true_extent,
            |n| n as i64,
        )
    }
}

/// A layout's lower bound and extent (`MPI_Type_get_extent`).
fn extent_of(layout: &Layout) -> (isize, isize) {
    (layout.lb, layout.extent)
}

/// The four extent queries: `of` the datatype's layout, written through the two out-pointers
/// (each with its name for the NULL error) as `convert` makes it (`MPI_Aint` or `MPI_Count`).
///
/// # Safety
/// Each pointer is NULL or points at a writable `T`.
unsafe fn write_bounds<T>(
    datatype: c_int,
    (first, first_name): (*mut T, &str),
    (second, second_name): (*mut T, &str),
    of: fn(&Layout) -> (isize, isize),
    convert: fn(isize) -> T,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`; writable by the caller's contract.
        let first = unsafe { out(first, first_name)? };
        // SAFETY: as above.
        let second = unsafe { out(second, second_name)? };
        let (a, b) = of(&*layout_of(datatype, false)?);
        first.write(convert(a));
        second.write(convert(b));
        Ok(())
    })
}

// The `PMPI_` names of this module's functions.
profiling_names!("derived.rs");

/// `MPI_Aint_add`: `base + disp`, an address displaced (as the C arithmetic of addresses, with
/// wrap-around).
#[no_mangle]
pub extern "C" fn MPI_Aint_add(base: MPI_Aint, disp: MPI_Aint) -> MPI_Aint {
    base.wrapping_add(disp)
}

/// `MPI_Aint_diff`: `addr1 - addr2`, the distance between two addresses.
#[no_mangle]
pub extern "C" fn MPI_Aint_diff(addr1: MPI_Aint, addr2: MPI_Aint) -> MPI_Aint {
    addr1.wrapping_sub(addr2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::raw::c_short;

    fn ints(n: usize) -> Arc<Layout> {
        Arc::new(Layout::contiguous(n, Arc::new(Layout::basic(4))).unwrap())
    }

    #[test]
    fn a_column_vector_packs_and_unpacks() {
        // A 3x4 matrix of bytes, row-major; column 1.
        let column = Layout::vector(3, 1, 4, Arc::new(Layout::basic(1))).unwrap();
        assert_eq!(
            (column.size, column.extent, column.window(1).unwrap().len),
            (3, 9, 9)
        );
        assert!(!column.dense);
        let matrix: Vec<u8> = (0..12).collect();
        assert_eq!(column.pack(1, &matrix[1..]).unwrap(), [1, 5, 9]);
        let mut out = vec![0u8; 12];
        column.unpack(1, &[7, 8, 9], &mut out[2..]);
        assert_eq!(out, [0, 0, 7, 0, 0, 0, 8, 0, 0, 0, 9, 0]);
        // A short message fills a prefix.
        let mut out = vec![0u8; 12];
        column.unpack(1, &[7], &mut out);
        assert_eq!(out[0], 7);
        assert_eq!(out.iter().filter(|&&b| b != 0).count(), 1);
    }

    #[test]
    fn basic_elements_of_partial_messages() {
        // MPI_Get_elements: a struct { int; double; } (extent 16, size 12), and a vector.
        let int = Arc::new(Layout::of_element(Element::I32));
        let double = Arc::new(Layout::of_element(Element::F64));
        let pair = Layout::structure(vec![(0, 1, int.clone()), (8, 1, double)]).unwrap();
        assert_eq!((pair.size, pair.extent, pair.basic_count()), (12, 16, 2));
        assert_eq!(pair.basic_elements_in(0), Some(0));
        assert_eq!(pair.basic_elements_in(4), Some(1));
        assert_eq!(pair.basic_elements_in(12), Some(2));
        assert_eq!(pair.basic_elements_in(16), Some(3));
        assert_eq!(pair.basic_elements_in(6), None);
        assert_eq!(pair.basic_elements_in(26), None);
        let v = Layout::vector(2, 3, 16, int).unwrap();
        assert_eq!(v.basic_elements_in(24 * 2 + 8), Some(14));
        assert_eq!(v.basic_elements_in(25), None);
        assert!(!v.is_dense() && ints(5).is_dense());
    }

    #[test]
    fn dense_types_and_nested_ones() {
        assert!(ints(3).dense);
        let v = Layout::vector(2, 2, 8, ints(1)).unwrap();
        assert!(v.dense && v.size == 16 && v.extent == 16);
        // Two elements of a vector of 2 blocks of 1 int, stride 3 ints: extent 16, reach 16.
        let v = Arc::new(Layout::vector(2, 1, 12, ints(1)).unwrap());
        assert_eq!((v.size, v.extent, v.window(2).unwrap().len), (8, 16, 32));
        let c = Layout::contiguous(2, Arc::clone(&v)).unwrap();
        let data: Vec<u8> = (0..32).collect();
        let packed = c.pack(1, &data).unwrap();
        assert_eq!(
            packed,
            [0, 1, 2, 3, 12, 13, 14, 15, 16, 17, 18, 19, 28, 29, 30, 31]
        );
        let mut back = vec![0u8; 32];
        c.unpack(1, &packed, &mut back);
        for (i, &b) in back.iter().enumerate() {
            let kept = matches!(i, 0..=3 | 12..=19 | 28..=31);
            assert_eq!(b, if kept { i as u8 } else { 0 });
        }
    }

    #[test]
    fn pair_types_are_laid_out_as_c_structs() {
        #[repr(C)]
        struct DoubleInt(f64, c_int);
        #[repr(C)]
        struct ShortInt(c_short, c_int);
        let d = Layout::pair(8);
        assert_eq!(d.extent, std::mem::size_of::<DoubleInt>() as isize);
        assert_eq!(d.size, 12);
        let s = Layout::pair(2);
        assert_eq!(s.extent, std::mem::size_of::<ShortInt>() as isize);
        assert_eq!(s.size, 6);
        assert!(Layout::pair(4).dense);
        assert!(!d.dense);
    }

    #[test]
    fn a_subarray_and_a_resized_type() {
        // The 2x3 block at (1, 2) of a 4x6 array of bytes.
        let sub = subarray(&[4, 6], &[2, 3], &[1, 2], Arc::new(Layout::basic(1))).unwrap();
        assert_eq!((sub.size, sub.extent), (6, 24));
        let array: Vec<u8> = (0..24).collect();
        assert_eq!(sub.pack(1, &array).unwrap(), [8, 9, 10, 14, 15, 16]);
        let mut back = vec![0u8; 24];
        sub.unpack(1, &[1, 2, 3, 4, 5, 6], &mut back);
        assert_eq!(&back[8..11], &[1, 2, 3]);
        assert_eq!(&back[14..17], &[4, 5, 6]);
        assert_eq!(back.iter().filter(|&&b| b != 0).count(), 6);
        // Resized to one byte: element k is the block shifted by k.
        let resized = Layout::placed(0, 0, 1, Arc::new(sub)).unwrap();
        assert_eq!(resized.window(2).unwrap(), Window { low: 8, len: 10 });
        assert_eq!(
            resized.pack(2, &array).unwrap(),
            [8, 9, 10, 14, 15, 16, 9, 10, 11, 15, 16, 17]
        );
        assert!(subarray(&[4], &[5], &[0], Arc::new(Layout::basic(1))).is_err());
        assert!(subarray(&[4], &[2], &[3], Arc::new(Layout::basic(1))).is_err());
        let whole = subarray(&[3, 2], &[3, 2], &[0, 0], Arc::new(Layout::basic(4))).unwrap();
        assert!(whole.dense);
    }

    #[test]
    fn indexed_types_have_mpi_bounds() {
        // Blocks of 2 ints at 1 and of 1 int at 5 (in ints): lb 4, ub 24, extent 20.
        let t = Layout::indexed(vec![(4, 2), (20, 1)], ints(1)).unwrap();
        assert_eq!(
            (t.size, t.lb, t.extent, t.true_extent()),
            (12, 4, 20, (4, 20))
        );
        assert!(!t.dense);
        let data: Vec<u8> = (0..44).collect();
        // Element 1 starts at one extent (20 bytes): its blocks at 24 and 40.
        let packed = t.pack(2, &data).unwrap();
        let want: Vec<u8> = (4..12).chain(20..24).chain(24..32).chain(40..44).collect();
        assert_eq!(packed, want);
        let mut back = vec![0u8; 44];
        t.unpack(2, &packed, &mut back);
        for (i, &b) in back.iter().enumerate() {
            let kept = matches!(i, 4..=11 | 20..=31 | 40..=43);
            assert_eq!(b, if kept { i as u8 } else { 0 });
        }
        // Consecutive blocks from 0 are dense; an empty one is nothing.
        assert!(
            Layout::indexed(vec![(0, 2), (8, 3)], ints(1))
                .unwrap()
                .dense
        );
        let empty = Layout::indexed(vec![(8, 0)], ints(1)).unwrap();
        assert_eq!((empty.size, empty.lb, empty.extent), (0, 0, 0));
        // A contiguous type of it keeps its lower bound and strides by its extent.
        let c = Layout::contiguous(2, Arc::new(t)).unwrap();
        assert_eq!((c.lb, c.extent), (4, 40));
    }

    #[test]
    fn a_struct_of_int_double_and_three_chars_is_laid_out_as_c_lays_it_out() {
        #[repr(C)]
        struct S {
            i: c_int,
            d: f64,
            c: [u8; 3],
        }
        let int = Arc::new(Layout::of_element(Element::I32));
        let double = Arc::new(Layout::of_element(Element::F64));
        let char = Arc::new(Layout::of_element(Element::I8));
        let s = Layout::structure(vec![
            (std::mem::offset_of!(S, i) as isize, 1, Arc::clone(&int)),
            (std::mem::offset_of!(S, d) as isize, 1, Arc::clone(&double)),
            (std::mem::offset_of!(S, c) as isize, 3, char),
        ])
        .unwrap();
        assert_eq!((s.size, s.lb), (15, 0));
        assert_eq!(s.extent, std::mem::size_of::<S>() as isize);
        assert_eq!(s.true_extent(), (0, 19));
        assert!(!s.dense);
        assert_eq!(s.element, None);
        let data: Vec<u8> = (0..48).collect();
        let packed = s.pack(2, &data).unwrap();
        let want: Vec<u8> = (0..4).chain(8..19).chain(24..28).chain(32..43).collect();
        assert_eq!(packed, want);
        let mut back = vec![0u8; 48];
        s.unpack(2, &packed, &mut back);
        for (i, &b) in back.iter().enumerate() {
            let kept = matches!(i, 0..=3 | 8..=18 | 24..=27 | 32..=42);
            assert_eq!(b, if kept { i as u8 } else { 0 });
        }
        // Two ints side by side: dense, one element type.
        let two = Layout::structure(vec![(0, 1, Arc::clone(&int)), (4, 1, int)]).unwrap();
        assert!(two.dense && two.element == Some(Element::I32));
        // No data: nothing.
        let empty = Layout::structure(vec![(8, 0, double)]).unwrap();
        assert_eq!(
            (empty.size, empty.extent, empty.true_extent()),
            (0, 0, (0, 0))
        );
    }

    #[test]
    fn a_type_at_an_absolute_address_reads_and_writes_from_mpi_bottom() {
        // Two ints at the address of data[1], as MPI_Get_address gives it out: the window
        // starts there, and from MPI_BOTTOM (NULL) reaches exactly those bytes.
        let mut data = [10i32, 11, 12, 13];
        let address = data[1..].as_mut_ptr().expose_provenance() as isize;
        let t = Layout::structure(vec![(
            address,
            2,
            Arc::new(Layout::of_element(Element::I32)),
        )])
        .unwrap();
        let window = t.window(1).unwrap();
        assert_eq!(
            window,
            Window {
                low: address,
                len: 8
            }
        );
        let bottom = std::ptr::null::<c_void>();
        // SAFETY: the window is data[1..3], live and not written during the read.
        let packed = t.pack_at(1, unsafe { window.read(bottom) }.unwrap(), window.low);
        let want: Vec<u8> = [11i32, 12].iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(packed.unwrap(), want);
        let back: Vec<u8> = [21i32, 22].iter().flat_map(|v| v.to_ne_bytes()).collect();
        // SAFETY: as above, and nothing else uses data while the slice lives.
        let target = unsafe { window.write(bottom.cast_mut()) }.unwrap();
        t.unpack_at(1, &back, target, window.low);
        assert_eq!(data, [10, 21, 22, 13]);
        // A type whose data starts at offset 0 has no address: from MPI_BOTTOM, an error.
        let plain = ints(2).window(1).unwrap();
        // SAFETY: refused before any byte is read.
        assert!(unsafe { plain.read(bottom) }.is_err());
        // No data: an empty window, whatever the buffer.
        assert_eq!(t.window(0).unwrap().len, 0);
    }

    #[test]
    fn a_type_over_two_objects_is_reached_run_by_run_from_mpi_bottom() {
        // Two ints in two separate allocations: the window between them spans memory that is
        // neither, which is never made into a slice; each run is.
        let mut a = Box::new(5i32);
        let mut b = Box::new(6i32);
        let (pa, pb) = (
            std::ptr::from_mut(&mut *a).expose_provenance() as isize,
            std::ptr::from_mut(&mut *b).expose_provenance() as isize,
        );
        let int = Arc::new(Layout::of_element(Element::I32));
        let t = Layout::structure(vec![(pa, 1, Arc::clone(&int)), (pb, 1, int)]).unwrap();
        let window = t.window(1).unwrap();
        assert_eq!(window.low, pa.min(pb));
        let bottom = std::ptr::null_mut::<c_void>();
        // SAFETY: the runs are `*a` and `*b`, live and not otherwise used during the calls.
        let packed = t.pack_at(1, unsafe { window.read(bottom) }.unwrap(), window.low);
        let want: Vec<u8> = [5i32, 6].iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(packed.unwrap(), want);
        let back: Vec<u8> = [7i32, 8].iter().flat_map(|v| v.to_ne_bytes()).collect();
        // SAFETY: as above.
        t.unpack_at(
            1,
            &back,
            unsafe { window.write(bottom) }.unwrap(),
            window.low,
        );
        assert_eq!((*a, *b), (7, 8));
    }

    fn int() -> Arc<Layout> {
        Arc::new(Layout::of_element(Element::I32))
    }

    fn int_bytes(values: impl IntoIterator<Item = i32>) -> Vec<u8> {
        values.into_iter().flat_map(i32::to_ne_bytes).collect()
    }

    fn ints_of(bytes: &[u8]) -> Vec<i32> {
        bytes
            .chunks_exact(4)
            .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
            .collect()
    }

    /// Packs `count` elements of `t` from `data`, the buffer pointer at byte `at` of it, checks
    /// that the packed ints are `want`, then unpacks them into a zeroed copy and checks that
    /// exactly the bytes of the data came back (the window is within `data`).
    fn round_trip(t: &Layout, count: usize, data: &[u8], at: usize, want: &[i32]) {
        let origin = -(at as isize);
        let window = t.window(count).unwrap();
        assert!(
            window.low >= origin
                && window.low + window.len as isize <= origin + data.len() as isize
        );
        let packed = t.pack_at(count, Raw::of(data), origin).unwrap();
        assert_eq!(ints_of(&packed), want);
        let mut back = vec![0u8; data.len()];
        t.unpack_at(count, &packed, Raw::of_mut(&mut back), origin);
        let mut touched = vec![false; data.len()];
        for k in 0..count {
            t.walk(k as isize * t.extent, &mut |run, len| {
                let from = (run - origin) as usize;
                touched[from..from + len].iter_mut().for_each(|b| *b = true);
            });
        }
        for (i, (&b, &d)) in back.iter().zip(data).enumerate() {
            assert_eq!(b, if touched[i] { d } else { 0 }, "byte {i}");
        }
    }

    #[test]
    fn a_resized_int_with_a_negative_extent_runs_backwards() {
        // MPI_Type_create_resized(MPI_INT, 0, -4): lb 0, ub -4, element k at -4k.
        let t = Layout::placed(0, 0, -4, int()).unwrap();
        assert_eq!(
            (t.lb, t.extent, t.ub(), t.true_extent()),
            (0, -4, -4, (0, 4))
        );
        assert_eq!(t.window(3).unwrap(), Window { low: -8, len: 12 });
        let data = int_bytes(0..6);
        round_trip(&t, 3, &data, 12, &[3, 2, 1]);
        // Three of them in a row: the lb markers at 0, -4, -8, the ub markers at -4, -8, -12
        // (MPI-4.0 §5.1.7: the least lb and the greatest ub), so lb -8, ub -4, extent 4.
        let c = Layout::contiguous(3, Arc::new(t)).unwrap();
        assert_eq!((c.lb, c.extent, c.true_extent()), (-8, 4, (-8, 12)));
        round_trip(&c, 1, &data, 12, &[3, 2, 1]);
        // Element 1 of that lies at +4: ints 4, 3, 2.
        round_trip(&c, 2, &data, 12, &[3, 2, 1, 4, 3, 2]);
    }

    #[test]
    fn a_resized_int_with_a_negative_lower_bound() {
        // MPI_Type_create_resized(MPI_INT, -8, 16): lb -8, ub 8; the data stays at 0.
        let t = Arc::new(Layout::placed(0, -8, 16, int()).unwrap());
        assert_eq!((t.lb, t.extent, t.true_extent()), (-8, 16, (0, 4)));
        assert!(!t.dense);
        assert_eq!(t.window(2).unwrap(), Window { low: 0, len: 20 });
        let data = int_bytes(0..8);
        round_trip(&t, 2, &data, 0, &[0, 4]);
        let c = Layout::contiguous(2, Arc::clone(&t)).unwrap();
        assert_eq!((c.lb, c.extent), (-8, 32));
        // A negative lower bound and a shifted data: resized(vector of 2 ints at -8 and 0).
        let v = Arc::new(Layout::vector(2, 1, -8, int()).unwrap());
        assert_eq!((v.lb, v.extent, v.true_extent()), (-8, 12, (-8, 12)));
        let r = Layout::placed(0, -12, 24, v).unwrap();
        assert_eq!(
            (r.lb, r.extent, r.window(2).unwrap()),
            (-12, 24, Window { low: -8, len: 36 })
        );
        let data = int_bytes(0..10);
        // Element 0: ints at 0 and -8 from int 2; element 1 the same 24 bytes on.
        round_trip(&r, 2, &data, 8, &[2, 0, 8, 6]);
    }

    #[test]
    fn a_vector_with_a_negative_stride_reverses() {
        // MPI_Type_vector(4, 1, -1, MPI_INT): ints at 0, -4, -8, -12.
        let v = Layout::vector(4, 1, -4, int()).unwrap();
        assert_eq!(
            (v.size, v.lb, v.extent, v.true_extent()),
            (16, -12, 16, (-12, 16))
        );
        assert!(!v.dense);
        assert_eq!(v.window(2).unwrap(), Window { low: -12, len: 32 });
        let data = int_bytes(0..8);
        round_trip(&v, 1, &data, 12, &[3, 2, 1, 0]);
        // Element 1 lies one extent (16 bytes) on.
        round_trip(&v, 2, &data, 12, &[3, 2, 1, 0, 7, 6, 5, 4]);
        // Blocks of 2 going back 3 ints: [0, 1], [-3, -2].
        let b = Layout::vector(2, 2, -12, int()).unwrap();
        assert_eq!((b.lb, b.extent), (-12, 20));
        round_trip(&b, 1, &data, 12, &[3, 4, 0, 1]);
        // Nested: blocks of 2 backwards-running ints (resized to extent -4), 16 bytes apart.
        let back = Arc::new(Layout::placed(0, 0, -4, int()).unwrap());
        let n = Layout::vector(2, 2, 16, back).unwrap();
        round_trip(&n, 1, &data, 12, &[3, 2, 7, 6]);
    }

    #[test]
    fn indexed_and_struct_types_with_negative_displacements() {
        // MPI_Type_create_hindexed: 1 int at -8, 2 ints at 4: lb -8, ub 12.
        let h = Layout::indexed(vec![(-8, 1), (4, 2)], int()).unwrap();
        assert_eq!(
            (h.size, h.lb, h.extent, h.true_extent()),
            (12, -8, 20, (-8, 20))
        );
        let data = int_bytes(0..16);
        // Pointer at int 4: ints 2, 5, 6, then (one extent, 5 ints, on) 7, 10, 11.
        round_trip(&h, 2, &data, 16, &[2, 5, 6, 7, 10, 11]);
        // MPI_Type_indexed with displacements in extents of a resized int of extent -4.
        let back = Arc::new(Layout::placed(0, 0, -4, int()).unwrap());
        // Displacements -8 and 4 extents: bytes 32 and -16; the lb markers there, the ub
        // markers 4 bytes below each.
        let i = Layout::indexed(vec![(-8 * back.extent, 1), (4 * back.extent, 1)], back).unwrap();
        assert_eq!((i.lb, i.ub(), i.true_extent()), (-16, 28, (-16, 52)));
        let data = int_bytes(0..16);
        round_trip(&i, 1, &data, 16, &[12, 0]);
        // A struct of an int at -4 and a double at 8: lb -4, ub 16, the extent padded to 24.
        let double = Arc::new(Layout::of_element(Element::F64));
        let s = Layout::structure(vec![(-4, 1, int()), (8, 1, Arc::clone(&double))]).unwrap();
        assert_eq!((s.lb, s.extent, s.true_extent()), (-4, 24, (-4, 20)));
        assert_eq!(s.window(2).unwrap(), Window { low: -4, len: 44 });
        // With a resized member, its markers alone are the bounds, unpadded.
        let odd = Arc::new(Layout::placed(0, -2, 6, int()).unwrap());
        let m = Layout::structure(vec![(0, 1, odd), (8, 1, double)]).unwrap();
        assert_eq!((m.lb, m.extent, m.true_extent()), (-2, 6, (0, 16)));
    }

    #[test]
    fn nested_types_of_negative_extent_have_mpi_bounds() {
        // (lb, extent, true lb, true extent), as MPI-4.0 §5.1.7 defines them (the same values
        // MPICH 4.0.2 gives for these types).
        let bounds = |t: &Layout| (t.lb, t.extent, t.true_extent().0, t.true_extent().1);
        let rev = Arc::new(Layout::placed(0, 0, -4, int()).unwrap());
        // MPI_Type_vector(2, 2, 4, rev): blocks 4 extents (-16 bytes) apart.
        let vv = Arc::new(Layout::vector(2, 2, 4 * rev.extent, Arc::clone(&rev)).unwrap());
        assert_eq!(bounds(&vv), (-20, 16, -20, 24));
        // MPI_Type_vector(3, 1, -2, rev): blocks 8 bytes apart.
        let v = Layout::vector(3, 1, -2 * rev.extent, Arc::clone(&rev)).unwrap();
        assert_eq!(bounds(&v), (0, 12, 0, 20));
        let r = Arc::new(Layout::placed(0, -4, -20, vv).unwrap());
        assert_eq!(bounds(&r), (-4, -20, -20, 24));
        let c = Layout::contiguous(2, r).unwrap();
        assert_eq!(bounds(&c), (-24, 0, -40, 44));
        // MPI_Type_create_subarray(1, {4}, {2}, {1}, MPI_ORDER_C, rev).
        let sub = subarray(&[4], &[2], &[1], Arc::clone(&rev)).unwrap();
        assert_eq!(bounds(&sub), (0, -16, -8, 8));
        // A struct of one resized int (lb 0, extent 6): its bounds, unpadded.
        let six = Arc::new(Layout::placed(0, 0, 6, int()).unwrap());
        let s = Layout::structure(vec![(0, 1, six)]).unwrap();
        assert_eq!(bounds(&s), (0, 6, 0, 4));
    }

    #[test]
    fn a_window_below_the_buffer_pointer_reads_and_writes_there() {
        // The reversing vector from a pointer to the last of four ints, as a C buffer.
        let v = Layout::vector(4, 1, -4, int()).unwrap();
        let mut data = [10i32, 11, 12, 13];
        let window = v.window(1).unwrap();
        let pointer = data[3..].as_mut_ptr().cast::<c_void>();
        // SAFETY: the window is data[0..4], live, not written during the read.
        let source = unsafe { window.read(pointer) }.unwrap();
        let packed = v.pack_at(1, source, window.low).unwrap();
        assert_eq!(ints_of(&packed), [13, 12, 11, 10]);
        // SAFETY: as above, and nothing else uses data while the window is written.
        let target = unsafe { window.write(pointer) }.unwrap();
        v.unpack_at(1, &int_bytes([1, 2, 3, 4]), target, window.low);
        assert_eq!(data, [4, 3, 2, 1]);
        // From MPI_BOTTOM a window below address 1 is no address: an error, not a read.
        // SAFETY: refused before any byte is read.
        assert!(unsafe { window.read(std::ptr::null()) }.is_err());
    }

    #[test]
    fn negative_bounds_that_overflow_are_errors() {
        assert!(Layout::placed(0, isize::MAX, 1, int()).is_err());
        assert!(Layout::placed(0, isize::MIN, -1, int()).is_err());
        assert!(Layout::placed(0, isize::MIN + 8, isize::MAX, int()).is_ok());
        assert!(Layout::placed(0, isize::MIN + 8, 0, int()).is_ok());
        assert!(Layout::vector(2, 1, isize::MIN, int()).is_err());
        assert!(Layout::indexed(vec![(isize::MIN, 1), (isize::MAX - 4, 1)], int()).is_err());
        let back = Arc::new(Layout::placed(0, 0, isize::MIN / 2, int()).unwrap());
        assert!(back.window(2).is_ok());
        assert!(back.window(3).is_err());
    }

    #[test]
    fn sizes_that_overflow_are_errors() {
        let big = Arc::new(Layout::contiguous(1 << 40, ints(1)).unwrap());
        assert!(Layout::contiguous(1 << 40, big.clone()).is_err());
        assert!(Layout::vector(1 << 30, 1, 1 << 40, ints(1)).is_err());
        assert!(big.window(1 << 30).is_err());
    }
}
