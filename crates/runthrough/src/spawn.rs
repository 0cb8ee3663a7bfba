// SPDX-License-Identifier: MIT OR Apache-2.0
//! Starting new ranks while a job runs (`MPI_Comm_spawn`), the intercommunicator between the
//! parents and the ranks they started, and non-shrinking recovery: replacing dead ranks so that
//! a communicator keeps its size and its numbering (docs/src/semantics.md §8).
//!
//! # Contract
//! - [`Comm::spawn`] is collective over the OK ranks of G and fault-tolerant: every returning
//!   parent gets the same [`InterComm`] or the same error. It embeds one agreement (of the
//!   communicator's main series, as `shrink`), whose flag says whether the new ranks started
//!   and whether the joining communicator's context id is free at every parent.
//! - When the agreement decides "error" (a parent died before contributing, the ranks could not
//!   be started), the ranks already started are killed before they run any of the program:
//!   in-process, their threads end without calling the job's function, reported as killed.
//! - A spawned rank is a new rank with a new world rank (the job's size and up, in spawn order),
//!   never a dead rank come back (docs/src/semantics.md §1). Its world communicator holds the ranks
//!   of its spawn; [`Comm::parent`] leads to its parents. It sees its parents fail as any peer.
//! - A spawn on a revoked communicator works (as `shrink` does), so a recovery can spawn before
//!   it has a communicator that is not revoked.
//! - In-process, a spawned rank runs the job's own function (as an MPI program spawns its own
//!   executable and asks `MPI_Comm_get_parent` which side it is on), on a thread of its own, up
//!   to the job's universe size (`LocalUniverse::universe_size`, twice the job's size unless
//!   set). Under rtrun, a new process of the job's program (`super::transport::socket`'s
//!   spawn, `rtrun --universe-size`). Ranks started by PMI launchers (Hydra, Slurm) and
//!   simulated ranks cannot spawn: there `spawn` returns `Error::Spawn` at every parent.
//!
//! # How
//! The parents and the new ranks share one intracommunicator, the *joining* communicator: the
//! spawning communicator's members first, in their order, then the new ranks. Its context id is
//! derived at every parent from the spawning communicator's and the number of the agreement the
//! spawn runs (no message), and checked free there. The first parent to ask the transport
//! starts the ranks with the joining communicator already installed; the other parents find
//! them started. After the agreement, each parent installs the joining communicator and opens
//! the new ranks' start gate, or has them killed. An [`InterComm`] is a view of the joining
//! communicator with local and remote groups; `merge` is a split of it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytemuck::Pod;
use runthrough_core::engine::{Agreed, AgreementCall, Plan};
use runthrough_core::packet::{ContextId, Outgoing};
use runthrough_core::{Error, FailureView, Rank, Result, WorldRank};

use crate::comm::{Comm, Source, Status, Tag};
use crate::endpoint::Members;
use crate::group::Group;
use crate::transport::{Programs, SpawnKey, SpawnRequest};
pub use runthrough_net::launch::SpawnProgram;

/// The first argument [`Comm::respawn`] gives the ranks it starts; [`InterComm::join_respawn`]
/// looks for it.
pub const RESPAWN_ARG: &str = "--runthrough-respawn";

/// How a spawned rank reaches its parents: the joining communicator and where it stands in it.
#[derive(Debug, Clone)]
pub(crate) struct ParentLink {
    /// The joining communicator's context id.
    pub(crate) context: ContextId,
    /// How many members the spawning communicator had (the first ranks of the joining one).
    pub(crate) parents: u32,
    /// This rank's number among the spawned ranks (and in its world communicator).
    pub(crate) rank: Rank,
    /// How many ranks the spawn started.
    pub(crate) count: u32,
    /// What the parents passed ([`InterComm::args`]).
    pub(crate) args: Arc<[String]>,
    /// Set by [`InterComm::disconnect`]: [`Comm::parent`] says `None` afterwards.
    pub(crate) disconnected: Arc<AtomicBool>,
}

