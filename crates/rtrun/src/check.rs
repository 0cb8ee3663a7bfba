// SPDX-License-Identifier: MIT OR Apache-2.0
//! Everything about a job checked before anything starts: its size, its faults, the `RT_*`
//! settings its ranks get, its program and wrappers.

use std::ffi::{OsStr, OsString};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use runthrough::fault::{FaultPlan, InjectedBy};
use runthrough::settings::{self, Setting};

use crate::Job;

/// Checks `job` before it starts. Returns warnings (an `RT_*` variable that is no setting,
/// likely a typo; one rtrun replaces), or the one error that keeps the job from starting,
/// naming the offending text: a size of 0, a fault of a rank outside the job or at a step of
/// the application's, a stop of a rank outside the job, a refused `RT_*` setting (from rtrun's
/// environment or [`Job::env`]), a `--bind` or `RT_BIND` that names no address here, a program
/// or wrapper that is not found or not executable.
///
/// # Errors
/// The message, without the `rtrun: ` prefix.
pub fn check(job: &Job) -> Result<Vec<String>, String> {
    if job.size == 0 {
        return Err("-n: a job has at least 1 rank".into());
    }
    if let Some(universe) = job.universe_size.filter(|&u| u < job.size) {
        return Err(format!(
            "--universe-size {universe}: the universe holds the job's {} ranks at least",
            job.size
        ));
    }
    let plan: FaultPlan = job.kills.iter().copied().collect();
    // A kill may name a rank that a spawn will start (from -n up to the universe), at a point
    // of its calls: it gets the fault when it starts.
    plan.check_ranks(job.universe())
        .map_err(|e| format!("--kill {e}"))?;
    if let Some(fault) = plan
        .faults()
        .iter()
        .find(|f| f.rank >= job.size && matches!(f.trigger, runthrough::Trigger::After(_)))
    {
        return Err(format!(
            "--kill `{fault}`: rank {} is started by a spawn, if ever: kill it at a point of \
             its calls (call:K, validate_global:K, ...), not at a time",
            fault.rank
        ));
    }
    if let Some(fault) = plan
        .faults()
        .iter()
        .find(|f| f.trigger.injected_by() == InjectedBy::Application)
    {
        return Err(format!(
            "--kill `{fault}`: a step of the application's: give it to the program's own \
             --kill, if it has one (heat and bag_of_tasks do)"
        ));
    }
    if let Some((rank, _)) = job.stops.iter().find(|(rank, _)| *rank >= job.size) {
        return Err(format!(
            "--stop: rank {rank} is not in a job of {} ranks (ranks 0..={})",
            job.size,
            job.size - 1
        ));
    }
    let warnings = check_environment(job)?;
    if let Some(bind) = &job.bind {
        check_bind(bind, job).map_err(|e| format!("--bind {bind:?}: {e}"))?;
    }
    for wrapper in job.wrappers.values() {
        find_program(&wrapper[0]).map_err(|e| format!("--wrap: {e}"))?;
    }
    if let Some(dir) = &job.working_dir {
        if !dir.is_dir() {
            return Err(format!("--wdir {}: not a directory", dir.display()));
        }
    }
    find_program(job.program.as_os_str())?;
    Ok(warnings)
}

/// The `RT_*` variables the ranks get: rtrun's own environment, then [`Job::env`] over it.
fn rank_environment(job: &Job) -> Vec<(OsString, OsString)> {
    let mut variables: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, _)| name.to_string_lossy().starts_with("RT_"))
        .collect();
    for (name, value) in &job.env {
        variables.retain(|(n, _)| n != OsStr::new(name));
        variables.push((name.into(), value.into()));
    }
    variables
}

