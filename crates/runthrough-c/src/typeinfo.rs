// SPDX-License-Identifier: MIT OR Apache-2.0
//! What a datatype says about itself (MPI-4.0 §5.1.13, §7.7.4, §7.8): how it was made
//! (`MPI_Type_get_envelope`, `MPI_Type_get_contents`), `MPI_Type_dup`, names
//! (`MPI_Type_set_name`, `MPI_Type_get_name`) and attributes (`MPI_Type_create_keyval`, ...,
//! kept with the communicators' in `crate::attributes`).
//!
//! # Invariants
//! - Every derived type keeps its [`Envelope`]: the constructor and its arguments, the
//!   datatypes among them as they were then (a derived one is kept whole, so decoding works
//!   after the program freed it).
//! - `MPI_Type_get_contents` hands out a new handle for each derived datatype among the
//!   arguments (the program frees it) and the handle itself for a predefined one.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_void};
use std::os::raw::c_int;
use std::sync::{Arc, Mutex};

use crate::attributes::{CopyFn, DeleteFn, Kind};
use crate::constants::*;
use crate::derived::{add_type, layout_of, DerivedType, MPI_Aint, DERIVED_BASE};
use crate::errors::{boundary, out, write_string, Failure};
use crate::point_to_point::array;
use crate::runtime::{lock, with_runtime};

/// A datatype among a constructor's arguments, as it was when the constructor ran.
#[derive(Debug, Clone)]
pub(crate) enum TypeArg {
    /// A predefined datatype's handle.
    Predefined(c_int),
    /// A derived datatype, kept whole.
    Derived(Box<DerivedType>),
}

/// How a derived datatype was made: its combiner and the constructor's arguments, in the
/// order `MPI_Type_get_contents` gives them.
#[derive(Debug, Clone)]
pub(crate) struct Envelope {
    pub(crate) combiner: c_int,
    pub(crate) ints: Vec<c_int>,
    pub(crate) addrs: Vec<MPI_Aint>,
    pub(crate) types: Vec<TypeArg>,
}

impl Envelope {
    /// The envelope of a constructor `combiner` called with these arguments.
    ///
    /// # Errors
    /// `MPI_ERR_TYPE` for an invalid or freed datatype among `types`.
    pub(crate) fn new(
        combiner: c_int,
        ints: Vec<c_int>,
        addrs: Vec<MPI_Aint>,
        types: &[c_int],
    ) -> Result<Envelope, Failure> {
        let types = types
            .iter()
            .map(|&datatype| {
                layout_of(datatype, false)?;
                if datatype < DERIVED_BASE {
                    return Ok(TypeArg::Predefined(datatype));
                }
                derived(datatype).map(|found| TypeArg::Derived(Box::new(found)))
            })
            .collect::<Result<Vec<_>, Failure>>()?;
        Ok(Envelope {
            combiner,
            ints,
            addrs,
            types,
        })
    }
}

/// The table entry of derived datatype `datatype`.
fn derived(datatype: c_int) -> Result<DerivedType, Failure> {
    with_runtime(|runtime| {
        runtime.datatypes.get(&datatype).cloned().ok_or_else(|| {
            Failure::new(
                MPI_ERR_TYPE,
                format!("invalid or freed datatype {datatype}"),
            )
        })
    })
}

/// The envelope of `datatype`: `None` for a predefined one (`MPI_COMBINER_NAMED`).
fn envelope_of(datatype: c_int) -> Result<Option<Arc<Envelope>>, Failure> {
    layout_of(datatype, false)?;
    if datatype < DERIVED_BASE {
        return Ok(None);
    }
    Ok(Some(derived(datatype)?.envelope))
}