/// The engine of spawned rank `me`, one of `children` (world ranks, in order) that `parents`
/// started with joining context `context`: its world communicator is `children`, and the
/// joining communicator (parents first, then children) is installed before it runs. Its
/// agreements begin with the first round as its parents' do (`first_round`).
pub(crate) fn spawned_engine(
    me: WorldRank,
    parents: &[WorldRank],
    children: &[WorldRank],
    context: ContextId,
    job_size: u32,
    cap: Option<usize>,
    first_round: bool,
) -> crate::endpoint::Engine {
    let mut engine = crate::endpoint::Engine::spawned(me, children.to_vec(), job_size);
    engine.set_agreement_first_round(first_round);
    if let Some(cap) = cap {
        engine.set_unexpected_cap(cap, job_size);
    }
    let bridge: Vec<WorldRank> = parents.iter().chain(children).copied().collect();
    let plan = Plan {
        members: Members::list(bridge.clone()),
        global: FailureView::empty(bridge.len() as u32),
        color: 0,
    };
    let mut nothing = Outgoing::new(); // a new engine has no early traffic to answer
    engine.install_plan(context, plan, me, &mut nothing);
    engine
}

/// An intercommunicator: two disjoint groups of ranks, each rank talking to the *other* group
/// (MPI-4.0 §7.6). [`Comm::spawn`] gives the parents one whose remote group is the ranks they
/// started; [`Comm::parent`] gives a spawned rank the one whose remote group is its parents.
///
/// Point-to-point ranks are remote ranks; `rank` and `size` are the local group's. Failures of
/// the other group show up as for any peer: a receive from a dead remote rank fails with
/// `Error::ProcFailed` naming it in the remote numbering.
#[derive(Debug)]
pub struct InterComm {
    /// The joining communicator. Dropping the parents' handle frees it; a spawned rank's is
    /// freed only by [`InterComm::disconnect`] (`Comm`'s release knows its parent link), so
    /// that every [`Comm::parent`] handle is the same intercommunicator.
    joined: Comm,
    local_start: u32,
    local_size: u32,
    remote_start: u32,
    remote_size: u32,
    args: Arc<[String]>,
    disconnected: Arc<AtomicBool>,
}

impl Comm {
    /// Starts `count` new ranks (`MPI_Comm_spawn`) and returns the intercommunicator to them.
    /// Collective over the OK ranks of G and fault-tolerant: every returning parent gets the
    /// same intercommunicator or the same error; when it is an error, no new rank runs.
    /// `args` reach the new ranks ([`InterComm::args`]).
    ///
    /// In-process, each new rank is a thread running the job's own function with a world
    /// communicator of the new ranks; it finds its parents with [`Comm::parent`]:
    ///
    /// ```
    /// // Room for three more ranks than the job starts with (twice its size by default).
    /// let outcomes = runthrough::local(2).universe_size(5).run(|world| {
    ///     if let Some(parents) = world.parent() {
    ///         // A spawned rank: send its number to parent 0.
    ///         parents.send(&[world.rank()], 0, 7)?;
    ///         return Ok(None);
    ///     }
    ///     let children = world.spawn(3, &[])?;
    ///     let mut got = Vec::new();
    ///     if world.rank() == 0 {
    ///         for _ in 0..children.remote_size() {
    ///             let mut n = [0u32];
    ///             children.recv(&mut n, runthrough::Source::Any, 7)?;
    ///             got.push(n[0]);
    ///         }
    ///         got.sort();
    ///     }
    ///     Ok::<_, runthrough::Error>(Some(got))
    /// });
    /// assert_eq!(outcomes.len(), 5); // the two first ranks, then the three spawned ones
    /// let first = outcomes.into_iter().next().unwrap();
    /// assert_eq!(first.returned(), Some(Ok(Some(vec![0, 1, 2]))));
    /// ```
    ///
    /// # Errors
    /// - `Error::Argument` for a count of 0 (before anything is sent).
    /// - `Error::Spawn` at every parent when the ranks could not be started: the transport
    ///   cannot start ranks (ranks started by `init`, simulated ones), the job's universe is
    ///   full, a thread could not be created.
    /// - `Error::ProcFailed` at every parent when a participant failed before contributing to
    ///   the spawn's agreement.
    /// - `Error::ConcurrentCollective`, `Error::Comm`.
    pub fn spawn(&self, count: u32, args: &[&str]) -> Result<InterComm> {
        self.process.enter()?;
        if count == 0 {
            return Err(Error::Argument {
                reason: "a spawn starts at least one rank".into(),
            });
        }
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        self.spawn_what(count, args, Programs::Job, None)
    }