fn check_environment(job: &Job) -> Result<Vec<String>, String> {
    let mut warnings = Vec::new();
    for (name, value) in rank_environment(job) {
        let name = name.to_string_lossy().into_owned();
        if !name.starts_with("RT_") {
            continue;
        }
        let Some(value) = value.to_str() else {
            return Err(format!("{name}: its value is not UTF-8"));
        };
        match settings::lookup(&name) {
            None => {
                let known: Vec<&str> = Setting::ALL
                    .iter()
                    .filter(|s| !s.set_by_launcher())
                    .map(|s| s.name())
                    .collect();
                warnings.push(format!(
                    "{name} is not a runthrough setting (a typo?); the settings are {}",
                    known.join(", ")
                ));
            }
            Some(setting) if setting.set_by_launcher() => warnings.push(format!(
                "{name} is set by rtrun for each rank: the value {value:?} is replaced"
            )),
            Some(Setting::Fault) => {
                settings::check(&name, value).map_err(|e| e.to_string())?;
                warnings.push(format!(
                    "{name}={value:?} applies to every rank that --kill does not name \
                     (--kill RANK@WHEN names one)"
                ));
            }
            Some(Setting::Bind) if job.bind.is_none() => {
                check_bind(value, job).map_err(|e| format!("{name}={value:?}: {e}"))?;
            }
            Some(_) => settings::check(&name, value).map_err(|e| e.to_string())?,
        }
    }
    Ok(warnings)
}

/// `--bind` or `RT_BIND`: its syntax, and the address it names here, unless ranks run under
/// wrappers (another network namespace may have interfaces this one has not).
fn check_bind(spec: &str, job: &Job) -> Result<(), String> {
    settings::bind(spec).map_err(|e| e.reason)?;
    match runthrough_net::bind_address(spec) {
        Ok(_) => Ok(()),
        Err(_) if !job.wrappers.is_empty() => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// Finds `program` as Open MPI's `mpirun` does: a name with a `/` as it is, any other on
/// `PATH`, else in the current directory.
///
/// # Errors
/// A message naming the program: not found (on `PATH` or in the current directory), not a
/// file, or not executable.
pub fn find_program(program: &OsStr) -> Result<PathBuf, String> {
    let shown = program.to_string_lossy();
    if program.is_empty() {
        return Err("no program to run".into());
    }
    if shown.contains('/') {
        let path = Path::new(program);
        return match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(format!("{shown}: no such file"))
            }
            Err(e) => Err(format!("{shown}: {e}")),
            Ok(m) if !m.is_file() => Err(format!("{shown}: not a file")),
            Ok(m) if m.permissions().mode() & 0o111 == 0 => {
                Err(format!("{shown}: not executable (chmod +x?)"))
            }
            Ok(_) => Ok(path.to_path_buf()),
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut not_executable = None;
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(program);
        if let Ok(m) = std::fs::metadata(&candidate) {
            if m.is_file() && m.permissions().mode() & 0o111 != 0 {
                return Ok(candidate);
            }
            if m.is_file() {
                not_executable.get_or_insert(candidate);
            }
        }
    }
    if let Some(candidate) = not_executable {
        return Err(format!(
            "{shown}: {} is not executable",
            candidate.display()
        ));
    }
    if let Some(here) = in_this_directory(program) {
        return Ok(here);
    }
    Err(format!(
        "{shown}: not found on PATH or in the current directory"
    ))
}

/// A program named without `/` that is not on PATH: the executable file of that name in the
/// current directory, as Open MPI's mpirun finds it (build systems' test commands, CMake's
/// among them, name a program built there that way).
pub(crate) fn in_this_directory(program: &OsStr) -> Option<PathBuf> {
    let path = Path::new(program);
    if program.to_string_lossy().contains('/') {
        return None;
    }
    let on_path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|dir| dir.join(program).is_file());
    let m = std::fs::metadata(path).ok()?;
    (!on_path && m.is_file() && m.permissions().mode() & 0o111 != 0)
        .then(|| std::env::current_dir().ok().map(|dir| dir.join(path)))
        .flatten()
}