/// `MPI_Type_get_envelope` (MPI-4.0 §5.1.13): the numbers of integers, addresses and
/// datatypes `MPI_Type_get_contents` gives for `datatype`, and its combiner
/// (`MPI_COMBINER_NAMED`, with no arguments, for a predefined type).
///
/// # Errors
/// `MPI_ERR_TYPE` for an invalid or freed datatype, `MPI_ERR_ARG` for a NULL pointer.
///
/// # Safety
/// The four pointers are NULL or point at writable ints.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_envelope(
    datatype: c_int,
    num_integers: *mut c_int,
    num_addresses: *mut c_int,
    num_datatypes: *mut c_int,
    combiner: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let (ni, na, nd, kind) = unsafe {
            (
                out(num_integers, "num_integers")?,
                out(num_addresses, "num_addresses")?,
                out(num_datatypes, "num_datatypes")?,
                out(combiner, "combiner")?,
            )
        };
        match envelope_of(datatype)? {
            None => {
                for count in [&ni, &na, &nd] {
                    count.write(0);
                }
                kind.write(MPI_COMBINER_NAMED);
            }
            Some(envelope) => {
                ni.write(envelope.ints.len() as c_int);
                na.write(envelope.addrs.len() as c_int);
                nd.write(envelope.types.len() as c_int);
                kind.write(envelope.combiner);
            }
        }
        Ok(())
    })
}

/// `MPI_Type_get_contents` (MPI-4.0 §5.1.13): the arguments of the constructor that made
/// `datatype`, as `MPI_Type_get_envelope` counts them. Each derived datatype among them comes
/// back as a new handle, which the program frees; a predefined one as itself.
///
/// # Errors
/// `MPI_ERR_TYPE` for a predefined, invalid or freed datatype; `MPI_ERR_ARG` for an array
/// shorter than the envelope says or a NULL one that must hold something.
///
/// # Safety
/// Each array is NULL or points at as many writable elements as its `max_` argument says.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_contents(
    datatype: c_int,
    max_integers: c_int,
    max_addresses: c_int,
    max_datatypes: c_int,
    array_of_integers: *mut c_int,
    array_of_addresses: *mut MPI_Aint,
    array_of_datatypes: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        let Some(envelope) = envelope_of(datatype)? else {
            return Err(Failure::new(
                MPI_ERR_TYPE,
                format!("datatype {datatype} is predefined: it has no contents"),
            ));
        };
        let fits = |have: c_int, need: usize, what: &str| {
            if usize::try_from(have).is_ok_and(|have| have >= need) {
                Ok(need as c_int)
            } else {
                Err(Failure::new(
                    MPI_ERR_ARG,
                    format!("{what} holds {have}, the datatype has {need}"),
                ))
            }
        };
        let ni = fits(max_integers, envelope.ints.len(), "max_integers")?;
        let na = fits(max_addresses, envelope.addrs.len(), "max_addresses")?;
        let nd = fits(max_datatypes, envelope.types.len(), "max_datatypes")?;
        // SAFETY: by the contract, each array holds at least its `max_` elements, which are
        // at least the counts checked above; an empty one is not touched.
        let (ints, addrs, types) = unsafe {
            (
                array(array_of_integers, ni, "array_of_integers")?,
                array(array_of_addresses, na, "array_of_addresses")?,
                array(array_of_datatypes, nd, "array_of_datatypes")?,
            )
        };
        ints.copy_from_slice(&envelope.ints);
        addrs.copy_from_slice(&envelope.addrs);
        for (slot, argument) in types.iter_mut().zip(&envelope.types) {
            *slot = match argument {
                TypeArg::Predefined(handle) => *handle,
                TypeArg::Derived(made) => add_type(DerivedType::clone(made))?,
            };
        }
        Ok(())
    })
}

