// SPDX-License-Identifier: MIT OR Apache-2.0
//! The C interface end to end (SPEC §5): C programs from `tests/c/` compiled with `rtcc` and run
//! under rtrun (as a library), each bounded by a job time-out; rtrun kills only the processes it
//! started. Jobs run one at a time so that the machine's two cores are not oversubscribed.
//!
//! Each program checks its own results and exits non-zero when one is wrong; a test passes when
//! exactly the expected ranks died, every other rank exited 0, and rank 0 printed `No Errors`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use rtrun::{Ending, Job, Kill, Report};

static ONE_JOB_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Held while a test compiles and runs its program (a program is compiled to one path).
fn one_job_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_JOB_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

const RTCC: &str = env!("CARGO_BIN_EXE_rtcc");
const JOB_LIMIT: Duration = Duration::from_secs(60);

/// Compiles `tests/c/<name>.c` with rtcc into the test's scratch directory.
fn compile(name: &str) -> PathBuf {
    compile_with(name, "c", None)
}

/// Compiles `tests/c/<name>.<extension>` with rtcc, with `RTCC_CC=compiler` when given.
fn compile_with(name: &str, extension: &str, compiler: Option<&str>) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(format!("{name}.{extension}"));
    compile_source(name, &source, compiler)
}

/// Compiles `source` with rtcc into the test's scratch directory as `name`.
fn compile_source(name: &str, source: &Path, compiler: Option<&str>) -> PathBuf {
    rtcc(name, &[source.as_os_str()], compiler)
}

/// Runs rtcc on `args` (sources and options) with the tests' warnings, writing `name` in the
/// test's scratch directory.
fn rtcc(name: &str, args: &[&std::ffi::OsStr], compiler: Option<&str>) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c-programs");
    std::fs::create_dir_all(&dir).unwrap();
    let program = dir.join(name);
    let mut command = Command::new(RTCC);
    if let Some(compiler) = compiler {
        command.env("RTCC_CC", compiler);
    }
    // The library rtcc links is found through DT_RPATH, which (unlike DT_RUNPATH) wins over
    // the LD_LIBRARY_PATH that cargo sets for tests: that may name an older build's library.
    let output = command
        .arg("-Wl,--disable-new-dtags")
        .arg("-Wall")
        .arg("-Werror")
        .arg("-g")
        .args(args)
        .arg("-o")
        .arg(&program)
        .output()
        .expect("rtcc runs");
    assert!(
        output.status.success(),
        "rtcc {:?} failed:\n{}{}",
        args,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    program
}

fn output(report: &Report) -> String {
    report
        .lines
        .iter()
        .map(|(rank, _, line)| format!("[{rank}] {line}\n"))
        .collect()
}

/// Runs `name` on `size` ranks with `args` and rtrun `kills`, and checks that exactly `dead`
/// died, every other rank exited 0 and rank 0 printed `No Errors`.
fn scenario_with(name: &str, size: u32, args: &[&str], kills: &[&str], dead: &[u32]) -> Report {
    let _one = one_job_at_a_time();
    run_checked(name, compile(name), size, args, kills, dead)
}

/// [`scenario_with`] for a program already compiled (the caller holds the one-job lock).
fn run_checked(
    name: &str,
    program: PathBuf,
    size: u32,
    args: &[&str],
    kills: &[&str],
    dead: &[u32],
) -> Report {
    let mut job = Job::new(size, program);
    job.args = args.iter().map(Into::into).collect();
    job.kills = kills.iter().map(|k| k.parse::<Kill>().unwrap()).collect();
    run_job(name, job, dead)
}

/// Runs `job` and checks it as [`run_checked`] does.
fn run_job(name: &str, mut job: Job, dead: &[u32]) -> Report {
    job.timeout = Some(JOB_LIMIT);
    job.tag_output = false;
    let report = rtrun::run(&job).expect("the job starts");
    let text = output(&report);
    assert!(
        !report.timed_out,
        "{name} timed out\n{}{text}",
        report.summary()
    );
    for rank in &report.ranks {
        if dead.contains(&rank.rank) {
            assert!(
                rank.failed(),
                "{name}: rank {} should have died\n{}{text}",
                rank.rank,
                report.summary()
            );
        } else {
            assert_eq!(
                rank.ending,
                Some(Ending::Exited(0)),
                "{name}: rank {}\n{}{text}",
                rank.rank,
                report.summary()
            );
        }
    }
    assert!(
        report.stdout_of(0).contains(&"No Errors"),
        "{name}: rank 0 did not finish\n{text}"
    );
    report
}

/// A scenario whose victim (if any) kills itself in the program.
fn scenario(name: &str, size: u32, dead: &[u32]) -> Report {
    scenario_with(name, size, &[], &[], dead)
}

/// SPEC §2.2, §5: the seed's first snippet; rank 2 killed by rtrun inside its 6th call (an
/// all-reduce of the work). Every survivor finds exactly rank 2 NULL|NEW in G.
#[test]
fn seed_snippet_with_counts_finds_the_rank_killed_during_work() {
    let report = scenario_with("seed_count", 4, &["2"], &["2@call:6"], &[2]);
    for rank in [0, 1, 3] {
        assert!(report
            .stdout_of(rank)
            .contains(&"found failed rank 2 NULL|NEW"));
    }
}

/// SPEC §2.2, §5: the seed's flag snippet; rank 1 killed by rtrun during the work (its 8th
/// call). Every survivor finds exactly rank 1 NULL|NEW in G.
#[test]
fn seed_snippet_with_flag_finds_the_rank_killed_during_work() {
    let report = scenario_with("seed_flag", 4, &["1"], &["1@call:8"], &[1]);
    for rank in [0, 2, 3] {
        assert!(report
            .stdout_of(rank)
            .contains(&"found failed rank 1 NULL|NEW"));
    }
}

/// SPEC §2.2: the same snippet with the rank killed by time (SIGKILL from rtrun) during a work
/// phase that lasts long enough for the kill to land in it.
#[test]
fn seed_snippet_with_a_timed_kill() {
    scenario_with("seed_count", 4, &["3", "4"], &["3@1.5"], &[3]);
}

/// SPEC §5, `tests/c/die.c`: rank 1 dies; the survivors validate and finalize without blocking on it.
#[test]
fn die() {
    scenario("die", 4, &[1]);
}

/// SPEC §5, `tests/c/sendalive.c`: sends between live ranks work after a failure.
#[test]
fn sendalive() {
    scenario("sendalive", 4, &[1]);
}

/// SPEC §5, `tests/c/isendalive.c`: non-blocking sends between live ranks work after a failure.
#[test]
fn isendalive() {
    scenario("isendalive", 4, &[1]);
}

/// SPEC §5, `tests/c/multi_isendalive.c`: rounds of isends: the dead rank's request fails (MPI_ERR_IN_STATUS), the others succeed; after validate_global all succeed.
#[test]
fn multi_isendalive() {
    scenario("multi_isendalive", 4, &[1]);
}

/// SPEC §5, `tests/c/senddead.c`: a send to a dead, unrecognized rank is MPIX_ERR_PROC_FAILED; recognized, MPI_PROC_NULL.
#[test]
fn senddead() {
    scenario("senddead", 4, &[1]);
}

/// SPEC §5, `tests/c/isenddead.c`: as senddead with MPI_Isend / MPI_Wait.
#[test]
fn isenddead() {
    scenario("isenddead", 4, &[1]);
}

/// SPEC §5, `tests/c/recvdead.c`: a receive from a dead rank: its buffered message first, then MPIX_ERR_PROC_FAILED; recognized, MPI_PROC_NULL.
#[test]
fn recvdead() {
    scenario("recvdead", 4, &[1]);
}

/// SPEC §5, `tests/c/irecvdead.c`: a posted receive from a rank that dies reports MPIX_ERR_PROC_FAILED at MPI_Wait.
#[test]
fn irecvdead() {
    scenario("irecvdead", 4, &[1]);
}

/// SPEC §5, `tests/c/barrier.c`: an unrecognized failure disables MPI_Barrier; validate_global enables it again (and MPI_Ibarrier).
#[test]
fn barrier() {
    scenario("barrier", 4, &[1]);
}

