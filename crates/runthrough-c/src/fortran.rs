// SPDX-License-Identifier: MIT OR Apache-2.0
//! The handle conversions between C and Fortran (`MPI_Comm_c2f`, `MPI_Comm_f2c`, ... for every
//! handle type of `include/mpi.h`, `MPI_File` and `MPI_Win` included). A C handle of this
//! library is an int indexing one of its tables, and `MPI_Fint` is an int too, so every
//! conversion is the identity: a handle converted and converted back is the same handle, and
//! an invalid one stays invalid (the calls that use it report it). The conversions are local,
//! touch no state and work before `MPI_Init` and after `MPI_Finalize`.
//!
//! Bindings that reach MPI through these (Rust's `mpi` crate builds its shim with them) need
//! only the names; no Fortran interface is provided.

use std::ffi::c_int;

/// `MPI_Comm_c2f`: the Fortran handle of a C handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Comm_c2f(comm: c_int) -> c_int {
    comm
}

/// `MPI_Comm_f2c`: the C handle of a Fortran handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Comm_f2c(comm: c_int) -> c_int {
    comm
}

/// `MPI_Errhandler_c2f`: the Fortran handle of a C handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Errhandler_c2f(errhandler: c_int) -> c_int {
    errhandler
}

/// `MPI_Errhandler_f2c`: the C handle of a Fortran handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Errhandler_f2c(errhandler: c_int) -> c_int {
    errhandler
}

/// `MPI_File_c2f`: the Fortran handle of a C handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_File_c2f(file: c_int) -> c_int {
    file
}

/// `MPI_File_f2c`: the C handle of a Fortran handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_File_f2c(file: c_int) -> c_int {
    file
}

/// `MPI_Group_c2f`: the Fortran handle of a C handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Group_c2f(group: c_int) -> c_int {
    group
}

/// `MPI_Group_f2c`: the C handle of a Fortran handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Group_f2c(group: c_int) -> c_int {
    group
}

/// `MPI_Info_c2f`: the Fortran handle of a C handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Info_c2f(info: c_int) -> c_int {
    info
}

/// `MPI_Info_f2c`: the C handle of a Fortran handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Info_f2c(info: c_int) -> c_int {
    info
}

/// `MPI_Message_c2f`: the Fortran handle of a C handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Message_c2f(message: c_int) -> c_int {
    message
}

/// `MPI_Message_f2c`: the C handle of a Fortran handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Message_f2c(message: c_int) -> c_int {
    message
}

/// `MPI_Op_c2f`: the Fortran handle of a C handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Op_c2f(op: c_int) -> c_int {
    op
}

/// `MPI_Op_f2c`: the C handle of a Fortran handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Op_f2c(op: c_int) -> c_int {
    op
}

/// `MPI_Request_c2f`: the Fortran handle of a C handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Request_c2f(request: c_int) -> c_int {
    request
}

/// `MPI_Request_f2c`: the C handle of a Fortran handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Request_f2c(request: c_int) -> c_int {
    request
}

/// `MPI_Type_c2f`: the Fortran handle of a C handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Type_c2f(datatype: c_int) -> c_int {
    datatype
}

/// `MPI_Type_f2c`: the C handle of a Fortran handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Type_f2c(datatype: c_int) -> c_int {
    datatype
}

/// `MPI_Win_c2f`: the Fortran handle of a C handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Win_c2f(win: c_int) -> c_int {
    win
}

/// `MPI_Win_f2c`: the C handle of a Fortran handle (the same int).
#[no_mangle]
pub extern "C" fn MPI_Win_f2c(win: c_int) -> c_int {
    win
}

// The `PMPI_` names of this module's functions.
profiling_names!("fortran.rs");