/// `MPI_Type_dup` (MPI-4.0 §5.1.10): a new handle of the same type, committed if `oldtype`
/// is, with its attributes copied by their keys' copy callbacks (a failing one frees the
/// new type and fails the call) and combiner `MPI_COMBINER_DUP`.
///
/// # Errors
/// `MPI_ERR_TYPE` for an invalid or freed `oldtype`, `MPI_ERR_ARG` for a NULL `newtype`; a
/// copy callback's error.
///
/// # Safety
/// `newtype` is NULL or points at a writable `MPI_Datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_dup(oldtype: c_int, newtype: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let newtype = unsafe { out(newtype, "newtype")? };
        let layout = layout_of(oldtype, false)?;
        let committed = oldtype < DERIVED_BASE || derived(oldtype)?.committed;
        let envelope = Envelope::new(MPI_COMBINER_DUP, vec![], vec![], &[oldtype])?;
        let handle = add_type(DerivedType {
            layout,
            committed,
            envelope: Arc::new(envelope),
        })?;
        if let Err(failure) = crate::attributes::copy_all((Kind::Type, oldtype), handle) {
            let mut doomed = handle;
            // SAFETY: a live local int.
            unsafe { crate::derived::MPI_Type_free(&mut doomed) };
            newtype.write(MPI_DATATYPE_NULL);
            return Err(failure);
        }
        newtype.write(handle);
        Ok(())
    })
}

/// A new handle of derived datatype `datatype`, for a request that keeps using the type after
/// the program may have freed its handle (a persistent request's).
///
/// # Errors
/// `MPI_ERR_TYPE` for an invalid or freed datatype.
pub(crate) fn private_copy(datatype: c_int) -> Result<c_int, Failure> {
    add_type(derived(datatype)?)
}

/// `MPI_Type_get_value_index` (MPI-4.1 §6.9.4): the predefined pair type of `value_type` and
/// `index_type` (`MPI_FLOAT` and `MPI_INT`: `MPI_FLOAT_INT`, ...), `MPI_DATATYPE_NULL` when
/// there is none.
///
/// # Errors
/// `MPI_ERR_TYPE` for an invalid or freed datatype, `MPI_ERR_ARG` for a NULL `pair_type`.
///
/// # Safety
/// `pair_type` is NULL or points at a writable `MPI_Datatype`.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_value_index(
    value_type: c_int,
    index_type: c_int,
    pair_type: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let pair_type = unsafe { out(pair_type, "pair_type")? };
        layout_of(value_type, false)?;
        layout_of(index_type, false)?;
        let pair = match (value_type, index_type) {
            (MPI_FLOAT, MPI_INT) => MPI_FLOAT_INT,
            (MPI_DOUBLE, MPI_INT) => MPI_DOUBLE_INT,
            (MPI_LONG, MPI_INT) => MPI_LONG_INT,
            (MPI_INT, MPI_INT) => MPI_2INT,
            (MPI_SHORT, MPI_INT) => MPI_SHORT_INT,
            (MPI_LONG_DOUBLE, MPI_INT) => MPI_LONG_DOUBLE_INT,
            _ => MPI_DATATYPE_NULL,
        };
        pair_type.write(pair);
        Ok(())
    })
}

/// Names set by `MPI_Type_set_name`, by handle (a freed derived type's name goes with it).
static NAMES: Mutex<BTreeMap<c_int, String>> = Mutex::new(BTreeMap::new());