/// SPEC §5, `tests/c/gather.c`: the gather's root reports the failure; after validate_global the dead rank's slot is untouched.
#[test]
fn gather() {
    scenario("gather", 4, &[1]);
}

/// SPEC §5, `tests/c/reduce.c`: after validate_global the dead rank contributes nothing to reductions.
#[test]
fn reduce() {
    scenario("reduce", 4, &[1]);
}

/// SPEC §5, `tests/c/bcast.c`: a broadcast that succeeds has the right data; after validate_global every survivor gets it.
#[test]
fn bcast() {
    scenario("bcast", 4, &[1]);
}

/// SPEC §5, `tests/c/scatter.c`: a scatter that succeeds has the right block; after validate_global every survivor gets its block.
#[test]
fn scatter() {
    scenario("scatter", 4, &[1]);
}

/// SPEC §5, `tests/c/anysource.c`: MPI_ANY_SOURCE returns MPIX_ERR_PROC_FAILED_PENDING until validate_local acknowledges the failure.
#[test]
fn anysource() {
    scenario("anysource", 4, &[1]);
}

/// SPEC §5, `tests/c/failure_ack.c`: MPIX_Comm_failure_ack / _get_acked, and a wildcard request kept through MPIX_ERR_PROC_FAILED_PENDING.
#[test]
fn failure_ack() {
    scenario("failure_ack", 4, &[1]);
}

/// SPEC §5, `tests/c/revoke_nofail.c`: a revocation releases pending receives with MPIX_ERR_REVOKED; agree and shrink work on the revoked communicator.
#[test]
fn revoke_nofail() {
    scenario("revoke_nofail", 4, &[]);
}

/// SPEC §5, `tests/c/shrink.c`: MPIX_Comm_shrink gives the survivors in their old order.
#[test]
fn shrink() {
    scenario("shrink", 4, &[1]);
}

/// SPEC §5, `tests/c/agree.c`: MPIX_Comm_agree: the AND; MPIX_ERR_PROC_FAILED with the agreed flag until every survivor acknowledged.
#[test]
fn agree() {
    scenario("agree", 4, &[1]);
}

/// SPEC §5, `tests/c/agree_shrink.c`: acknowledge, agree, shrink, agree on the shrunk communicator.
#[test]
fn agree_shrink() {
    scenario("agree_shrink", 4, &[1]);
}

/// `tests/c/attributes.c`: attribute caching with copy and delete callbacks (dup, free,
/// set over a value, freed keys, MPI_COMM_SELF's at MPI_Finalize), MPI_Comm_test_inter and
/// MPI_Comm_call_errhandler, with their wrong uses.
#[test]
fn attributes_test_inter_call_errhandler() {
    scenario("attributes", 2, &[]);
}

/// `tests/c/intercomm_collectives.c`: the rooted and all-to-all collectives on an
/// intercommunicator of groups of 2 and 4 (and 2 and 2): data goes from one group to the
/// other, reductions combine in rank order, wrong use is refused at every rank.
#[test]
fn intercomm_collectives() {
    scenario("intercomm_collectives", 6, &[]);
    let _one = one_job_at_a_time();
    run_checked(
        "intercomm_collectives",
        compile("intercomm_collectives"),
        4,
        &[],
        &[],
        &[],
    );
}

/// `tests/c/intercomm_collectives.c kill`: the last rank dies before an all-reduce on the
/// intercommunicator, which fails at every member of the other group (their result needs
/// it) and returns at every survivor.
#[test]
fn intercomm_collectives_with_a_death() {
    scenario_with("intercomm_collectives", 6, &["kill"], &[], &[5]);
}

/// `tests/c/grequest.c`: generalized requests: query and free functions called once at the
/// completion (query alone by MPI_Request_get_status), cancel with the completion flag,
/// MPI_Wait woken by a thread's MPI_Grequest_complete, MPI_Waitall with a receive, a request
/// freed before its completion, query's error, NULL functions, wrong use.
#[test]
fn generalized_requests() {
    scenario("grequest", 2, &[]);
}

/// `tests/c/pack_external.c`: the external32 representation's bytes (big-endian, a long in
/// 4 bytes, long double as binary128, pairs and complex numbers), a strided type packed and
/// unpacked around its gaps, and the refusals (representation, truncation, conversion).
#[test]
fn pack_external_writes_external32() {
    scenario("pack_external", 2, &[]);
}

/// `tests/c/errhandler_mpi1.c`: MPI-1's MPI_Errhandler_get / _set act as the
/// MPI_Comm_get_errhandler / _set_errhandler they were renamed to, wrong use refused alike.
#[test]
fn errhandler_mpi1_names() {
    scenario("errhandler_mpi1", 2, &[]);
}

/// `tests/c/mpi5_ft.c`: the MPI-5 names of the fault-tolerance calls and error classes
/// (MPI_Comm_revoke / _is_revoked / _shrink / _ishrink / _agree / _iagree / _get_failed /
/// _ack_failed, MPI_ERR_PROC_FAILED / _PENDING / MPI_ERR_REVOKED) behave as the MPIX ones, with
/// rank 1 killed by rtrun as it enters its second barrier; MPIX_Comm_ishrink too.
#[test]
fn mpi5_fault_tolerance_names() {
    scenario_with("mpi5_ft", 4, &[], &["1@barrier:2"], &[1]);
}

/// SPEC §5, `tests/c/revoke_shrink.c`: the rank that notices the failure revokes; everyone shrinks and goes on.
#[test]
fn revoke_shrink() {
    scenario("revoke_shrink", 4, &[1]);
}

/// SPEC §5, `tests/c/arguments.c`: wrong use (NULL pointers, freed communicators, negative counts, bad handles) returns an error class; the accessors' incount rules; error handlers.
#[test]
fn arguments() {
    scenario("arguments", 3, &[2]);
}

/// SPEC §3.3, `tests/c/persistent_collectives.c`: every persistent collective's init call,
/// started again and again (alone and by MPI_Startall) with changed buffers; wrong use; after
/// rank 3 dies a started all-reduce fails at every survivor, then runs over them once the
/// failure is validated.
#[test]
fn persistent_collectives() {
    scenario("persistent_collectives", 4, &[3]);
}

/// SPEC §3.4, `tests/c/graph.c`: graph and distributed-graph topologies, their queries and
/// traffic along their edges, wrong use refused at every rank; after rank 3 dies
/// MPI_Dist_graph_create fails at every survivor.
#[test]
fn graph() {
    scenario("graph", 4, &[3]);
}

/// SPEC §3.3, `tests/c/neighbor.c`: the neighbourhood collectives (all-gather(v),
/// all-to-all(v, w), blocking and not) on a periodic ring, an open line (edges to
/// MPI_PROC_NULL move nothing) and a distributed graph with a repeated edge; wrong use; after
/// rank 3 dies the exchange fails at every survivor, then runs over them once validated.
#[test]
fn neighbor() {
    scenario("neighbor", 4, &[3]);
}

/// `tests/c/wide_types.c`: long double, MPI_LONG_DOUBLE_INT and the complex types: sizes,
/// point-to-point and the reductions MPI defines on them; MPI_WCHAR and MPI_CXX_BOOL.
#[test]
fn wide_types() {
    scenario("wide_types", 3, &[]);
}

/// `tests/c/type_info.c`: MPI_Type_get_envelope / _get_contents for every constructor (a
/// struct decoded after its part was freed), MPI_Type_dup, datatype names and attributes.
#[test]
fn type_info() {
    scenario("type_info", 2, &[]);
}

/// SPEC §3.4, `tests/c/intercomm_split.c`: MPI_Comm_split and MPI_Comm_create on an
/// intercommunicator (each group its own members; a color or a side missing gives
/// MPI_COMM_NULL); a wrong group fails at every rank; after rank 5 dies a split fails with
/// MPIX_ERR_PROC_FAILED at every survivor.
#[test]
fn intercomm_split() {
    scenario("intercomm_split", 6, &[5]);
}

/// SPEC §3.4, `tests/c/idup.c`: MPI_Comm_idup / _idup_with_info pending beside other calls and
/// completed in any order (each request the same communicator everywhere), attributes and a
/// failing copy callback, the dup of an intercommunicator, wrong use; after rank 3 dies an idup
/// fails at every survivor until the failure is validated.
#[test]
fn idup() {
    scenario("idup", 4, &[3]);
}