    /// Starts processes of other programs (`MPI_Comm_spawn`, `MPI_Comm_spawn_multiple`): under
    /// rtrun, `count` processes of each program, with its arguments and working directory. The
    /// programs are significant at rank `root` only. Collective and fault-tolerant as
    /// [`Comm::spawn`]; the new ranks' world communicator holds them all, in the order of the
    /// programs, and each finds its program's arguments in [`InterComm::args`] (and on its
    /// command line).
    ///
    /// # Errors
    /// As [`Comm::spawn`]; `Error::Argument` at the root for no program, a count of 0 or an
    /// empty `argv` (the other parents get `Error::Spawn`), `Error::Rank` at every parent for
    /// a `root` outside the communicator, `Error::Spawn` where ranks cannot start programs
    /// (in-process, simulated, under PMI launchers) or when the root died before it asked.
    pub fn spawn_programs(&self, programs: &[SpawnProgram], root: Rank) -> Result<InterComm> {
        self.process.enter()?;
        let members = self.process.endpoint.lock().members_of(self.context);
        let Some(&root_world) = members.get(root as usize) else {
            return Err(Error::Rank {
                rank: i64::from(root),
                size: self.size,
            });
        };
        if self.rank != root {
            return self.spawn_what(0, Vec::new(), Programs::Root(root_world), None);
        }
        let bad = if programs.is_empty() {
            Some("no program to start")
        } else if programs.iter().any(|p| p.count == 0) {
            Some("a program with a count of 0")
        } else if programs
            .iter()
            .any(|p| p.argv.is_empty() || p.argv[0].is_empty())
        {
            Some("a program without a name")
        } else {
            None
        };
        let count = programs.iter().map(|p| p.count).sum();
        match bad {
            // The others wait for this rank's request: it goes, empty, and fails the spawn
            // everywhere.
            Some(reason) => self.spawn_what(
                0,
                Vec::new(),
                Programs::Given(Vec::new()),
                Some(Error::Argument {
                    reason: reason.into(),
                }),
            ),
            None => self.spawn_what(count, Vec::new(), Programs::Given(programs.to_vec()), None),
        }
    }