/// The name MPI gives a predefined datatype.
fn predefined_name(datatype: c_int) -> Option<&'static str> {
    Some(match datatype {
        MPI_CHAR => "MPI_CHAR",
        MPI_SIGNED_CHAR => "MPI_SIGNED_CHAR",
        MPI_UNSIGNED_CHAR => "MPI_UNSIGNED_CHAR",
        MPI_BYTE => "MPI_BYTE",
        MPI_SHORT => "MPI_SHORT",
        MPI_UNSIGNED_SHORT => "MPI_UNSIGNED_SHORT",
        MPI_INT => "MPI_INT",
        MPI_UNSIGNED => "MPI_UNSIGNED",
        MPI_LONG => "MPI_LONG",
        MPI_UNSIGNED_LONG => "MPI_UNSIGNED_LONG",
        MPI_LONG_LONG => "MPI_LONG_LONG",
        MPI_UNSIGNED_LONG_LONG => "MPI_UNSIGNED_LONG_LONG",
        MPI_FLOAT => "MPI_FLOAT",
        MPI_DOUBLE => "MPI_DOUBLE",
        MPI_INT8_T => "MPI_INT8_T",
        MPI_INT16_T => "MPI_INT16_T",
        MPI_INT32_T => "MPI_INT32_T",
        MPI_INT64_T => "MPI_INT64_T",
        MPI_UINT8_T => "MPI_UINT8_T",
        MPI_UINT16_T => "MPI_UINT16_T",
        MPI_UINT32_T => "MPI_UINT32_T",
        MPI_UINT64_T => "MPI_UINT64_T",
        MPI_C_BOOL => "MPI_C_BOOL",
        MPI_INTEGER => "MPI_INTEGER",
        MPI_REAL => "MPI_REAL",
        MPI_DOUBLE_PRECISION => "MPI_DOUBLE_PRECISION",
        MPI_FLOAT_INT => "MPI_FLOAT_INT",
        MPI_DOUBLE_INT => "MPI_DOUBLE_INT",
        MPI_LONG_INT => "MPI_LONG_INT",
        MPI_2INT => "MPI_2INT",
        MPI_SHORT_INT => "MPI_SHORT_INT",
        MPI_PACKED => "MPI_PACKED",
        MPI_AINT => "MPI_AINT",
        MPI_OFFSET => "MPI_OFFSET",
        MPI_COUNT => "MPI_COUNT",
        MPI_LONG_DOUBLE => "MPI_LONG_DOUBLE",
        MPI_LONG_DOUBLE_INT => "MPI_LONG_DOUBLE_INT",
        MPI_C_FLOAT_COMPLEX => "MPI_C_FLOAT_COMPLEX",
        MPI_C_DOUBLE_COMPLEX => "MPI_C_DOUBLE_COMPLEX",
        MPI_C_LONG_DOUBLE_COMPLEX => "MPI_C_LONG_DOUBLE_COMPLEX",
        MPI_CXX_FLOAT_COMPLEX => "MPI_CXX_FLOAT_COMPLEX",
        MPI_CXX_DOUBLE_COMPLEX => "MPI_CXX_DOUBLE_COMPLEX",
        MPI_CXX_LONG_DOUBLE_COMPLEX => "MPI_CXX_LONG_DOUBLE_COMPLEX",
        MPI_WCHAR => "MPI_WCHAR",
        MPI_CXX_BOOL => "MPI_CXX_BOOL",
        MPI_COMPLEX => "MPI_COMPLEX",
        MPI_DOUBLE_COMPLEX => "MPI_DOUBLE_COMPLEX",
        MPI_LOGICAL => "MPI_LOGICAL",
        MPI_CHARACTER => "MPI_CHARACTER",
        _ => return None,
    })
}

/// `MPI_Type_set_name` (MPI-4.0 §7.8): names `datatype` (a predefined one too), at most
/// `MPI_MAX_OBJECT_NAME - 1` bytes.
///
/// # Errors
/// `MPI_ERR_TYPE` for an invalid or freed datatype, `MPI_ERR_ARG` for a NULL or too long name.
///
/// # Safety
/// `type_name` is NULL or points at a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_set_name(datatype: c_int, type_name: *const c_char) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        layout_of(datatype, false)?;
        if type_name.is_null() {
            return Err(Failure::null("type_name"));
        }
        // SAFETY: not NULL; NUL-terminated by the contract.
        let name = unsafe { std::ffi::CStr::from_ptr(type_name) };
        let name = name.to_string_lossy().into_owned();
        if name.len() >= MPI_MAX_OBJECT_NAME as usize {
            return Err(Failure::new(
                MPI_ERR_ARG,
                format!(
                    "a name of {} bytes (at most {} fit)",
                    name.len(),
                    MPI_MAX_OBJECT_NAME - 1
                ),
            ));
        }
        lock(&NAMES).insert(datatype, name);
        Ok(())
    })
}