/// The profiling interface (`tests/c/profiling.c` under the tool of `tests/c/profiling_tool.c`,
/// which defines four MPI calls and reaches the library through their `PMPI_` names): built
/// into the program and preloaded as a shared library under the unchanged program, with no
/// failure and with rank 2 dead before the all-reductions. The tool sees exactly the program's
/// calls (not the library's own work inside `MPI_Sendrecv`, `MPI_Comm_free` or the shrink),
/// its `PMPI_` calls reach the library (without `-Bsymbolic-functions` they would come back
/// to the tool and recurse until the stack ran out), and an error passes through it.
#[test]
fn profiling_tool_built_in_and_preloaded() {
    let _one = one_job_at_a_time();
    let c = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c");
    let (program, tool) = (c.join("profiling.c"), c.join("profiling_tool.c"));
    let built_in = rtcc(
        "profiling_built_in",
        &[program.as_os_str(), tool.as_os_str()],
        None,
    );
    let plain = rtcc("profiling", &[program.as_os_str()], None);
    let shared = ["-shared".as_ref(), "-fPIC".as_ref(), tool.as_os_str()];
    let preload = rtcc("libprofiling_tool.so", &shared, None);
    // rank: (send, recv, allreduce, agree, errors) with no failure, then with rank 2 dead.
    let counts = |kill: bool, rank: u32| match (kill, rank) {
        (_, 0) => (3, 0, 2, 1, u32::from(kill)),
        (_, 1) => (0, 3, 2, 1, u32::from(kill)),
        _ => (0, 0, 2, 1, 0),
    };
    for kill in [false, true] {
        let (args, dead): (&[&str], &[u32]) = if kill { (&["kill"], &[2]) } else { (&[], &[]) };
        for (how, executable, preloaded) in [
            ("built in", &built_in, None),
            ("preloaded", &plain, Some(&preload)),
        ] {
            let mut job = Job::new(3, executable.clone());
            job.args = args.iter().map(Into::into).collect();
            if let Some(library) = preloaded {
                job.env
                    .push(("LD_PRELOAD".into(), library.display().to_string()));
            }
            let name = format!("profiling ({how}, kill: {kill})");
            let report = run_job(&name, job, dead);
            for rank in (0..3).filter(|r| !dead.contains(r)) {
                let (s, r, a, g, e) = counts(kill, rank);
                let want = format!(
                    "tool: rank {rank} send {s} recv {r} allreduce {a} agree {g} errors {e}"
                );
                assert!(
                    report.stdout_of(rank).contains(&want.as_str()),
                    "{name}: rank {rank} should print `{want}`\n{}",
                    output(&report)
                );
            }
        }
    }
}

/// `tests/c/freed_comm_request.c`: a receive pending on a communicator the program freed
/// reports its peer's death through that communicator's error handler, not MPI_COMM_WORLD's;
/// a call given the freed handle goes to MPI_COMM_WORLD's.
#[test]
fn a_request_of_a_freed_communicator_reports_through_its_handler() {
    scenario("freed_comm_request", 3, &[2]);
}

/// `tests/c/resilience_store.c`: the resilience library from C: a checkpoint with one copy,
/// rank 2 dead, the survivors shrink and recover (rank 3 takes slot 2, every slot back as it
/// was checkpointed), a checkpoint on the new owners; wrong use returns its class.
#[test]
fn resilience_store_from_c() {
    scenario("resilience_store", 4, &[2]);
}

/// `tests/c/resilience_parity.c`: the resilience library's parity from C: XOR parity over
/// groups of 3 and Reed-Solomon parity of 2 over 6 ranks, slots of different lengths, ranks 1
/// and 4 dead; after a shrink both stores rebuild slots 1 and 4 at ranks 2 and 5 bit for bit
/// and checkpoint again; groups of 1 and a negative parity return `MPI_ERR_ARG`.
#[test]
fn resilience_parity_from_c() {
    scenario("resilience_parity", 6, &[1, 4]);
}

/// Semantics §3.6, `tests/c/windows.c`: one-sided communication from C on 4 ranks: fence,
/// lock and post/start/complete/wait epochs with puts, gets, accumulates (strided datatypes at
/// either end, MPI_REPLACE, MPI_NO_OP), fetch-and-op and compare-and-swap atomic under
/// contention, attributes and names, MPI_Alloc_mem; wrong use refused with the target
/// unchanged; rank 3 dies: a fence and a lock on it return MPIX_ERR_PROC_FAILED,
/// MPIX_Win_get_failed names it, a revoked window refuses everything, a window over the
/// shrunk communicator carries on.
#[test]
fn windows_from_c() {
    scenario("windows", 4, &[3]);
}

/// `tests/c/handle_conversions.c`: MPI_<Kind>_c2f / _f2c for every handle type (MPI_File and
/// MPI_Win by their null handles), before MPI_Init too; handles that went through an MPI_Fint
/// work in the calls (Rust's `mpi` crate builds its shim with these).
#[test]
fn handle_conversions() {
    scenario("handle_conversions", 2, &[]);
}

/// SPEC §3.4, §5, `tests/c/communicators.c`: split, create, create_group, dup after a failure,
/// group algebra, error handler inheritance, probe and waitany.
#[test]
fn communicators() {
    scenario("communicators", 4, &[3]);
}

/// `tests/c/sendrecv.c`: MPI_Sendrecv / MPI_Sendrecv_replace: ring shifts, wildcards,
/// MPI_PROC_NULL ends, a block around the ring, oneself; bad input gives its error class and
/// leaves nothing behind; truncation.
#[test]
fn sendrecv() {
    scenario("sendrecv", 4, &[]);
}

/// `tests/c/isendrecv.c`: MPI_Isendrecv / MPI_Isendrecv_replace: ring shifts completed by
/// MPI_Wait and MPI_Test, two outstanding at once, MPI_PROC_NULL sides, a dead peer on either
/// side (MPIX_ERR_PROC_FAILED), then recognized (MPI_PROC_NULL); bad input.
#[test]
fn isendrecv() {
    scenario("isendrecv", 4, &[1]);
}

/// `tests/c/sendrecv_dead.c`: a peer dead before the call, on either side or both:
/// MPIX_ERR_PROC_FAILED, no live sender's message consumed, the replace buffer untouched;
/// recognized in G, the peer acts as MPI_PROC_NULL.
#[test]
fn sendrecv_dead() {
    scenario("sendrecv_dead", 4, &[1]);
}

/// `tests/c/sendrecv_kill.c`: rtrun kills rank 1 during a loop of exchanges with rank 0:
/// rank 0's MPI_Sendrecv returns MPIX_ERR_PROC_FAILED, never hangs; the other pair finishes.
#[test]
fn sendrecv_kill() {
    let report = scenario_with("sendrecv_kill", 4, &[], &["1@call:301"], &[1]);
    assert!(report
        .stdout_of(0)
        .iter()
        .any(|line| line.starts_with("rank 1 failed during round")));
}

/// `tests/c/comm_self.c`: MPI_COMM_SELF is a communicator of one rank; point-to-point,
/// collectives, dup and group on it; bad input; it keeps working while MPI_COMM_WORLD has an
/// unhandled failure.
#[test]
fn comm_self() {
    scenario("comm_self", 3, &[2]);
}

/// `tests/c/environment.c`: versions before MPI_Init and after MPI_Finalize, the Fortran type
/// names, MPI_INFO_NULL / MPI_ERRCODES_IGNORE / MPI_ARGV_NULL.
#[test]
fn environment() {
    scenario("environment", 3, &[]);
}

/// `tests/c/ulfm_ext.c`: <mpi-ext.h> as ULFM programs use it: MPIX_FT, MPIX_Comm_iagree (overlap,
/// MPI_Test, ordered after a collective, MPIX_ERR_PROC_FAILED with an unacknowledged death),
/// MPIX_Comm_get_failed in detection order, MPIX_Comm_ack_failed of a prefix; bad input.
#[test]
fn ulfm_ext() {
    scenario("ulfm_ext", 5, &[1, 3]);
}

/// `tests/c/cxx_ring.cpp`: a C++ program builds against the headers (extern "C") and runs.
#[test]
fn cxx_program() {
    let _one = one_job_at_a_time();
    let program = compile_with("cxx_ring", "cpp", Some("c++"));
    run_checked("cxx_ring", program, 3, &[], &[], &[]);
}