    /// The spawn itself: one agreement, the transport's start, the joining communicator.
    /// `refused`: this rank's own reason to fail it (it still takes part, so that every
    /// parent returns).
    fn spawn_what(
        &self,
        count: u32,
        args: Vec<String>,
        programs: Programs,
        refused: Option<Error>,
    ) -> Result<InterComm> {
        let parents = self.process.endpoint.lock().members_of(self.context);
        // A poller for the whole call: peers that answer this rank's contribution need not
        // wake its progress thread (`crate::transport::socket::shm_lane`).
        let _waiting = self.process.waiting();
        let id = self.start_agreement_call(AgreementCall::Spawn)?;
        // The ranks started under the latest candidate id, and the transport's answer.
        let mut attempt: Option<(SpawnKey, Result<(WorldRank, u32)>)> = None;
        let polled = loop {
            let step = self
                .process
                .wait_for(|engine| match engine.spawn_awaiting(id) {
                    Some(candidate) => Some(Err(candidate)),
                    None => self.poll_agreement_call(engine, id).map(Ok),
                });
            let candidate = match step {
                Ok(polled) => break polled,
                Err(candidate) => candidate,
            };
            // The engine asks for a start under `candidate`: the first call's id, or a new one
            // because the last was taken at some parent (its ranks are stopped).
            if let Some((key, _)) = attempt.take() {
                self.process.transport.spawn_verdict(key, false);
            }
            let request = SpawnRequest {
                key: (candidate, parents[0]),
                count,
                parents: parents.clone(),
                args: args.clone(),
                programs: programs.clone(),
            };
            let started = self.process.transport.spawn(&request);
            let mut out = crate::rank::outgoing();
            let entered = self.process.endpoint.lock().spawn_started(
                id,
                started.as_ref().ok().copied(),
                &mut out,
            );
            self.process.send_all(out);
            if let Err(error) = entered {
                self.process.transport.spawn_verdict(request.key, false);
                return Err(error);
            }
            attempt = Some((request.key, started));
        };
        let outcome = self.deliver_agreed(polled);
        let Some((key, started)) = attempt else {
            return Err(outcome.err().unwrap_or_else(|| Error::Internal {
                reason: "a spawn ended without starting its ranks".into(),
            }));
        };
        let installed = match outcome {
            Ok(Agreed::Created(Some(installed))) => installed,
            Ok(other) => {
                self.process.transport.spawn_verdict(key, false);
                return Err(Error::Internal {
                    reason: format!("spawn's agreement call returned {other:?}"),
                });
            }
            Err(error) => {
                self.process.transport.spawn_verdict(key, false);
                return Err(match error {
                    // No parent started them: this rank's own reason first, else the
                    // transport's answer here.
                    Error::Spawn { .. } => refused.or(started.err()).unwrap_or(error),
                    error => error,
                });
            }
        };
        self.process.transport.spawn_verdict(key, true);
        // The number of new ranks is the transport's answer (`count` counts only at the
        // root of `spawn_programs`).
        let parents = parents.len() as u32;
        let children = installed.size - parents;
        Ok(InterComm {
            joined: self.handle_of(installed),
            local_start: 0,
            local_size: parents,
            remote_start: parents,
            remote_size: children,
            args: Arc::from(args),
            disconnected: Arc::default(),
        })
    }

    /// The intercommunicator to the ranks that spawned this one (`MPI_Comm_get_parent`), or
    /// `None` for a rank the job started, or after [`InterComm::disconnect`]. Every call gives
    /// a handle on the same intercommunicator; dropping one does not free it.
    pub fn parent(&self) -> Option<InterComm> {
        let link = self.process.parent.as_ref()?;
        if link.disconnected.load(Ordering::SeqCst) {
            return None;
        }
        let joined = Comm {
            process: Arc::clone(&self.process),
            context: link.context,
            rank: link.parents + link.rank,
            size: link.parents + link.count,
        };
        Some(InterComm {
            joined,
            local_start: link.parents,
            local_size: link.count,
            remote_start: 0,
            remote_size: link.parents,
            args: Arc::clone(&link.args),
            disconnected: Arc::clone(&link.disconnected),
        })
    }