/// `MPI_Type_get_name`: the name set last, else a predefined type's MPI name, else "".
///
/// # Errors
/// `MPI_ERR_TYPE` for an invalid or freed datatype, `MPI_ERR_ARG` for a NULL pointer.
///
/// # Safety
/// `type_name` is NULL or points at `MPI_MAX_OBJECT_NAME` writable bytes; `resultlen` is NULL
/// or points at a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_name(
    datatype: c_int,
    type_name: *mut c_char,
    resultlen: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        layout_of(datatype, false)?;
        let name = lock(&NAMES)
            .get(&datatype)
            .cloned()
            .or_else(|| predefined_name(datatype).map(str::to_string))
            .unwrap_or_default();
        // SAFETY: forwarded contract.
        unsafe {
            write_string(
                type_name,
                MPI_MAX_OBJECT_NAME,
                &name,
                resultlen,
                "type_name",
            )
        }
    })
}

/// A derived type `datatype` is freed: its name and attributes go (the attributes' delete
/// callbacks run).
///
/// # Errors
/// The first error a delete callback returns.
pub(crate) fn forget(datatype: c_int) -> Result<(), Failure> {
    lock(&NAMES).remove(&datatype);
    crate::attributes::delete_all((Kind::Type, datatype))
}

/// `MPI_Type_create_keyval` (MPI-4.0 §7.7.4): a key for datatypes; NULL callbacks act as
/// `MPI_TYPE_NULL_COPY_FN` and `MPI_TYPE_NULL_DELETE_FN`.
///
/// # Safety
/// `type_keyval` is NULL or points at a writable int; the callbacks are NULL or functions of
/// the `MPI_Type_*_attr_function` types.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_create_keyval(
    type_copy_attr_fn: Option<CopyFn>,
    type_delete_attr_fn: Option<DeleteFn>,
    type_keyval: *mut c_int,
    extra_state: *mut c_void,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(type_keyval, "type_keyval")? };
        crate::attributes::create_keyval(
            Kind::Type,
            type_copy_attr_fn,
            type_delete_attr_fn,
            &slot,
            extra_state,
        )
    })
}

/// `MPI_Type_free_keyval`: as `MPI_Comm_free_keyval`, for a datatype key.
///
/// # Safety
/// `type_keyval` is NULL or points at a readable and writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_free_keyval(type_keyval: *mut c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let slot = unsafe { out(type_keyval, "type_keyval")? };
        crate::attributes::free_keyval(Kind::Type, &slot)
    })
}

/// `MPI_Type_set_attr`: as `MPI_Comm_set_attr`, on a datatype (a predefined one too).
#[no_mangle]
pub extern "C" fn MPI_Type_set_attr(
    datatype: c_int,
    type_keyval: c_int,
    attribute_val: *mut c_void,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        layout_of(datatype, false)?;
        crate::attributes::set_attr((Kind::Type, datatype), type_keyval, attribute_val as usize)
    })
}

/// `MPI_Type_get_attr`: `*flag` says whether the datatype has a value for the key, written to
/// `*(void **)attribute_val`.
///
/// # Safety
/// `attribute_val` is NULL or points at a writable `void *`; `flag` NULL or a writable int.
#[no_mangle]
pub unsafe extern "C" fn MPI_Type_get_attr(
    datatype: c_int,
    type_keyval: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        // SAFETY: checked for NULL by `out`.
        let flag = unsafe { out(flag, "flag")? };
        if attribute_val.is_null() {
            return Err(Failure::null("attribute_val"));
        }
        layout_of(datatype, false)?;
        match crate::attributes::get((Kind::Type, datatype), type_keyval)? {
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

/// `MPI_Type_delete_attr`: as `MPI_Comm_delete_attr`, on a datatype.
#[no_mangle]
pub extern "C" fn MPI_Type_delete_attr(datatype: c_int, type_keyval: c_int) -> c_int {
    boundary(MPI_COMM_WORLD, || {
        layout_of(datatype, false)?;
        crate::attributes::delete_attr((Kind::Type, datatype), type_keyval)
    })
}

// The `PMPI_` names of this module's functions.
profiling_names!("typeinfo.rs");
