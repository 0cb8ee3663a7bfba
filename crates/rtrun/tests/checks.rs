// SPDX-License-Identifier: MIT OR Apache-2.0
//! rtrun checks everything before it starts a rank (SPEC §4 "Bad settings"; issue 14's
//! findings): a bad fault, setting, option or program is refused with a message naming the
//! offending text and exit status 2, and no rank runs. The job's program would leave a file
//! behind if it ran.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use runthrough::fault::BareNumber;
use runthrough::FaultPlan;

const RTRUN: &str = env!("CARGO_BIN_EXE_rtrun");

/// A fresh directory for one test's marker files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rtrun-checks-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// rtrun with `args` (which end with a program), `env` added to a clean `RT_*` environment.
fn rtrun(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(RTRUN);
    command.args(args);
    for (name, _) in std::env::vars().filter(|(n, _)| n.starts_with("RT_")) {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    command.output().expect("rtrun runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The program rtrun would start: it leaves `marker` behind.
fn marker_program(marker: &Path) -> Vec<String> {
    vec![
        "/bin/sh".into(),
        "-c".into(),
        format!("touch {}", marker.display()),
    ]
}

/// Options before the program, environment, the text the message must hold.
type Case = (
    Vec<&'static str>,
    Vec<(&'static str, &'static str)>,
    &'static str,
);

/// Each bad input of issue 14: exit 2, the offending text in the message, nothing started.
#[test]
fn bad_input_is_refused_before_anything_starts_naming_it() {
    let dir = scratch("bad");
    let not_executable = dir.join("not-executable");
    std::fs::write(&not_executable, "#!/bin/sh\n").unwrap();
    let not_executable = not_executable.display().to_string();
    let marker = dir.join("started");
    let cases: Vec<Case> = vec![
        (vec!["--kill", "7@0.1", "-n", "4"], vec![], "7@0.1"),
        // Ranks a spawn may start (up to the universe) can be killed at a call, not at a time.
        (vec!["-n", "4", "--kill", "5@0.1"], vec![], "not at a time"),
        (vec!["-n", "4", "--kill", "8@call:1"], vec![], "rank 8"),
        (
            vec!["-n", "4", "--universe-size", "6", "--kill", "6@call:1"],
            vec![],
            "rank 6",
        ),
        (
            vec!["-n", "4", "--universe-size", "2"],
            vec![],
            "--universe-size 2",
        ),
        (vec!["-n", "4", "--stop", "9@0.1"], vec![], "rank 9"),
        (vec!["-n", "4", "--stop", "1@call:2"], vec![], "1@call:2"),
        (
            vec!["-n", "4", "--kill", "1@frobnicate:3"],
            vec![],
            "1@frobnicate:3",
        ),
        (vec!["-n", "4", "--kill", "1@call:0"], vec![], "1@call:0"),
        (
            vec!["-n", "4", "--kill", "1@validate_global:x:y"],
            vec![],
            "1@validate_global:x:y",
        ),
        (
            vec!["-n", "4", "--kill", "2@0.5,1@call:0"],
            vec![],
            "1@call:0",
        ),
        (
            vec!["-n", "4", "--kill", "3@iteration:5"],
            vec![],
            "the application's",
        ),
        (
            vec!["-n", "2"],
            vec![("RT_UNEXPECTED_CAP", "abc")],
            "RT_UNEXPECTED_CAP=\"abc\"",
        ),
        (
            vec!["-n", "2"],
            vec![("RT_UNEXPECTED_CAP", "0")],
            "at least 1 byte",
        ),
        (
            vec!["-n", "2"],
            vec![("RT_TRANSPORT", "foo")],
            "RT_TRANSPORT=\"foo\"",
        ),
        (
            vec!["-n", "2"],
            vec![("RT_BIND", "nonsense")],
            "RT_BIND=\"nonsense\"",
        ),
        (
            vec!["-n", "2"],
            vec![("RT_HEARTBEAT", "garbage")],
            "RT_HEARTBEAT=\"garbage\"",
        ),
        (
            vec!["-n", "2"],
            vec![("RT_FAULT", "call:0")],
            "RT_FAULT=\"call:0\"",
        ),
        (
            vec!["-n", "2"],
            vec![("RT_VERBOSE", "yes")],
            "RT_VERBOSE=\"yes\"",
        ),
        (vec!["-n", "2"], vec![("RT_PMI", "3")], "RT_PMI=\"3\""),
        (vec!["-n", "2", "--heartbeat", "garbage"], vec![], "garbage"),
        (vec!["-n", "2", "--bind", "nonsense"], vec![], "nonsense"),
        (vec!["-n", "2", "--frobnicate"], vec![], "--frobnicate"),
        (vec!["-n", "-1"], vec![], "`-1` is not a number of ranks"),
        (vec!["-n", "0"], vec![], "at least 1 rank"),
        (
            vec!["-n", "2", "--wrap", "1=no-such-wrapper-here"],
            vec![],
            "no-such-wrapper-here",
        ),
    ];
    for (options, env, want) in &cases {
        let mut args: Vec<String> = options.iter().map(|s| s.to_string()).collect();
        args.extend(marker_program(&marker));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = rtrun(&args, env);
        let message = stderr(&output);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{options:?} {env:?}: {message}"
        );
        assert!(message.contains(want), "{options:?} {env:?}: {message}");
        assert!(!message.contains("does not parse"), "{message}");
        assert!(!message.contains("0..=4294967295"), "{message}");
        assert!(!marker.exists(), "{options:?} {env:?}: a rank ran");
    }
    // A missing or non-executable program, named.
    for (program, want) in [
        ("./no-such-program", "./no-such-program: no such file"),
        (
            "no-such-program-on-path",
            "no-such-program-on-path: not found on PATH or in the current directory",
        ),
        (not_executable.as_str(), "not executable"),
    ] {
        let output = rtrun(&["-n", "2", program], &[]);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{program}: {message}");
        assert!(message.contains(want), "{program}: {message}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An `RT_*` name that is no setting is likely a typo: a warning, and the job runs.
#[test]
fn an_unknown_setting_is_a_warning() {
    let dir = scratch("warning");
    let marker = dir.join("started");
    let program = marker_program(&marker);
    let mut args = vec!["-n", "1"];
    args.extend(program.iter().map(String::as_str));
    let output = rtrun(&args, &[("RT_TRANSPROT", "tcp")]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{message}");
    assert!(
        message.contains("warning: RT_TRANSPROT is not a runthrough setting"),
        "{message}"
    );
    assert!(marker.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// mpirun's `-np N` works as `-n N`, and only among rtrun's options: the program's own `-np`
/// reaches it unchanged, also after Open MPI's `--with-ft mpi` (taken, fault tolerance being
/// always on; a kind Open MPI lacks is refused). A program without `/` is found on PATH, as
/// mpirun finds it.
#[test]
fn np_is_taken_like_n_and_programs_are_found_on_path() {
    let refused = rtrun(&["-n", "2", "--with-ft", "maybe", "true"], &[]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let args = [
        "--with-ft",
        "mpi",
        "-np",
        "3",
        "--tag-output",
        "echo",
        "-np",
        "5",
    ];
    let output = rtrun(&args, &[]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{message}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(stdout.matches("-np 5").count(), 3, "{stdout}");
    assert!(message.contains("3 ranks, 3 exited 0"), "{message}");

    // A program in the current directory and not on PATH, named without `./`, as CMake's test
    // commands name it: found there, as Open MPI's mpirun finds it.
    let dir = std::env::temp_dir().join(format!("rt-cwd-program-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("rt_here_program");
    std::fs::write(&script, "#!/bin/sh\necho here \"$@\"\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let output = Command::new(RTRUN)
        .args(["-n", "2", "rt_here_program", "x"])
        .current_dir(&dir)
        .output()
        .expect("rtrun runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(stdout.matches("here x").count(), 2, "{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The guide's examples of what is refused (docs/src/faults.md).
const MALFORMED: [&str; 2] = ["1@frobnicate:3", "1@call:0"];

/// Every fault example in the README, in the guide's pages (`docs/src/*.md`) and in
/// `rtrun --help` is in the one grammar; the
/// examples' own (`heat`, `bag_of_tasks` lines) also read with a bare number as a step; every
/// `RT_*=VALUE` example is a setting rtrun accepts.
#[test]
fn every_fault_and_setting_example_in_the_readme_and_help_parses() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut paths = vec![std::path::PathBuf::from(format!("{root}/README.md"))];
    let mut pages: Vec<_> = std::fs::read_dir(format!("{root}/docs/src"))
        .expect("docs/src")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    assert!(pages.len() >= 10, "the guide's pages: {pages:?}");
    paths.extend(pages);
    let mut documents: Vec<(String, String)> = paths
        .iter()
        .map(|path| {
            (
                path.display().to_string(),
                std::fs::read_to_string(path).unwrap(),
            )
        })
        .collect();
    let help = Command::new(RTRUN).arg("--help").output().unwrap();
    documents.push((
        "rtrun --help".into(),
        String::from_utf8_lossy(&help.stdout).into_owned(),
    ));
    let mut faults = 0;
    for (source, text) in &documents {
        for line in text.lines() {
            let examples_line = ["heat", "bag_of_tasks"].iter().any(|p| line.contains(p));
            for word in line.split_whitespace() {
                let word = word
                    .trim_start_matches(['`', '\'', '"', '('])
                    .trim_end_matches(['`', '\'', '"', ')', ',', ';', '.', ':']);
                if MALFORMED.contains(&word) {
                    assert!(word.parse::<FaultPlan>().is_err(), "{source}: {word}");
                    continue;
                }
                // A simulation's replay token, `SEED/PLAN[/suspicions:N]`: its plan is checked.
                let word = match word.split_once('/') {
                    Some((seed, token)) if seed.bytes().all(|b| b.is_ascii_digit()) => {
                        token.split('/').next().unwrap_or("")
                    }
                    _ => word,
                };
                if word.starts_with(|c: char| c.is_ascii_digit()) && word.contains('@') {
                    faults += 1;
                    if let Err(e) = word.parse::<FaultPlan>() {
                        panic!("{source}: `{word}` in {line:?}: {e}");
                    }
                    if examples_line && !word.contains("0.") {
                        if let Err(e) = FaultPlan::parse_with(word, BareNumber::Iteration) {
                            panic!("{source}: `{word}` in {line:?}: {e}");
                        }
                    }
                }
                if let Some((name, value)) = word.split_once('=') {
                    let placeholder = value.contains('|')
                        || value
                            .as_bytes()
                            .windows(2)
                            .any(|w| w.iter().all(u8::is_ascii_uppercase));
                    if name.starts_with("RT_") && !placeholder && !value.is_empty() {
                        if let Err(e) = runthrough::settings::check(name, value) {
                            panic!("{source}: {line:?}: {e}");
                        }
                    }
                }
            }
        }
    }
    assert!(faults >= 20, "found only {faults} fault examples");
}

/// The exit status table as a user meets it, with programs that end as the rows say: a rank
/// that dies of a signal rtrun did not send while the others exit 0 (0; 1 with
/// `--strict-deaths`), a rank that exits non-zero by itself (its status), every rank dying (1).
#[test]
fn rtrun_exits_as_its_table_says() {
    let dies = r#"if [ "$RT_RANK" = 1 ]; then kill -KILL $$; fi; exit 0"#;
    let output = rtrun(&["-n", "3", "/bin/sh", "-c", dies], &[]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{message}");
    assert!(
        message.contains("rank 1: killed by signal 9 (SIGKILL)"),
        "{message}"
    );
    let output = rtrun(&["-n", "3", "--strict-deaths", "/bin/sh", "-c", dies], &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let exits = r#"if [ "$RT_RANK" = 2 ]; then exit 7; fi; exit 0"#;
    let output = rtrun(&["-n", "3", "/bin/sh", "-c", exits], &[]);
    assert_eq!(output.status.code(), Some(7), "{}", stderr(&output));
    let output = rtrun(&["-n", "2", "/bin/sh", "-c", "kill -KILL $$"], &[]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let help = Command::new(RTRUN).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains(rtrun::EXIT_STATUS_TABLE), "{help}");
}

/// `--timeout`: the job is stopped and rtrun exits 124.
#[test]
fn a_job_stopped_at_its_timeout_exits_124() {
    let output = rtrun(&["-n", "1", "--timeout", "0.2", "/bin/sleep", "30"], &[]);
    assert_eq!(output.status.code(), Some(124), "{}", stderr(&output));
}

/// A rank that another launcher started (Hydra, srun, or none) refuses a bad setting too:
/// `runthrough::init()` returns `InitError::BadSetting` naming the variable and the value
/// before it talks to anyone (rtrun-check prints it and exits 2), never a run of size 0.
#[test]
fn a_rank_refuses_bad_settings_at_init_whoever_started_it() {
    const CHECK: &str = env!("CARGO_BIN_EXE_rtrun-check");
    for (name, value, want) in [
        ("RT_UNEXPECTED_CAP", "0", "at least 1 byte"),
        ("RT_UNEXPECTED_CAP", "abc", "a number of bytes"),
        ("RT_HEARTBEAT", "garbage", "PERIOD_MS:TIMEOUT_MS"),
        (
            "RT_FAULT",
            "frobnicate:3",
            "unknown fault point `frobnicate`",
        ),
        ("RT_FAULT", "call:0", "count from 1"),
        ("RT_PMI", "3", "PMI-1"),
        ("RT_VERBOSE", "yes", "1 or 0"),
    ] {
        let mut command = Command::new(CHECK);
        command.arg("ring");
        for (other, _) in std::env::vars().filter(|(n, _)| n.starts_with("RT_")) {
            command.env_remove(other);
        }
        // As if a launcher had started it: its rank variables are set, the setting is bad.
        let output = command
            .env("RT_RANK", "0")
            .env("RT_SIZE", "2")
            .env("RT_CONTROL", "127.0.0.1:9")
            .env("RT_SECRET", "00".repeat(32))
            .env(name, value)
            .output()
            .unwrap();
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{name}={value}: {message}");
        assert!(
            message.contains(&format!("{name}={value:?}")) && message.contains(want),
            "{name}={value}: {message}"
        );
    }
}

/// A job larger than the host's process and thread limits allow (issue 14: `-n 100000` used to
/// panic in rtrun after some ranks had started): exit 2, the limit named with how many ranks
/// fit, no rank started.
#[test]
fn a_job_beyond_the_hosts_limits_is_refused_before_anything_starts() {
    let dir = scratch("limits");
    let marker = dir.join("ran");
    let mut args = vec!["-n", "100000"];
    let program = marker_program(&marker);
    args.extend(program.iter().map(String::as_str));
    let output = rtrun(&args, &[]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(message.contains("-n 100000"), "{message}");
    assert!(message.contains("ranks fit"), "{message}");
    assert!(
        message.contains("kernel.") || message.contains("RLIMIT_"),
        "names the limit: {message}"
    );
    assert!(!marker.exists(), "a rank ran");
    let _ = std::fs::remove_dir_all(&dir);
}

/// mpirun's `-x VAR[=VALUE]` and `-wdir DIR` (issue 14 item 3): the ranks get the variables
/// and start in DIR; a relative program path is still found from rtrun's directory; an unset
/// `-x VAR` or a missing directory is refused before anything starts.
#[test]
fn x_exports_variables_and_wdir_sets_the_ranks_directory() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("wdir");
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let program = dir.join("show.sh");
    std::fs::write(&program, "#!/bin/sh\necho \"$RT_TEST_X $RT_TEST_Y $PWD\"\n").unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let work_text = work.display().to_string();
    let output = Command::new(RTRUN)
        .current_dir(&dir)
        .env("RT_TEST_Y", "inherited")
        .args(["-np", "2", "-x", "RT_TEST_X=set", "-x", "RT_TEST_Y"])
        .args(["-wdir", &work_text, "./show.sh"])
        .output()
        .unwrap();
    let (stdout, message) = (String::from_utf8_lossy(&output.stdout), stderr(&output));
    assert_eq!(output.status.code(), Some(0), "{message}");
    let expected = format!("set inherited {work_text}");
    assert_eq!(stdout.matches(&expected).count(), 2, "{stdout}{message}");

    let marker = dir.join("ran");
    let program = marker_program(&marker);
    for (options, says) in [
        (
            vec!["-x", "RT_TEST_SURELY_UNSET"],
            "RT_TEST_SURELY_UNSET is not set",
        ),
        (vec!["-x", "=3"], "expected VAR or VAR=VALUE"),
        (
            vec!["--wdir", "/surely/not/here"],
            "/surely/not/here: not a directory",
        ),
    ] {
        let mut args = vec!["-n", "2"];
        args.extend(options.iter().copied());
        args.extend(program.iter().map(String::as_str));
        let output = rtrun(&args, &[]);
        let message = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{options:?}: {message}");
        assert!(message.contains(says), "{options:?}: {message}");
        assert!(!marker.exists(), "{options:?}: a rank ran");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--output-filename DIR` (issue 14 item 3): each rank's lines in `DIR/rank.N/stdout` and
/// `stderr`, and still on rtrun's output; bytes that are not UTF-8 and a last line without its
/// newline are forwarded, not dropped. A directory that cannot be made stops rtrun (exit 2)
/// before anything starts.
#[test]
fn output_filename_writes_each_ranks_streams_to_its_files() {
    let dir = scratch("output");
    let out = dir.join("out");
    let out_text = out.display().to_string();
    let script = r#"echo "out $RT_RANK"; echo "err $RT_RANK" >&2; printf 'bad \377 last'"#;
    let output = rtrun(
        &[
            "-n",
            "2",
            "--output-filename",
            &out_text,
            "sh",
            "-c",
            script,
        ],
        &[],
    );
    let (stdout, message) = (String::from_utf8_lossy(&output.stdout), stderr(&output));
    assert_eq!(output.status.code(), Some(0), "{message}");
    for rank in 0..2 {
        let files = out.join(format!("rank.{rank}"));
        let got = std::fs::read_to_string(files.join("stdout")).unwrap();
        assert_eq!(
            got,
            format!("out {rank}\nbad \u{FFFD} last\n"),
            "rank {rank}"
        );
        let got = std::fs::read_to_string(files.join("stderr")).unwrap();
        assert_eq!(got, format!("err {rank}\n"), "rank {rank}");
        assert!(stdout.contains(&format!("out {rank}")), "{stdout}");
    }
    assert_eq!(stdout.matches("bad \u{FFFD} last").count(), 2, "{stdout}");

    let blocked = dir.join("a-file");
    std::fs::write(&blocked, "").unwrap();
    let under_a_file = blocked.join("out").display().to_string();
    let marker = dir.join("ran");
    let program = marker_program(&marker);
    let mut args = vec!["-n", "2", "--output-filename", &under_a_file];
    args.extend(program.iter().map(String::as_str));
    let output = rtrun(&args, &[]);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(message.contains("--output-filename"), "{message}");
    assert!(!marker.exists(), "a rank ran");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The CPUs this process may run on, from /proc (`Cpus_allowed_list: 0-1,4`).
fn allowed_cpus(status: &str) -> Vec<usize> {
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list")
        .trim();
    list.split(',')
        .flat_map(|part| match part.split_once('-') {
            Some((a, b)) => (a.parse().unwrap()..=b.parse().unwrap()).collect::<Vec<usize>>(),
            None => vec![part.parse().unwrap()],
        })
        .collect()
}

/// Each rank's `Cpus_allowed_list` from a job of `ranks` with `options`, and rtrun's stderr.
fn bindings_of(ranks: usize, options: &[&str]) -> (Vec<Vec<usize>>, String) {
    let show = "grep Cpus_allowed_list /proc/self/status";
    let n = ranks.to_string();
    let mut args = vec!["-n", &n, "--tag-output", "--report-bindings"];
    args.extend(options);
    args.extend(["sh", "-c", show]);
    let output = rtrun(&args, &[]);
    let (stdout, message) = (String::from_utf8_lossy(&output.stdout), stderr(&output));
    assert_eq!(output.status.code(), Some(0), "{message}");
    let cpus = (0..ranks)
        .map(|rank| {
            let line = stdout
                .lines()
                .find_map(|l| l.strip_prefix(&format!("[{rank}] ")))
                .unwrap_or_else(|| panic!("rank {rank}: {stdout}"));
            allowed_cpus(line)
        })
        .collect();
    (cpus, message)
}

/// Binding (issue 38 item 4): by default rank r runs on the r-th CPU rtrun may use while the
/// ranks do not outnumber those CPUs, and every rank keeps all of them when they do;
/// `--bind-to core` binds round-robin whatever the count; `--bind-to none` leaves every rank
/// every CPU; `--report-bindings` says which. Anything else is refused.
#[test]
fn ranks_are_bound_to_cores_by_default_while_they_fit() {
    let mine = allowed_cpus(&std::fs::read_to_string("/proc/self/status").unwrap());
    let bound = |cpus: &[Vec<usize>], message: &str| {
        for (rank, got) in cpus.iter().enumerate() {
            let cpu = mine[rank % mine.len()];
            assert_eq!(got, &vec![cpu], "rank {rank}: {cpus:?}");
            assert!(
                message.contains(&format!("rtrun: rank {rank} bound to CPU {cpu}")),
                "{message}"
            );
        }
    };
    let unbound = |cpus: &[Vec<usize>], message: &str, why: &str| {
        for (rank, got) in cpus.iter().enumerate() {
            assert_eq!(got, &mine, "rank {rank} unbound: {cpus:?}");
            assert!(
                message.contains(&format!("rtrun: rank {rank} not bound ({why}")),
                "{message}"
            );
        }
    };
    // The default, as many ranks as CPUs: one each.
    let (cpus, message) = bindings_of(mine.len(), &[]);
    bound(&cpus, &message);
    // The default, one rank more than the CPUs: nobody bound.
    let (cpus, message) = bindings_of(mine.len() + 1, &[]);
    unbound(
        &cpus,
        &message,
        &format!("{} ranks on {} CPUs", mine.len() + 1, mine.len()),
    );
    // --bind-to core: round-robin even then.
    let (cpus, message) = bindings_of(mine.len() + 1, &["--bind-to", "core"]);
    bound(&cpus, &message);
    // --bind-to none: nobody bound, even when they would fit.
    let (cpus, message) = bindings_of(mine.len(), &["--bind-to", "none"]);
    unbound(&cpus, &message, "--bind-to none");
    let output = rtrun(&["-n", "2", "--bind-to", "socket", "true"], &[]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
}