    /// Non-shrinking recovery in one call, for the ranks that survive: shrinks this
    /// communicator, spawns as many ranks as are missing, and returns a communicator of this
    /// one's size in which every surviving rank keeps its number and each new rank takes a
    /// dead rank's (in order: the lowest new rank the lowest dead number). The new ranks call
    /// [`InterComm::join_respawn`] on their parent to get the same communicator.
    ///
    /// Collective over the OK ranks of G (works on a revoked communicator). A failure during
    /// the recovery (a survivor or a new rank dying) starts it again, with the ranks that are
    /// left, at most once per rank of this communicator. Without a death, it returns a
    /// communicator of this one's ranks in this one's order.
    ///
    /// ```
    /// let outcomes = runthrough::local(4).kill_at_operation(2, 1).run(|world| {
    ///     let comm = match world.parent() {
    ///         Some(parents) => parents.join_respawn()?, // a replacement
    ///         None => match world.barrier() {
    ///             Ok(()) => unreachable!("rank 2 died before the barrier"),
    ///             Err(_) => world.respawn()?,
    ///         },
    ///     };
    ///     let mut sum = [0u32];
    ///     comm.all_reduce(&[comm.rank()], &mut sum, runthrough::Op::Sum)?;
    ///     Ok::<_, runthrough::Error>((comm.rank(), comm.size(), sum[0]))
    /// });
    /// assert!(outcomes[2].is_killed());
    /// let replacement = outcomes.into_iter().nth(4).unwrap().returned().unwrap().unwrap();
    /// assert_eq!(replacement, (2, 4, 6)); // the new rank is number 2 of 4
    /// ```
    ///
    /// # Errors
    /// `Error::Spawn` when the new ranks cannot be started (the job can go on with
    /// [`Comm::shrink`]); the errors of `shrink`; the last failure's error when every attempt
    /// met one.
    pub fn respawn(&self) -> Result<Comm> {
        let mut last = Error::Internal {
            reason: "no recovery attempt was made".into(),
        };
        for _ in 0..=self.size {
            let shrunk = self.shrink()?;
            let survivors = shrunk.group();
            let all = self.group();
            let dead: Vec<Rank> = (0..self.size)
                .filter(|&r| {
                    survivors
                        .rank_of_world(all.world_ranks()[r as usize])
                        .is_none()
                })
                .collect();
            if dead.is_empty() {
                return Ok(shrunk);
            }
            let numbers = dead
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(",");
            let attempt = shrunk
                .spawn(dead.len() as u32, &[RESPAWN_ARG, &numbers])
                .and_then(|children| children.joined.split(Some(0), self.rank as i32));
            match attempt {
                Ok(Some(comm)) => return Ok(comm),
                Ok(None) => {
                    return Err(Error::Internal {
                        reason: "a survivor is not in the recovered communicator".into(),
                    })
                }
                Err(error) if error.is_failure() || error == Error::Revoked => last = error,
                Err(error) => return Err(error),
            }
        }
        Err(last)
    }
}

impl InterComm {
    /// This rank's number in its own group.
    pub fn rank(&self) -> Rank {
        self.joined.rank - self.local_start
    }

    /// The size of this rank's own group (`MPI_Comm_size` on an intercommunicator).
    pub fn size(&self) -> u32 {
        self.local_size
    }

    /// The size of the other group (`MPI_Comm_remote_size`).
    pub fn remote_size(&self) -> u32 {
        self.remote_size
    }

    /// What the parents passed to [`Comm::spawn`].
    pub fn args(&self) -> &[String] {
        &self.args
    }

    /// The processes of this rank's own group, in its order (`MPI_Comm_group`).
    pub fn group(&self) -> Group {
        self.part(self.local_start, self.local_size)
    }

    /// The processes of the other group, in its order (`MPI_Comm_remote_group`).
    pub fn remote_group(&self) -> Group {
        self.part(self.remote_start, self.remote_size)
    }

    fn part(&self, start: u32, size: u32) -> Group {
        let all = self.joined.group();
        let members = all.world_ranks()[start as usize..(start + size) as usize].to_vec();
        Group::new(members, self.joined.process.world_rank().0)
    }

    /// Sends `buf` to rank `dest` of the other group, as [`Comm::send`].
    ///
    /// # Errors
    /// Those of [`Comm::send`]; `Error::Rank` for a rank outside the other group.
    pub fn send<T: Pod>(&self, buf: &[T], dest: Rank, tag: i32) -> Result<()> {
        if dest >= self.remote_size {
            return Err(Error::Rank {
                rank: dest.into(),
                size: self.remote_size,
            });
        }
        self.joined
            .send(buf, self.remote_start + dest, tag)
            .map_err(|e| self.remote_error(e))
    }