/// `tests/c/anysource_blocking.c`: with an unacknowledged failure, every blocking
/// MPI_ANY_SOURCE call (Recv, Probe, Sendrecv, Sendrecv_replace) returns MPIX_ERR_PROC_FAILED
/// and receives nothing; MPI_Irecv's Test/Wait report MPIX_ERR_PROC_FAILED_PENDING and keep the
/// request, which completes after the acknowledgement.
#[test]
fn anysource_blocking() {
    scenario("anysource_blocking", 4, &[1]);
}

/// `tests/c/anysource_kill.c`: rtrun kills ranks 1 and 3 by time while rank 0 waits in a
/// wildcard MPI_Recv, then in a wildcard MPI_Sendrecv: each returns MPIX_ERR_PROC_FAILED.
#[test]
fn anysource_kill() {
    scenario_with("anysource_kill", 5, &[], &["1@0.5", "3@2"], &[1, 3]);
}

/// Runs `program` directly (no launcher) with only `vars` (and `PATH`) in its environment;
/// returns its exit status, standard output and standard error.
fn run_unlaunched(program: &Path, vars: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let mut child = Command::new(program)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(vars.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the program starts");
    let deadline = std::time::Instant::now() + JOB_LIMIT;
    while child.try_wait().expect("waiting for the program").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("{} did not end within {JOB_LIMIT:?}", program.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().expect("the program's output");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `tests/c/singleton.c` run without a launcher: a singleton (rank 0 of 1) where every call
/// works, as MPI allows.
#[test]
fn a_program_started_without_a_launcher_is_a_singleton() {
    let _one = one_job_at_a_time();
    let program = compile("singleton");
    let (status, stdout, stderr) = run_unlaunched(&program, &[]);
    assert_eq!(status, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.contains("MPI_Init returned: rank 0 of 1"),
        "{stdout}"
    );
    assert!(stdout.contains("No Errors"), "{stdout}{stderr}");
}

/// `tests/c/singleton.c` with a broken launcher environment (a variable missing, one that does
/// not parse, a launcher that cannot be reached, a bad setting): MPI_Init is fatal under the
/// default MPI_ERRORS_ARE_FATAL: one line on standard error, exit status 1, and the program
/// never runs on (it prints nothing).
#[test]
fn a_failed_mpi_init_is_fatal() {
    let _one = one_job_at_a_time();
    let program = compile("singleton");
    let secret = "0".repeat(64);
    let broken: [&[(&str, &str)]; 4] = [
        &[("RT_RANK", "0")],
        &[("RT_RANK", "zero"), ("RT_SIZE", "2")],
        &[
            ("RT_RANK", "0"),
            ("RT_SIZE", "2"),
            ("RT_CONTROL", "127.0.0.1:1"),
            ("RT_SECRET", &secret),
        ],
        &[("RT_HEARTBEAT", "often")],
    ];
    for vars in broken {
        let (status, stdout, stderr) = run_unlaunched(&program, vars);
        assert_eq!(status, Some(1), "{vars:?}: {stdout}{stderr}");
        assert_eq!(stdout, "", "{vars:?}: the program ran on");
        assert_eq!(stderr.lines().count(), 1, "{vars:?}: {stderr}");
        assert!(stderr.contains("MPI_Init failed"), "{vars:?}: {stderr}");
    }
}

/// `tests/c/completion.c`: MPI_Testall / Testany / Waitsome / Testsome before and after their
/// messages, on inactive requests, with bad input; MPI_Request_free of a send, of a pending
/// receive (its message still lands), of a collective's request (MPI_ERR_REQUEST); with a dead
/// peer: MPIX_ERR_PROC_FAILED in the statuses (MPI_ERR_IN_STATUS), and a wildcard receive kept
/// through MPIX_ERR_PROC_FAILED_PENDING until the acknowledgement.
#[test]
fn completion() {
    scenario("completion", 4, &[1]);
}

/// `tests/c/completion_kill.c`: rtrun kills rank 1 while rank 0 waits in MPI_Waitsome on it
/// and a live rank: the dead one is done with MPIX_ERR_PROC_FAILED, the live one stays active.
#[test]
fn completion_kill() {
    scenario_with("completion_kill", 3, &[], &["1@0.5"], &[1]);
}

/// `tests/c/persistent.c`: persistent requests (a halo exchange of 20 iterations with
/// MPI_Startall / MPI_Waitall on a ring of 4, handles kept between them; inactive requests in
/// every completion call; MPI_Start of an active request MPI_ERR_REQUEST; MPI_Request_free of
/// inactive and active ones; MPI_Ssend_init completing only once matched; MPI_Cancel of a
/// started receive), buffered and ready sends with MPI_Buffer_attach / _detach, and bad input
/// refused by the init calls.
#[test]
fn persistent() {
    scenario("persistent", 4, &[]);
}

/// `tests/c/persistent_kill.c`: rank 1 dies while the others' persistent requests to and from
/// it are started: MPI_Waitall gives MPI_ERR_IN_STATUS with MPIX_ERR_PROC_FAILED in its
/// statuses, the requests stay allocated and inactive, and after validate_global they complete
/// as with MPI_PROC_NULL.
#[test]
fn persistent_kill() {
    scenario("persistent_kill", 3, &[1]);
}

/// Runs `tests/c/abort.c` on 4 ranks with `args` and checks that the job was aborted by rank 2
/// with `code`: rtrun ended every rank (none exited 0 or ran on past its receive), well before
/// the job's time limit, and its exit status is the code.
fn aborted_job(args: &[&str], code: i32) {
    let _one = one_job_at_a_time();
    let mut job = Job::new(4, compile("abort"));
    job.args = args.iter().map(Into::into).collect();
    job.timeout = Some(JOB_LIMIT);
    let report = rtrun::run(&job).expect("the job starts");
    let text = output(&report);
    assert!(!report.timed_out, "{}{text}", report.summary());
    assert_eq!(
        report.aborted,
        Some(rtrun::Abort { rank: 2, code }),
        "{}{text}",
        report.summary()
    );
    assert_eq!(report.exit_status(false), code as u8);
    assert!(
        report.elapsed < Duration::from_secs(20),
        "{}",
        report.summary()
    );
    for rank in &report.ranks {
        assert!(rank.ending.is_some(), "rank {} never ended", rank.rank);
        assert_ne!(rank.ending, Some(Ending::Exited(0)), "{}", report.summary());
    }
    assert!(!text.contains("ran on"), "{text}");
    assert!(report.summary().contains("aborted the job"));
}

/// `tests/c/abort.c`: MPI_Abort(MPI_COMM_WORLD, 3) ends every rank; rtrun's status is 3.
#[test]
fn abort_ends_every_rank_with_the_code() {
    aborted_job(&[], 3);
}

/// `tests/c/abort.c`: MPI_Abort on MPI_COMM_SELF or a split communicator ends the whole job
/// too, as MPI implementations do; codes outside 1..=255 (0, 300) become 1.
#[test]
fn abort_on_any_communicator_ends_the_job() {
    aborted_job(&["42", "self"], 42);
    aborted_job(&["7", "split"], 7);
    aborted_job(&["0"], 1);
    aborted_job(&["300"], 1);
}

/// `tests/c/collectives_more.c`: MPI_Allgather, MPI_Gatherv, MPI_Scatterv, MPI_Alltoall,
/// MPI_Scan and MPI_Exscan give MPI's values (several roots, datatypes, zero counts, the
/// pairwise all-to-all), MPI_IN_PLACE wherever MPI allows it (also Allreduce, Reduce and Gather
/// at the root), and bad input its error class.
#[test]
fn collectives_more() {
    scenario("collectives_more", 4, &[]);
}

/// `tests/c/collectives_dead.c`: rank 1 dead and detected, not recognized: each new collective
/// returns MPIX_ERR_PROC_FAILED at every survivor; after validate_global they run over the
/// survivors (dead slots untouched, no contribution to the scans, a dead root reported).
#[test]
fn collectives_dead() {
    scenario("collectives_dead", 4, &[1]);
}

/// `tests/c/collectives_kill.c`: rtrun kills rank 1 inside its third call of MPI_Allgather,
/// MPI_Alltoall, MPI_Alltoallw (in its all-reduce of the block size, or in its all-to-all,
/// before or after its first message: then a survivor whose blocks from rank 1 came relayed
/// by others in Bruck's algorithm may finish that call, and fails in the next), MPI_Scan or
/// MPI_Exscan: every survivor gets MPIX_ERR_PROC_FAILED by that call
/// (never a hang), and after validate_global the collective runs over the survivors.
#[test]
fn collectives_kill() {
    for (name, kill, latest) in [
        ("allgather", "1@all_gather:3:1", "3"),
        ("alltoall", "1@all_to_all:3:1", "3"),
        ("alltoallw", "1@all_reduce:3:1", "3"),
        ("alltoallw", "1@all_to_all:3:1", "3"),
        ("alltoallw", "1@all_to_all:3:2", "4"),
        ("scan", "1@scan:3:1", "3"),
        ("exscan", "1@exscan:3:1", "3"),
    ] {
        let report = scenario_with("collectives_kill", 4, &[name, latest], &[kill], &[1]);
        for rank in [0, 2, 3] {
            assert!(
                report
                    .stdout_of(rank)
                    .iter()
                    .any(|line| line.starts_with(&format!("rank {rank}: {name} failed in round"))),
                "{name}: rank {rank}"
            );
        }
    }
}

/// `tests/c/matched_probe.c`: MPI_Mprobe / MPI_Improbe take their message out of matching,
/// MPI_Mrecv / MPI_Imrecv receive it (truncation, MPI_MESSAGE_NO_PROC, bad handles);
/// MPI_Cancel withdraws an unmatched receive only (MPI_Test_cancelled); then rank 2 dies:
/// probes of it fail (never wait for ever) until validate_global, then give MPI_MESSAGE_NO_PROC.
#[test]
fn matched_probe_and_cancel() {
    scenario("matched_probe", 3, &[2]);
}

/// `tests/c/initial_errhandler.c`: the initial error handler, by default and with
/// RT_INITIAL_ERRHANDLER=mpi_errors_return (what `rtrun --initial-errhandler` sets): in
/// MPI_INFO_ENV, on MPI_COMM_WORLD and MPI_COMM_SELF, and a bad call then returns.
#[test]
fn initial_error_handler() {
    let _one = one_job_at_a_time();
    let program = compile("initial_errhandler");
    run_checked("initial_errhandler", program.clone(), 2, &[], &[], &[]);
    let mut job = Job::new(2, program.clone());
    job.args = vec!["mpi_errors_return".into()];
    job.env
        .push(("RT_INITIAL_ERRHANDLER".into(), "MPI_ERRORS_RETURN".into()));
    run_job("initial_errhandler", job, &[]);
    let mut job = Job::new(2, program);
    job.args = vec!["mpi_errors_abort".into()];
    job.env
        .push(("RT_INITIAL_ERRHANDLER".into(), "mpi_errors_abort".into()));
    run_job("initial_errhandler", job, &[]);
}

/// `tests/c/request_status.c`: MPI_Request_get_status looks without freeing (a receive, a
/// persistent receive, an MPI_Ibarrier request, MPI_REQUEST_NULL), MPI_Wait then gives the
/// same status; with rank 2 dead, a receive from it is complete with MPIX_ERR_PROC_FAILED and
/// a wildcard receive is not (MPIX_ERR_PROC_FAILED_PENDING); bad input.
#[test]
fn request_get_status() {
    scenario("request_status", 3, &[2]);
}

/// The OSU-style loops of `crates/runthrough-bench/c/ompi_bench.c` (written for Open MPI with
/// ULFM: latency, bandwidth, barrier, all-reduce, agree, shrink; then a rank that SIGKILLs
/// itself while the others wait in MPI_Recv from it, and the ack + agree + shrink after) build
/// unchanged with rtcc and run under rtrun: every row on rank 0's output.
#[test]
fn osu_style_benchmark_loops() {
    let _one = one_job_at_a_time();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runthrough-bench/c/ompi_bench.c");
    let program = compile_source("ompi_bench", &source, None);
    let mut job = Job::new(2, program.clone());
    job.args = ["collectives", "1", "100"].iter().map(Into::into).collect();
    job.timeout = Some(JOB_LIMIT);
    let report = rtrun::run(&job).expect("the job starts");
    let text = output(&report);
    assert!(
        report
            .ranks
            .iter()
            .all(|r| r.ending == Some(Ending::Exited(0))),
        "{}{text}",
        report.summary()
    );
    for op in [
        "p2p_latency",
        "p2p_bandwidth",
        "barrier",
        "all_reduce",
        "agree",
        "shrink",
    ] {
        let row = format!("{{\"op\":\"{op}\"");
        assert!(
            report.stdout_of(0).iter().any(|l| l.starts_with(&row)),
            "{op}\n{text}"
        );
    }
    let stamp = std::env::temp_dir().join(format!("rt-ompi-bench-{}", std::process::id()));
    let mut job = Job::new(3, program);
    job.args = vec!["fault".into(), stamp.clone().into()];
    job.timeout = Some(JOB_LIMIT);
    let report = rtrun::run(&job).expect("the job starts");
    let _ = std::fs::remove_file(&stamp);
    let text = output(&report);
    assert!(report.ranks[2].failed(), "{}{text}", report.summary());
    for rank in [0, 1] {
        assert_eq!(
            report.ranks[rank].ending,
            Some(Ending::Exited(0)),
            "{}{text}",
            report.summary()
        );
    }
    for op in ["detection", "recovery", "recovery_after_detection"] {
        let row = format!("{{\"op\":\"{op}\"");
        assert!(
            report.stdout_of(0).iter().any(|l| l.starts_with(&row)),
            "{op}: {:?}",
            report.stdout_of(0)
        );
    }
}

/// `tests/c/nonblocking.c`: the fifteen non-blocking collectives pending at once on 4 ranks,
/// each result checked; pending ones never hold up point-to-point traffic; a blocking
/// collective after them; MPI_Test; a communicator freed while one is pending; bad input (the
/// communicator and request refused by the start, the rest reported by MPI_Wait through the
/// error handler there); MPI_Request_free of a pending one refused.
#[test]
fn nonblocking_collectives() {
    scenario("nonblocking", 4, &[]);
}

/// `tests/c/nonblocking_engine.c`: the non-blocking collectives that the engine runs itself
/// (MPI_Ibarrier, MPI_Ibcast; MPI_Ireduce, MPI_Iallreduce, MPI_Iscan, MPI_Iexscan on basic
/// datatypes) with buffers at every misalignment, in place or not, and a strided broadcast;
/// mixed with all-reduces with a user operation (whose function runs outside the engine),
/// pending ones among them, and with 64 KiB ring all-reduces and an iagree placed
/// differently, each call gets its own result (calls that took each other's messages fail a
/// check or hang); a user operation's step runs while its rank is blocked in MPI_Recv (the
/// test hangs otherwise); MPI_Test until done, MPI_Request_free and MPI_Cancel of a pending
/// one refused.
#[test]
fn nonblocking_collectives_run_by_the_engine() {
    scenario("nonblocking_engine", 3, &[]);
}

/// `tests/c/nonblocking_blocks.c`: the non-blocking gathers, scatters, all-gathers and
/// all-to-alls (fixed and varcount forms, `MPI_Ialltoallw`), run by the engine whatever their
/// datatypes: strided vectors at one side and ints at the other, blocks in reverse order with
/// gaps, `MPI_IN_PLACE`, types that differ between ranks; each result equal byte for byte to
/// the blocking call's, pending beside a 64 KiB all-reduce in any completion order.
#[test]
fn nonblocking_gathers_scatters_and_all_to_alls_of_any_datatype() {
    scenario("nonblocking_blocks", 4, &[]);
}

/// `tests/c/nonblocking_blocks_kill.c`: rtrun kills rank 2 in its second gather, before its
/// block leaves: the root's MPI_Igatherv (received as strided vectors) fails with
/// MPIX_ERR_PROC_FAILED and leaves its buffer as it was, nothing hangs, new calls fail until
/// MPI_Comm_validate_global, then gathers and all-gathers run over the survivors with rank
/// 2's slots untouched.
#[test]
fn nonblocking_gathers_with_a_kill() {
    scenario_with("nonblocking_blocks_kill", 4, &[], &["2@gather:2:1"], &[2]);
}

/// `tests/c/nonblocking_engine_kill.c`: rtrun kills rank 2 in its second broadcast, before
/// it forwards the root's data to rank 3, with a strided MPI_Ibcast, an MPI_Iscan and an
/// MPI_Ibarrier pending (all run by the engine): nothing hangs, rank 3's broadcast fails with
/// MPIX_ERR_PROC_FAILED and leaves its buffer untouched, later ones fail until
/// MPI_Comm_validate_global and then run over the survivors.
#[test]
fn nonblocking_collectives_run_by_the_engine_with_a_kill() {
    scenario_with(
        "nonblocking_engine_kill",
        4,
        &[],
        &["2@broadcast:2:1"],
        &[2],
    );
}

/// `tests/c/nonblocking_kill.c`: rtrun kills rank 1 inside its third all-reduce, the schedule
/// of its third MPI_Iallreduce (run by its engine): every survivor's MPI_Wait returns
/// MPIX_ERR_PROC_FAILED by that round (never a hang), a new one fails until validate_global,
/// and after it they run over the survivors.
#[test]
fn nonblocking_collectives_kill() {
    let report = scenario_with("nonblocking_kill", 4, &[], &["1@all_reduce:3:1"], &[1]);
    for rank in [0, 2, 3] {
        assert!(
            report
                .stdout_of(rank)
                .iter()
                .any(|line| line.starts_with(&format!("rank {rank}: iallreduce failed in round"))),
            "rank {rank}"
        );
    }
}

/// `tests/c/user_op.c`: user reduction operations (`MPI_Op_create`, `_free`, `_commutative`):
/// a non-commutative one (2x2 matrix product on a contiguous type) through MPI_Allreduce,
/// MPI_Reduce (root not 0), MPI_Scan, MPI_Exscan, MPI_Iallreduce, in place where MPI allows it,
/// checked against the product in rank order; decimal concatenation on MPI_INT through the
/// reduce-scatters and on a strided vector type; a commutative one; bad input;
/// `MPI_Get_elements`. Then rank 2 dies: MPIX_ERR_PROC_FAILED at every survivor until
/// validate_global, then the survivors' product in rank order.
#[test]
fn user_reduction_operations() {
    let report = scenario("user_op", 4, &[2]);
    for rank in [0, 1, 3] {
        let line = format!("rank {rank}: user operations over the survivors");
        assert!(
            report.stdout_of(rank).contains(&line.as_str()),
            "rank {rank}"
        );
    }
}

/// `tests/c/comm_info.c`: MPI_Initialized / MPI_Finalized around MPI_Init and MPI_Finalize,
/// MPI_Wtick, MPI_Get_processor_name (the host's name), MPI_Comm_compare (IDENT, CONGRUENT,
/// SIMILAR, UNEQUAL), MPI_Comm_set_name / _get_name, MPI_Comm_get_attr, MPI_Dims_create, with
/// bad input; the local calls keep working while rank 2's death is known and not handled.
#[test]
fn comm_info() {
    scenario("comm_info", 3, &[2]);
}
/// Issue 14, item 4, `tests/c/print_then_die.c`: a line a rank printed just before
/// `raise(SIGKILL)`, without flushing, reaches rtrun's output, whether printed before
/// `MPI_Init` (rank 1) or after it (rank 2): the library makes `stdout` line-buffered when it
/// loads, so a pipe to rtrun loses no complete line.
#[test]
fn a_line_printed_before_raise_sigkill_reaches_the_output() {
    let report = scenario("print_then_die", 4, &[1, 2]);
    let text = output(&report);
    for (rank, line) in [
        (1, "rank 1: a line before MPI_Init, then SIGKILL"),
        (2, "rank 2: a line after MPI_Init, then SIGKILL"),
    ] {
        assert_eq!(
            report.ranks[rank as usize].ending,
            Some(Ending::Signaled(9)),
            "{}{text}",
            report.summary()
        );
        assert!(
            report.stdout_of(rank).contains(&line),
            "rank {rank}\n{text}"
        );
    }
}

/// The README's C quick start, `examples/c/allreduce_ft.c`, as the README runs it:
/// `rtrun -n 4 --strict-faults --kill 1@call:8`. The fault fires, and ranks 0, 2 and 3 redo
/// the round it broke and end with the survivors' sum (1 + 3 + 4) and exit status 0.
#[test]
fn the_readme_c_example_survives_its_kill() {
    let _one = one_job_at_a_time();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/c/allreduce_ft.c");
    let mut job = Job::new(4, compile_source("allreduce_ft", &source, None));
    job.kills = vec!["1@call:8".parse::<Kill>().unwrap()];
    job.timeout = Some(JOB_LIMIT);
    job.tag_output = false;
    let report = rtrun::run(&job).expect("the job starts");
    let text = output(&report);
    let strict = rtrun::Strict {
        deaths: false,
        faults: true,
    };
    assert_eq!(
        report.exit_status_with(strict),
        0,
        "{}{text}",
        report.summary()
    );
    assert_eq!(report.unfired().count(), 0, "{}", report.summary());
    assert!(report.ranks[1].failed(), "{}{text}", report.summary());
    for rank in [0, 2, 3] {
        let line = report
            .stdout_of(rank)
            .into_iter()
            .find(|l| l.starts_with(&format!("rank {rank}: 20 rounds")))
            .unwrap_or_else(|| panic!("rank {rank}\n{text}"));
        assert!(line.ends_with("sum 8, 1 failed"), "{line}\n{text}");
        assert!(
            !line.contains("(0 redone)"),
            "the kill broke a round: {line}"
        );
    }
}

/// `tests/c/stencil_cart.c`: a 2D Jacobi stencil on a 3x2 Cartesian communicator (periodic in
/// y), row and column halos as contiguous and vector datatypes exchanged by MPI_Sendrecv and by
/// MPI_Isend / MPI_Irecv, the residual by MPI_Allreduce; every rank's block and the residual
/// equal a sequential reference; the grid queries and MPI_Cart_sub.
#[test]
fn stencil_cart() {
    let report = scenario("stencil_cart", 6, &[]);
    assert!(report
        .stdout_of(0)
        .iter()
        .any(|line| line.starts_with("grid 3x2, 60 iterations")));
}

/// `tests/c/stencil_cart.c kill`: rtrun kills rank 1 inside the stencil's loop (its 150th
/// communication call) on a 2x2 grid: every survivor leaves the loop with MPIX_ERR_PROC_FAILED
/// (a neighbour's exchange, or the residual's all-reduce) or MPIX_ERR_REVOKED (the revocation
/// by a rank that saw the failure), never hangs, and all agree on the failure and shrink.
#[test]
fn stencil_cart_kill() {
    let report = scenario_with("stencil_cart", 4, &["kill"], &["1@call:150"], &[1]);
    let mut failed_seen = 0;
    for rank in [0, 2, 3] {
        let line = report
            .stdout_of(rank)
            .into_iter()
            .find(|line| line.starts_with(&format!("rank {rank}: stopped in iteration")))
            .unwrap_or_else(|| panic!("rank {rank}: {}", output(&report)));
        if line.ends_with("MPIX_ERR_PROC_FAILED") {
            failed_seen += 1;
        }
    }
    assert!(failed_seen >= 1, "{}", output(&report));
}

/// `tests/c/master_worker.c`: a master hands out tasks and collects results with MPI_Waitany
/// and MPI_Testsome (results as a contiguous derived type), MPI_Gatherv of who did what,
/// MPI_MAXLOC / MPI_MINLOC on the pair types in MPI_Allreduce / MPI_Reduce / MPI_Scan (ties,
/// several pairs, MPI_IN_PLACE), pair types in MPI_Sendrecv, and the error classes of a wrong
/// operation, type, count or buffer.
#[test]
fn master_worker() {
    let report = scenario("master_worker", 5, &[]);
    let master = report.stdout_of(0);
    assert!(
        master
            .iter()
            .any(|line| line.starts_with("master: 57 tasks")),
        "{}",
        output(&report)
    );
    assert!(master.iter().any(|line| line.starts_with("largest value")));
}

/// `tests/c/topo_types.c`: Cartesian edge cases (a grid smaller than the communicator, zero
/// dimensions, MPI_Cart_sub keeping nothing, MPI_Comm_dup keeping the grid, long shifts) and
/// the data derived types move (nested, hvector, vectors of pairs, short messages, truncation,
/// MPI_Irecv + MPI_Test, MPI_Sendrecv_replace, MPI_Isend, MPI_Bcast, reductions, subarray and
/// resized types in MPI_Gather(v) / MPI_Scatter(v) / MPI_Allgather(v) / MPI_Alltoall(v)), with
/// bad input to every new call: bad dims, NULL pointers, no grid, uncommitted and freed types,
/// operations that do not apply (MPI_ERR_OP); MPI_Pack / MPI_Unpack around the ring; indexed
/// types and their bounds.
#[test]
fn topo_types() {
    scenario("topo_types", 3, &[]);
}

/// `tests/c/collectives_v.c`: MPI_Allgatherv, MPI_Alltoallv, MPI_Reduce_scatter_block and
/// MPI_Reduce_scatter give MPI's values (uneven and zero counts, displacements out of order
/// with gaps, MPI_IN_PLACE, MPI_MINLOC on pairs) and bad input its error class; with rank 3
/// dead: MPIX_ERR_PROC_FAILED at every survivor until validate_global, then the survivors only
/// (its slots untouched, no contribution from it).
#[test]
fn collectives_v() {
    scenario("collectives_v", 4, &[3]);
}

/// `tests/c/alltoallw.c`: MPI_Alltoallw and MPI_Ialltoallw with a type per block (plain and
/// strided, byte displacements out of order with gaps), MPI_IN_PLACE, MPI_BOTTOM with struct
/// types at absolute addresses (also in point-to-point and MPI_Bcast), bad input's error
/// classes; with rank 3 dead: MPIX_ERR_PROC_FAILED at every survivor until validate_global,
/// then the survivors only (its blocks untouched).
#[test]
fn alltoallw() {
    scenario("alltoallw", 4, &[3]);
}

/// `tests/c/negative_bounds.c`: derived types with negative lower bounds, displacements,
/// strides and extents (resized, vector, hindexed, contiguous and struct types): their bounds
/// and true bounds (`MPI_Type_get_extent`, `_true_extent`, the `_x` forms), point to point
/// (blocking and not), MPI_Bcast, MPI_Allreduce (in place too) and MPI_Reduce with MPI_SUM,
/// the reduce-scatters, MPI_Gather into a type of negative extent, MPI_Allgather, MPI_Pack / MPI_Unpack, every value
/// and the bytes outside the typemaps checked; overflowing bounds an error class.
#[test]
fn negative_bounds() {
    scenario("negative_bounds", 3, &[]);
}

/// `tests/c/reverse_isends.c`: 40 isends of 64 KiB received last tag first (blocking, posted
/// first, after MPI_Probe / MPI_Iprobe, by MPI_Mprobe / MPI_Improbe), 2.5 times the sender's
/// 1 MiB window under `RT_UNEXPECTED_CAP=2M` (within the window plus the cap, what loans may
/// reach): every message arrives once with its tag (flow control's loans, over both process
/// transports).
#[test]
fn reverse_isends() {
    let _one = one_job_at_a_time();
    let program = compile("reverse_isends");
    for transport in ["shm", "unix"] {
        let mut job = Job::new(2, program.clone());
        job.env = vec![
            ("RT_UNEXPECTED_CAP".into(), "2M".into()),
            ("RT_TRANSPORT".into(), transport.into()),
        ];
        run_job("reverse_isends", job, &[]);
    }
}

/// `tests/c/info.c`: info objects (before MPI_Init, while running, after MPI_Finalize),
/// MPI_INFO_ENV with the job's arguments and size, the communicator calls that take an info,
/// and bad input.
#[test]
fn info() {
    scenario_with("info", 3, &["alpha", "beta"], &[], &[]);
}

/// `tests/c/split_type.c`: MPI_Comm_split_type by host (every rank here), MPI_UNDEFINED, the
/// hardware types, on MPI_COMM_SELF and a sub-communicator, with bad input.
#[test]
fn split_type() {
    scenario("split_type", 4, &[]);
}

/// `tests/c/split_type.c kill`: rank 1 killed by rtrun before the call; MPI_Comm_split_type
/// fails as MPI_Comm_split does until MPI_Comm_validate_global, then holds the survivors.
#[test]
fn split_type_kill() {
    scenario_with("split_type", 4, &["kill"], &["1@0.5"], &[1]);
}

/// `tests/c/split_type.c during`: rank 1 killed by rtrun inside MPI_Comm_split_type, at the
/// all-gather's entry, before its second message, and in the agreement on its outcome: every
/// survivor fails alike, then splits without it after MPI_Comm_validate_global.
#[test]
fn split_type_kill_during_the_call() {
    for kill in ["1@all_gather:1", "1@all_gather:1:2", "1@agreement:1:2"] {
        scenario_with("split_type", 4, &["during"], &[kill], &[1]);
    }
}

/// `tests/c/errors.c`: every error class's string, classes and codes added by the program,
/// MPI_Wtick against MPI_Wtime's resolution, bad input.
#[test]
fn errors() {
    scenario("errors", 2, &[]);
}

const RTCXX: &str = env!("CARGO_BIN_EXE_rtcxx");

/// Runs a compiler wrapper with `args`, no compiler variable set; its exit code and stdout.
fn wrapper(program: &str, args: &[&str], vars: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut command = Command::new(program);
    for var in ["RTCC_CC", "CC", "RTCXX_CXX", "CXX"] {
        command.env_remove(var);
    }
    command.envs(vars.iter().copied()).args(args);
    let output = command.output().expect("the wrapper runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// `rtcc --help` and `rtcxx --help` print their own usage, naming their options, and run no
/// compiler.
#[test]
fn the_wrappers_print_their_help() {
    for (program, name, compiler) in [(RTCC, "rtcc", "$CC"), (RTCXX, "rtcxx", "$CXX")] {
        for flag in ["--help", "-help"] {
            let (code, out) = wrapper(program, &[flag, "-o", "never"], &[]);
            assert_eq!(code, Some(0), "{name} {flag}");
            assert!(out.starts_with(&format!("usage: {name} ")), "{out}");
            for word in [
                "-show",
                "-showme",
                "-showme:compile",
                "-showme:link",
                compiler,
            ] {
                assert!(
                    out.contains(word),
                    "{name} {flag} does not mention {word}:\n{out}"
                );
            }
        }
    }
}

/// `rtcc -show` (and `-showme`, anywhere among the arguments) prints the compiler line, one
/// shell line, without running it; `-showme:compile` and `-showme:link` print its parts. The
/// printed line, run by a shell, builds a program that runs under rtrun.
#[test]
fn rtcc_show_prints_the_line_it_runs() {
    let _one = one_job_at_a_time();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c-programs");
    std::fs::create_dir_all(&dir).unwrap();
    let program = dir.join("shown sendrecv");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/sendrecv.c");
    let _ = std::fs::remove_file(&program);
    let args = [
        "-Wl,--disable-new-dtags",
        source.to_str().unwrap(),
        "-o",
        program.to_str().unwrap(),
    ];
    let (code, shown) = wrapper(RTCC, &[&["-show"], &args[..]].concat(), &[]);
    assert_eq!(code, Some(0));
    assert!(!program.exists(), "-show compiled");
    assert_eq!(shown.lines().count(), 1, "{shown}");
    let shown = shown.trim_end();
    assert!(shown.starts_with("cc -I"), "{shown}");
    assert!(shown.contains(" -lrunthrough_c "), "{shown}");
    assert!(
        shown.contains("'"),
        "the path with a space is quoted: {shown}"
    );
    let include = shown.split(' ').find_map(|w| w.strip_prefix("-I"));
    assert!(
        Path::new(include.unwrap()).join("mpi.h").is_file(),
        "{shown}"
    );
    // The same line from -showme at the end, and with RTCC_CC.
    let (_, showme) = wrapper(RTCC, &[&args[..], &["-showme"]].concat(), &[]);
    assert_eq!(showme.trim_end(), shown);
    let (_, other) = wrapper(
        RTCC,
        &[&["--show"], &args[..]].concat(),
        &[("RTCC_CC", "gcc")],
    );
    assert_eq!(other.trim_end(), format!("gcc{}", &shown[2..]));
    // The parts.
    let (_, compile) = wrapper(RTCC, &["-showme:compile"], &[]);
    let (_, link) = wrapper(RTCC, &["-link_info"], &[]);
    assert!(
        compile.trim_end().starts_with("-I") && !compile.contains("-l"),
        "{compile}"
    );
    assert!(
        link.trim_end().starts_with("-L") && link.contains("-lrunthrough_c"),
        "{link}"
    );
    assert!(shown.contains(compile.trim_end()) && shown.ends_with(link.trim_end()));
    // A compile alone adds no link flags.
    let (_, only_compile) = wrapper(RTCC, &["-show", "-c", "x.c"], &[]);
    assert_eq!(
        only_compile.trim_end(),
        format!("cc {} -c x.c", compile.trim_end())
    );
    // Run by a shell, the line builds the program.
    let status = Command::new("sh")
        .arg("-c")
        .arg(shown)
        .status()
        .expect("sh runs");
    assert!(status.success(), "{shown}");
    run_checked("sendrecv", program, 4, &[], &[], &[]);
}

/// `rtcxx` builds a C++ program with the C++ compiler (`c++` unless `$RTCXX_CXX`),
/// and the program runs under rtrun.
#[test]
fn rtcxx_builds_a_cxx_program() {
    let (code, shown) = wrapper(RTCXX, &["-showme", "ring.cpp"], &[]);
    assert_eq!(code, Some(0));
    assert!(
        shown.starts_with("c++ -I") && shown.contains(" ring.cpp "),
        "{shown}"
    );
    // `$CXX` is not the wrapper's compiler (a build passing CXX=rtcxx on would make it run
    // itself): only `$RTCXX_CXX` is.
    let (_, shown) = wrapper(RTCXX, &["-show", "ring.cpp"], &[("CXX", "g++")]);
    assert!(shown.starts_with("c++ -I"), "{shown}");
    let (_, shown) = wrapper(
        RTCXX,
        &["-show"],
        &[("CXX", "g++"), ("RTCXX_CXX", "clang++")],
    );
    assert!(shown.starts_with("clang++ -I"), "{shown}");

    let _one = one_job_at_a_time();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c-programs");
    std::fs::create_dir_all(&dir).unwrap();
    let program = dir.join("cxx_ring_rtcxx");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/cxx_ring.cpp");
    let output = Command::new(RTCXX)
        .env_remove("RTCXX_CXX")
        .env_remove("CXX")
        .args(["-Wl,--disable-new-dtags", "-Wall", "-Werror"])
        .arg(&source)
        .arg("-o")
        .arg(&program)
        .output()
        .expect("rtcxx runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    run_checked("cxx_ring", program, 3, &[], &[], &[]);
}

/// `tests/c/init_thread.c`: MPI_Init_thread's arguments, MPI_THREAD_MULTIPLE provided, and
/// four threads per rank passing tokens around the ring at once.
#[test]
fn init_thread() {
    scenario("init_thread", 3, &[]);
}

/// `tests/c/struct_type.c`: MPI_Type_create_struct for struct { int; double; char[3]; } by
/// offsetof and by MPI_Get_address (extent = sizeof, true extent, size), arrays of it in
/// point-to-point, collectives and MPI_Pack, nested in a contiguous type; MPI_Type_struct; bad
/// input (error classes); a receive of it from a rank that died.
#[test]
fn struct_type() {
    scenario("struct_type", 3, &[2]);
}

/// `tests/c/intercomm.c`: MPI_Intercomm_create between the even and odd ranks, the local and
/// remote queries, point-to-point across it in remote ranks (blocking, non-blocking, wildcard,
/// Sendrecv, probes), MPI_Intercomm_merge's order with either group high, MPI_Comm_free, and
/// wrong use (MPI_ERR_RANK, MPI_ERR_COMM).
#[test]
fn intercomm() {
    scenario("intercomm", 4, &[]);
    let _one = one_job_at_a_time();
    run_checked("intercomm", compile("intercomm"), 6, &[], &[], &[]);
}

/// `tests/c/spawn.c` under rtrun with a universe of 12: MPI_Comm_spawn of this program
/// (arguments, info `wdir`, error codes), MPI_Comm_get_parent and MPI_Comm_disconnect at the
/// children, messages and MPI_Intercomm_merge across the new intercommunicator, the errors
/// (maxprocs 0 at the root, a missing program, a full universe) and MPI_Comm_spawn_multiple.
/// Every spawned process exits 0; the report lists them.
#[test]
fn spawn() {
    let _one = one_job_at_a_time();
    let mut job = Job::new(4, compile("spawn"));
    job.universe_size = Some(12);
    // World rank 6, the missing program, never started (it counts as called off).
    let report = run_job("spawn", job, &[6]);
    assert!(
        report.ranks[6].cancelled && report.success(),
        "{}",
        report.summary()
    );
    let text = output(&report);
    let spawned: Vec<u32> = report
        .ranks
        .iter()
        .filter(|r| r.spawned_by.is_some())
        .map(|r| r.rank)
        .collect();
    // 4, 5: the children; 6: the missing program (never started); 7, 8: spawn_multiple.
    assert_eq!(spawned, [4, 5, 6, 7, 8], "{text}");
    for child in [4, 5] {
        assert!(
            report
                .stdout_of(child)
                .iter()
                .any(|l| l.starts_with("child ")),
            "{text}"
        );
    }
    for child in [7, 8] {
        assert!(
            report
                .stdout_of(child)
                .iter()
                .any(|l| l.starts_with("multiple ")),
            "{text}"
        );
    }
}

/// `tests/c/respawn.c`: ULFM's respawn recovery (revoke, shrink, find the dead, spawn as
/// many, merge, split with the old numbers) after rank 2 dies: the repaired communicator has
/// 5 ranks again, the replacement (world rank 5) in rank 2's place.
#[test]
fn respawn() {
    let report = scenario("respawn", 5, &[2]);
    assert_eq!(report.ranks.len(), 6, "{}", report.summary());
    assert_eq!(report.ranks[5].spawned_by, Some(vec![0, 1, 3, 4]));
    assert!(report.stdout_of(5).contains(&"replacement of rank 2"));
    assert!(report.stdout_of(0).contains(&"repaired: 5 ranks"));
}

/// `tests/c/intercomm_kill.c`: a remote rank dies: point-to-point with it is
/// MPIX_ERR_PROC_FAILED, the others still talk; merge and a new creation fail at every
/// survivor without a hang; after MPI_Comm_validate_global new groups make a working one.
#[test]
fn intercomm_kill() {
    scenario("intercomm_kill", 4, &[3]);
}

/// `tests/c/ssend.c`: MPI_Issend stays pending (MPI_Test) until the receiver, which waits for
/// a later message of the sender first, matches it; MPI_Ssend's next message cannot overtake
/// the match; a receive posted first matches on arrival; order with ordinary messages;
/// oneself and MPI_PROC_NULL.
/// Run on each transport: Unix sockets (the default), shared memory and TCP.
#[test]
fn ssend() {
    scenario("ssend", 3, &[]);
    let _one = one_job_at_a_time();
    let program = compile("ssend");
    for transport in ["shm", "tcp"] {
        let mut job = Job::new(3, program.clone());
        job.env = vec![("RT_TRANSPORT".into(), transport.into())];
        run_job(&format!("ssend over {transport}"), job, &[]);
    }
}

/// `tests/c/ssend_kill.c`: the destination of an MPI_Issend and of an MPI_Ssend dies before
/// matching them: MPIX_ERR_PROC_FAILED, no hang; live ranks still complete synchronous sends.
#[test]
fn ssend_kill() {
    scenario("ssend_kill", 3, &[1]);
}

/// `tests/c/suite_fixes.c`: what mpi4py's test suite relies on: error handler references
/// (MPI_Comm_get_errhandler / MPI_Errhandler_free, predefined handlers included), the counts
/// and displacements of non-blocking vector collectives read at the start (freed before
/// MPI_Wait), and MPI_COMM_TYPE_HW_GUIDED with the mpi_shared_memory hint.
#[test]
fn suite_fixes() {
    scenario("suite_fixes", 4, &[]);
}