    /// Receives into `buf` from rank `source` of the other group (or any), as [`Comm::recv`];
    /// the status names the sender in the other group's numbering.
    ///
    /// # Errors
    /// Those of [`Comm::recv`]; `Error::Rank` for a rank outside the other group.
    pub fn recv<T: Pod>(
        &self,
        buf: &mut [T],
        source: impl Into<Source>,
        tag: impl Into<Tag>,
    ) -> Result<Status> {
        let source = match source.into() {
            Source::Any => Source::Any,
            Source::Rank(r) if r < self.remote_size => Source::Rank(self.remote_start + r),
            Source::Rank(r) => {
                return Err(Error::Rank {
                    rank: r.into(),
                    size: self.remote_size,
                })
            }
        };
        let mut status = self
            .joined
            .recv(buf, source, tag)
            .map_err(|e| self.remote_error(e))?;
        status.source = status.source.map(|s| s - self.remote_start);
        Ok(status)
    }

    /// An error of the joining communicator as the other group numbers its ranks.
    fn remote_error(&self, error: Error) -> Error {
        match error {
            Error::ProcFailed { rank }
                if (self.remote_start..self.remote_start + self.remote_size).contains(&rank) =>
            {
                Error::ProcFailed {
                    rank: rank - self.remote_start,
                }
            }
            other => other,
        }
    }

    /// An intracommunicator of both groups (`MPI_Intercomm_merge`): the group whose ranks pass
    /// `high = false` first, each group in its order (the parents first when both pass the
    /// same). Collective over both groups, fault-tolerant as [`Comm::split`]: every returning
    /// rank gets the same communicator or the same error.
    ///
    /// # Errors
    /// Those of [`Comm::split`].
    pub fn merge(&self, high: bool) -> Result<Comm> {
        let key = if high { self.joined.size as i32 } else { 0 } + self.joined.rank as i32;
        self.joined
            .split(Some(0), key)?
            .ok_or_else(|| Error::Internal {
                reason: "a rank is not in its merged communicator".into(),
            })
    }

    /// For a rank started by [`Comm::respawn`]: the recovered communicator, in which this rank
    /// takes the number of a dead rank. Collective with the survivors' `respawn`.
    ///
    /// # Errors
    /// `Error::Argument` for a rank that `respawn` did not start; those of [`Comm::split`] (a
    /// failure during the recovery: the survivors then start the recovery again with new
    /// ranks, and this one should end).
    pub fn join_respawn(&self) -> Result<Comm> {
        let not_respawned = || Error::Argument {
            reason: "this rank was not started by Comm::respawn".into(),
        };
        let [marker, numbers] = &self.args[..] else {
            return Err(not_respawned());
        };
        if marker != RESPAWN_ARG {
            return Err(not_respawned());
        }
        let dead: Vec<Rank> = numbers
            .split(',')
            .map(str::parse)
            .collect::<std::result::Result<_, _>>()
            .map_err(|_| not_respawned())?;
        let number = *dead.get(self.rank() as usize).ok_or_else(not_respawned)?;
        self.joined
            .split(Some(0), number as i32)?
            .ok_or_else(|| Error::Internal {
                reason: "a new rank is not in the recovered communicator".into(),
            })
    }

    /// Disconnects (`MPI_Comm_disconnect`): collective over both groups, it waits until every
    /// live member disconnects, so that no rank finalizes and exits while the other group
    /// still communicates with it; then frees the intercommunicator. The wait is a
    /// `validate_global` over the joining communicator (fault-tolerant and uniform: a member
    /// that exits as soon as it decided makes nobody fail, a dead member keeps nobody
    /// waiting). A spawned rank's [`Comm::parent`] says `None` afterwards.
    ///
    /// # Errors
    /// `Error::Revoked` on a revoked communicator (freed all the same).
    pub fn disconnect(self) -> Result<()> {
        let waited = self.joined.validate_global().map(drop);
        self.disconnected.store(true, Ordering::SeqCst);
        drop(self); // frees the joining communicator, now that it is disconnected
        waited
    }

    /// Whether `context` is the joining communicator of `link` that is not disconnected: its
    /// handles do not free it when dropped.
    pub(crate) fn kept(link: Option<&ParentLink>, context: ContextId) -> bool {
        link.is_some_and(|l| l.context == context && !l.disconnected.load(Ordering::SeqCst))
    }
}
